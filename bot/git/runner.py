"""Running one git command for the bot: a hardened allowlisted environment, per-command
credentials, redacted errors (DESIGN §13; see bot.git.harden)."""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from bot.errors import GitError
from bot.git.harden import HARDENED_CONFIG, HARDENED_ENV, ConfigGuard
from bot.secrets import agent_env, redact

log = logging.getLogger("agentbot.git")

BOT_NAME = "agentbot[bot]"
BOT_EMAIL = "agentbot[bot]@users.noreply.github.com"

# Identity per command (never written to config), and no signing prompt from a user's config.
IDENTITY = (
    "-c",
    f"user.name={BOT_NAME}",
    "-c",
    f"user.email={BOT_EMAIL}",
    "-c",
    "commit.gpgsign=false",
)

# Commands that talk to the remote: only these get the token.
NETWORK_COMMANDS = frozenset({"clone", "fetch", "push", "pull", "ls-remote", "remote"})

_GUARD = ConfigGuard()


@dataclass(frozen=True)
class Completed:
    """What one git process returned."""

    returncode: int
    stdout: str
    stderr: str


def split_credentials(url: str) -> tuple[str, str | None]:
    """`url` without user info, and the password it carried (a token in the URL), if any."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return url, None
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host)), parts.password or None


def auth_config(url: str, token: str) -> list[tuple[str, str]]:
    """Config pairs that send `token` to `url` only, for one command's environment."""
    # Scoped to the remote's URL: if repository config rewrites the URL (url.*.insteadOf)
    # or points origin elsewhere, the header no longer matches and is not sent.
    scope = url.rstrip("/")
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return [
        # An empty value resets what other config (actions/checkout's persisted header,
        # a credential helper) would add.
        ("credential.helper", ""),
        (f"http.{scope}.extraheader", ""),
        (f"http.{scope}.extraheader", f"AUTHORIZATION: basic {basic}"),
    ]


def token_secrets(token: str | None) -> list[str]:
    """Every form of `token` that could show up in git's output (register them all)."""
    if not token:
        return []
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return [token, basic]


def child_env(
    config: Sequence[tuple[str, str]] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of one git child: the allowlist, hardened, plus `config` and `extra`."""
    # An allowlist, not ours minus secrets: a variable we do not know (GIT_DIR, GIT_TRACE2_*,
    # GIT_SSH_COMMAND...) can point git elsewhere or make it log the token.
    env = {**agent_env(os.environ), **HARDENED_ENV}
    pairs = [*HARDENED_CONFIG, *config]
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env.update(extra or {})
    return env


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    config: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    operation: str = "",
    check: bool = True,
) -> Completed:
    """Run `git *args` in `cwd`; GitError (redacted) on failure when `check`, or on timeout.

    Planted config is scrubbed first (bot.git.harden), unless the command makes a repository.
    """
    op = operation or subcommand(args)
    args = _outside_submodules(args)
    shown = redact(shlex.join(["git", *args]))
    log.debug("%s  (in %s)", shown, cwd)
    started = time.monotonic()
    child = child_env(config, env)
    if subcommand(args) not in ("clone", "init"):
        for key in _GUARD.ensure_clean(cwd, {**agent_env(os.environ), **HARDENED_ENV}):
            log.info("removed %s from the git config in %s: agentbot never uses it", key, cwd)
    # A session of its own, so a timeout kills helpers too, not just git.
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=child,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise GitError(
            f"`{shown}` timed out after {timeout:g}s", operation=op, recoverable=True
        ) from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    log.debug("git %s exited %d in %.3fs", op, proc.returncode, time.monotonic() - started)
    result = Completed(proc.returncode, out, err)
    if check and proc.returncode != 0:
        raise failure(result, shown=shown, operation=op)
    return result


def failure(
    result: Completed,
    *,
    shown: str,
    operation: str,
    recoverable: bool = True,
    hint: str = "",
) -> GitError:
    """A GitError for a failed command: the command line and the tail of its output, redacted."""
    output = (result.stderr.strip() or result.stdout.strip())[-2000:]
    message = f"`{shown}` failed (exit {result.returncode})"
    if hint:
        message += f": {hint}"
    if output:
        message += f"\n{output}"
    return GitError(redact(message), operation=operation, recoverable=recoverable)


def _outside_submodules(args: Sequence[str]) -> list[str]:
    """`status` and `diff` never look inside a submodule's work tree: its `.git` is the
    checkout's to plant (config, filters, attributes), and git would run it for the bot."""
    name = subcommand(args)
    if name not in ("status", "diff") or any(a.startswith("--ignore-submodules") for a in args):
        return list(args)
    at = list(args).index(name) + 1
    return [*args[:at], "--ignore-submodules=dirty", *args[at:]]


def subcommand(args: Sequence[str]) -> str:
    """The git subcommand in `args`, skipping global options such as `-c key=value`."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-c", "-C"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return "git"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
