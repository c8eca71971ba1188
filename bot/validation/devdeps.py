"""A Python repository's dev and test dependencies, wherever it declares them (pure reads).

Besides the PEP 735 groups, extras and requirement files pyenv.py reads: poetry's
`dev-dependencies` and every non-docs `group.*.dependencies`, PDM's dev groups, hatch's
default and test envs (`dependencies`, `extra-dependencies`, `features`), the installs of
the nox session and tox env the test stage comes from, and the plain `pip install` lines
of the CI workflows that test this repository. Every package of a group, not only the
runner; versions come from the lockfile when there is one (constraints).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot.validation import envs, sources

REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
"""The package name at the start of a requirement line."""

# Requirement files for another purpose than this interpreter's test run.
OTHER_PURPOSE = re.compile(r"doc|rtd|rtfd|oldest|minimum|lowest|min-", re.I)
_HATCH_ENVS = ("default", "test", "tests", "hatch-test", "dev")
_SKIP_GROUPS = ("doc", "docs", "documentation")


def dev_requirements(
    repo: Path, pyproject: dict[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    """(requirements, extras to install the project with, where they were declared)."""
    reqs: list[str] = []
    extras: list[str] = []
    where: list[str] = []
    tool = pyproject.get("tool", {})
    poetry = tool.get("poetry", {})
    tables = [poetry.get("dev-dependencies", {})]
    tables += [
        g.get("dependencies", {})
        for n, g in poetry.get("group", {}).items()
        if n not in _SKIP_GROUPS and isinstance(g, dict)
    ]
    if any(tables):
        where.append("poetry dev groups")
    for table in tables:
        # poetry's constraints (^1.2) are not pip's: the name, pinned by poetry.lock if any.
        reqs += [
            n
            for n, v in table.items()
            if n != "python"
            and not (isinstance(v, dict) and {"path", "git", "url"} & set(v))
            and not _python2_only(v)
        ]
    pdm = tool.get("pdm", {}).get("dev-dependencies", {})
    for name, items in pdm.items() if isinstance(pdm, dict) else []:
        if name not in _SKIP_GROUPS:
            where.append(f"PDM dev group {name}")
            reqs += [str(r) for r in items if isinstance(r, str) and not r.startswith("-")]
    hatch = tool.get("hatch", {}).get("envs", {})
    for name in _HATCH_ENVS:
        env = hatch.get(name, {})
        if isinstance(env, dict) and (env.get("dependencies") or env.get("features")):
            where.append(f"hatch env {name}")
        if isinstance(env, dict):
            reqs += [
                str(r) for r in env.get("dependencies", []) + env.get("extra-dependencies", [])
            ]
            extras += [str(f) for f in env.get("features", [])]
    for spec in (envs.tox(repo).get("test"), envs.nox(repo).get("test")):
        if spec is not None and spec.deps:
            where.append(f"{spec.source} deps")
        for dep in spec.deps if spec is not None else ():
            m = re.fullmatch(r"\.\[([\w,.-]+)\]", dep)
            if m:
                extras += m.group(1).split(",")
            else:
                reqs.append(dep)
    found, ci_extras = ci_pip_installs(repo)
    if found or ci_extras:
        where.append("CI workflow pip install lines")
    return list(dict.fromkeys(reqs + found)), list(dict.fromkeys(extras + ci_extras)), where


def _python2_only(value: object) -> bool:
    """A poetry dependency for Python 2 only (`{python = "~2.7"}`): not for this interpreter."""
    python = str(value.get("python", "")) if isinstance(value, dict) else ""
    return bool(python) and "3" not in python


_OPTIONS_WITH_VALUE = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})


def ci_pip_installs(repo: Path) -> tuple[list[str], list[str]]:
    """What `pip install …` lines of the workflows testing this repo install, and extras of `.`."""
    reqs: list[str] = []
    extras: list[str] = []
    for line in sources.ci_run_lines(repo):
        m = re.search(r"(?:^|\s)(?:uv )?pip3? install\s+(.*)$", line)
        if m is None or "${{" in line or "$" in m.group(1):
            continue
        try:
            words = shlex.split(m.group(1))
        except ValueError:
            continue
        i = 0
        while i < len(words):
            word = words[i]
            if word in ("-r", "--requirement", "-c", "--constraint") and i + 1 < len(words):
                if (repo / words[i + 1]).is_file() and not OTHER_PURPOSE.search(words[i + 1]):
                    reqs.append(f"{word} {words[i + 1]}")
                i += 2
                continue
            if word in _OPTIONS_WITH_VALUE:
                i += 2
                continue
            i += 1
            if word.startswith("-") or word.startswith(("git+", "http", "/", "${")):
                continue
            local = re.fullmatch(r"\.(?:\[([\w,.-]+)\])?", word)
            if local:
                extras += (local.group(1) or "").split(",") if local.group(1) else []
            elif re.match(r"[A-Za-z0-9]", word) and not (repo / word).exists():
                reqs.append(word)
    return reqs, extras


def requirement_names(lines: Iterable[str]) -> list[str]:
    """The package names of requirement lines, once each, in order (options and `-r` left out)."""
    out: dict[str, None] = {}
    for line in (ln for text in lines for ln in str(text).splitlines()):
        line = str(line).split("#", 1)[0].strip()
        m = REQ_NAME.match(line)
        if m and not line.startswith("-") and not line.startswith("."):
            out.setdefault(m.group(1).lower().replace("_", "-"), None)
    return list(out)


def setup_notes(sources: list[str], names: list[str], unpinned: list[str]) -> list[str]:
    """The setup row's notes: where the dev/test dependencies came from, what by name (the
    first eight), and which tools the repository does not pin."""
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    notes = [f"dev/test dependencies from: {'; '.join(sources)}"] if sources else []
    notes += [f"installed for the stages: {', '.join(names[:8])}{more}"] if names else []
    notes += [f"not pinned by the repo, latest used: {', '.join(unpinned)}"] if unpinned else []
    return notes
