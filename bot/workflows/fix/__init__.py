"""The IssueFixer: an issue in, a validated pull request out."""
