"""Use cases: one module per job kind (fix_issue, implement, refuel); the map is handlers.py."""
