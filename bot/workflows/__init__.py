"""Use cases: one package per job kind and steps/ for what they share; the map is handlers.py."""
