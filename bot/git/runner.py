"""Running one git command: a scrubbed child environment, per-command credentials, redaction."""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from bot.errors import GitError

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

# Commands that talk to the remote: only these get the token. Their hooks are switched off,
# because a hook is repository code (an agent can write .git/hooks) and would see the token.
NETWORK_COMMANDS = frozenset({"clone", "fetch", "push", "pull", "ls-remote", "remote"})
NETWORK_OVERRIDES = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "push.gpgSign=false",
    # Repository config is writable by the agent: no `ext::` transport, no unverified TLS.
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "http.sslVerify=true",
    "-c",
    "core.fsmonitor=false",
)

# Local config keys an agent could plant to divert the token (proxy, CA, DNS override, URL
# rewrite, credential helper, includes of other files) or to run code on a network command.
DANGEROUS_CONFIG = re.compile(
    r"^(http\..*|https\..*|url\..*|credential.*|include\..*|includeif\..*|protocol\..*"
    r"|core\.(fsmonitor|hookspath|sshcommand|gitproxy|askpass)|remote\..*\.(proxy|receivepack"
    r"|uploadpack|vcs|pushurl)|pack\..*|uploadpack\..*|transfer\..*|gpg\..*)$",
    re.IGNORECASE,
)

# Hooks run repository code: they inherit no secrets from us.
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# Variables that would point git at another repository, identity, config or tracer.
_GIT_DROP = re.compile(
    r"GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR"
    r"|NAMESPACE|PREFIX|AUTHOR_\w+|COMMITTER_\w+|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+"
    r"|CONFIG_PARAMETERS|ASKPASS|TRACE\w*|CURL_VERBOSE|REDACT_COOKIES|EDITOR|SEQUENCE_EDITOR)"
    r"|SSH_ASKPASS"
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")


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
    """Every form of `token` that could show up in git's output."""
    if not token:
        return []
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return [token, basic]


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret and every URL's user info replaced by `***`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _URL_USERINFO.sub(r"\1***@", text)


def child_env(
    config: Sequence[tuple[str, str]] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of one git child: ours minus secrets, plus `config` and `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not _SECRET_NAME.search(k) and not _GIT_DROP.fullmatch(k)
    }
    # Never wait for a person: no terminal prompt, no askpass window, no editor.
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", GIT_EDITOR="true")
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for i, (key, value) in enumerate(config):
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
    secrets: Sequence[str] = (),
    operation: str = "",
    check: bool = True,
) -> Completed:
    """Run `git *args` in `cwd`; GitError (redacted) on failure when `check`, or on timeout."""
    op = operation or subcommand(args)
    shown = redact(shlex.join(["git", *args]), secrets)
    log.debug("%s  (in %s)", shown, cwd)
    started = time.monotonic()
    # A session of its own, so a timeout kills hooks and helpers too, not just git.
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=child_env(config, env),
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
        raise failure(result, shown=shown, operation=op, secrets=secrets)
    return result


def failure(
    result: Completed,
    *,
    shown: str,
    operation: str,
    secrets: Sequence[str] = (),
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
    return GitError(redact(message, secrets), operation=operation, recoverable=recoverable)


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
