"""GitHub port (placeholder until the GitHub layer lands)."""


class GitHub:
    """GitHub REST client."""
