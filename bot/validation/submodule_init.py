"""Setup's `git submodule update --init --recursive`, run by the bot's own hardened git.

In the sandbox the checkout's `.git` is read-only (a stage must not plant config or hooks
there), so git could not record the submodules. The bot runs it, as it runs clone and
fetch: its hardened git (no hooks, filters or planted config, `protocol.ext` never), only
http(s) URLs (no `file://`, `ssh` or `git://` a `.gitmodules` could point anywhere), no
credential (a token is scoped to the repository's own URL and is not given here).
"""

from __future__ import annotations

import time
from pathlib import Path

from bot.errors import GitError
from bot.git import runner
from bot.models import CommandResult

SUBMODULES = "git submodule update --init --recursive"
"""The setup step, as the setup row shows it."""
_PROTOCOLS = (
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.http.allow", "always"),
)


def submodule_init(repo: Path, *, timeout: float) -> CommandResult:
    """Initialise the submodules `repo` declares at the commits it records."""
    started = time.monotonic()
    args = SUBMODULES.split()[1:]
    try:
        done = runner.run(args, cwd=repo, timeout=timeout, config=_PROTOCOLS, check=False)
        code, output, timed_out = done.returncode, done.stdout + done.stderr, False
    except GitError as exc:  # a timeout: named, bounded
        code, output, timed_out = 124, str(exc), True
    return CommandResult(
        command=["/bin/sh", "-c", SUBMODULES], exit_code=code, output=output,
        success=code == 0, duration_seconds=round(time.monotonic() - started, 3),
        timed_out=timed_out,
    )  # fmt: skip
