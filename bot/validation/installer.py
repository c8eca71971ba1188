"""Which installer a Python environment takes: uv (found on PATH, else agentbot's own) or pip.

agentbot's own additions to a repository's venv (coverage.py for /cover) go in with the
installer that made it: a venv uv made has no pip.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
from collections.abc import Mapping

from bot.validation.environment import StageEnv


def find_uv(env: Mapping[str, str], installer: str = "") -> str | None:
    """uv on the stages' PATH, else agentbot's own; None when the installer asked is pip."""
    if installer.lower() == "pip":
        return None
    found = shutil.which("uv", path=env.get("PATH", ""))
    if found:
        return found
    with contextlib.suppress(ImportError, FileNotFoundError):
        import uv

        return str(uv.find_uv_bin())
    return None


def install_into(senv: StageEnv, python: str, packages: list[str]) -> str | None:
    """The command installing `packages` for `python` with the installer that made its venv.

    A venv uv made has no pip (`uv pip install --python …`); one `python -m venv` made has
    (`python -m pip install`). None: no venv of ours, or uv made it and is gone.
    """
    if senv.venv is None:
        return None
    pkgs = " ".join(shlex.quote(p) for p in packages)
    try:
        made_by_uv = "\nuv = " in "\n" + (senv.venv / "pyvenv.cfg").read_text()
    except OSError:
        made_by_uv = False
    if not made_by_uv:
        return f"{shlex.quote(python)} -m pip install -q --disable-pip-version-check {pkgs}"
    uv = find_uv(senv.env)
    return f"{shlex.quote(uv)} pip install -q --python {shlex.quote(python)} {pkgs}" if uv else None
