"""GitHub port on githubkit: token or App auth, tenacity retries, paced writes, small models."""

from bot.github.auth import AppAuth, InstallationToken, TokenAuth
from bot.github.client import GitHub
from bot.github.failures import AppTokenError
from bot.github.pacing import WritePacer
from bot.models.github import Comment, Issue, PullRequest, Repo

__all__ = [
    "AppAuth",
    "AppTokenError",
    "Comment",
    "GitHub",
    "InstallationToken",
    "Issue",
    "PullRequest",
    "Repo",
    "TokenAuth",
    "WritePacer",
]
