"""Pure cores of the operator's view: spend caps over time, PR outcomes, figures, charts."""
