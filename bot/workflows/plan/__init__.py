"""The plan job kind: post a plan for approval, or run an approved one (issue #28)."""
