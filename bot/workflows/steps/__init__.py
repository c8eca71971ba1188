"""The steps every job kind shares: flow, agents, validation, proof, progress, check runs, pulls."""
