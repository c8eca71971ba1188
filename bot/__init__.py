"""agentbot: GitHub events in, validated pull requests written by LLM agents out."""

__version__ = "0.1.0"
