"""The Implementer: a Spec Kit tasks.md worked one validated commit per task."""
