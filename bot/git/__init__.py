"""Workspace layer on the git CLI: clone, branch, commit, push, worktrees, recovery (DESIGN §6).

Credentials: a token is handed to the one git process that talks to the remote, as an
`http.<remote-url>.extraheader` in that child's environment (GIT_CONFIG_COUNT/KEY/VALUE);
it is never in a URL on disk, in .git/config, in argv, in logs or in GitError text. Every
git child runs with an allowlisted environment and ignores what an agent can plant: global
and system config, hooks, fsmonitor, filter drivers, replace objects (bot.git.harden).
Identity: commits are made as BOT_NAME <BOT_EMAIL> via `-c` per command, never written to config.
"""

from bot.git.runner import BOT_EMAIL, BOT_NAME
from bot.git.workspace import Workspace, clone

__all__ = ["BOT_EMAIL", "BOT_NAME", "Workspace", "clone"]
