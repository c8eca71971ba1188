"""The FastAPI edge of the GitHub App: receive, verify, enqueue."""
