"""The repository's own stage commands, read from its files (pure reads, nothing runs).

Looked for in this order after `.github/agentbot.yml`: pre-commit hooks, tox envs, nox
sessions, Makefile and justfile targets, package.json scripts, then the plain `run:`
steps of its CI workflows. A source is used by its stage's name (`lint`, `typecheck`,
`test`, a format *check*); a target that only wraps an environment manager (tox, nox,
poetry, hatch, docker) is passed over, because it would build environments of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from bot import treefs
from bot.validation.stage import StageSpec

STAGE_NAMES: dict[str, tuple[str, ...]] = {
    "format": ("format-check", "format:check", "check-format", "fmt-check", "fmt:check",
               "formatcheck", "lint:format", "ruff-format", "format", "fmt", "black", "prettier"),
    "lint": ("lint", "lint:check", "lint-check", "linting", "lint:js", "ruff", "flake8", "eslint",
             "pylint", "clippy"),
    "typecheck": ("typecheck", "type-check", "typecheck:check", "types", "type", "typing",
                  "check-types", "lint:types", "mypy", "pyright", "tsc"),
    "test": ("test", "tests", "unit", "test:unit", "unittest", "pytest"),
}  # fmt: skip
# A format command that would write instead of check is not a check.
_CHECKS = re.compile(r"--check\b|--diff\b|--list-different\b|(?:^|\s)-l\b|--dry-run\b")
_WRITES = re.compile(r"--fix\b|--write\b|(?:^|\s)-w\b|--in-place\b")
ENV_MANAGERS = frozenset(
    {"tox", "nox", "poetry", "hatch", "pdm", "pipenv", "docker", "docker-compose", "podman"}
)
_RUN_PREFIX = re.compile(r"^(?:uv run|poetry run|pdm run|pipenv run|rye run)(?:\s+--\S+)*\s+")


def stage_of(name: str, body: str) -> str | None:
    """The stage a target/script/env named `name` with command `body` serves, if any."""
    key = name.lower()
    for stage, names in STAGE_NAMES.items():
        if key not in names:
            continue
        if stage == "format" and (not _CHECKS.search(body) or _WRITES.search(body)):
            return None
        if stage == "lint" and _WRITES.search(body):
            return None
        return stage
    if re.fullmatch(r"py(py)?(\d\.?\d*)?", key):  # tox 4 spells them py3.11 too
        return "test"
    return None


def first_word(line: str) -> str:
    """The program a recipe line runs (after make's `@`/`-` and `VAR=value` words)."""
    line = line.strip().lstrip("@-+").strip()
    for word in line.split():
        if "=" not in word:
            return word
    return ""


# --- Makefile, justfile, package.json ------------------------------------------------------------

_TARGET = re.compile(r"^([A-Za-z0-9_.:-]+?)\s*:(?!=)[^\n]*\n((?:(?:\t| {4})[^\n]*\n?)*)", re.M)


def recipes(text: str) -> dict[str, list[str]]:
    """Target -> recipe lines of a Makefile or justfile (the first definition of each)."""
    found: dict[str, list[str]] = {}
    for m in _TARGET.finditer(text):
        lines = [ln.strip() for ln in m.group(2).splitlines() if ln.strip()]
        found.setdefault(m.group(1), [ln for ln in lines if not ln.startswith("#")])
    return found


def makefile(repo: Path, name: str = "Makefile", runner: str = "make") -> dict[str, StageSpec]:
    """Makefile (or justfile) targets named like a stage, unless they wrap an env manager."""
    path = repo / name
    if not path.is_file():
        return {}
    found: dict[str, StageSpec] = {}
    for target, lines in recipes(path.read_text(encoding="utf-8", errors="replace")).items():
        body = " && ".join(lines)
        stage = stage_of(target, body)
        if stage is None or stage in found or not lines:
            continue
        words = [first_word(ln) for ln in lines]
        if any(w in ENV_MANAGERS for w in words) or any(_RUN_PREFIX.match(ln) for ln in lines):
            continue
        tools = tuple(w for w in dict.fromkeys(words) if w and "$" not in w and w != runner)
        found[stage] = StageSpec(
            stage=stage,
            command=f"{runner} {target}",
            source=name if name == "Makefile" else "justfile",
            tools=(runner, *tools),
            calls=tuple(lines),
            pre_commit="pre-commit" in words,
        )
    return found


def justfile(repo: Path) -> dict[str, StageSpec]:
    """justfile recipes named like a stage."""
    for name in ("justfile", "Justfile", ".justfile"):
        if (repo / name).is_file():
            return makefile(repo, name, runner="just")
    return {}


def package_scripts(repo: Path) -> dict[str, str]:
    """package.json's scripts ({} if none or unreadable)."""
    try:
        pkg = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    scripts = pkg.get("scripts") if isinstance(pkg, dict) else None
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


def package_json(repo: Path) -> dict[str, StageSpec]:
    """package.json scripts named like a stage, run by npm without their pre/post scripts."""
    found: dict[str, StageSpec] = {}
    for name, body in package_scripts(repo).items():
        stage = stage_of(name, body)
        if stage is None or stage in found:
            continue
        if stage == "test" and "no test specified" in body:
            continue
        # --ignore-scripts skips pretest/posttest (an audit wanting the network, a second lint).
        command = (
            "npm test --ignore-scripts" if name == "test" else f"npm run {name} --ignore-scripts"
        )
        found[stage] = StageSpec(stage=stage, command=command, source="package.json",
                                 tools=("npm",))  # fmt: skip
    if "typecheck" not in found:
        # The repository's own type checker under another name (`check`: svelte-check).
        for name, body in package_scripts(repo).items():
            if _TYPE_CHECKER.match(body.strip()) and not name.startswith(("build", "watch", "dev")):
                command = f"npm run {name} --ignore-scripts"
                found["typecheck"] = StageSpec("typecheck", command, "package.json", tools=("npm",))
                break
    return found


_TYPE_CHECKER = re.compile(
    r"(?:npx )?(?:(?:vue-tsc|tsc)\b.*--noEmit|svelte-check|flow check|flow$|glint\b|tsd\b)"
)


# --- CI workflows --------------------------------------------------------------------------------

_CI_TOOLS: dict[str, re.Pattern[str]] = {
    "format": re.compile(r"^(ruff format .*--check|black .*--check|prettier .*--check"
                         r"|cargo fmt.*--check|isort .*--check)"),
    "lint": re.compile(r"^(ruff check|ruff \.|flake8|pylint|eslint|cargo clippy|go vet"
                       r"|golangci-lint run|npm run lint)\b"),
    "typecheck": re.compile(r"^(mypy|pyright|tsc|npm run typecheck)\b"),
    "test": re.compile(r"^(pytest|python3? -m pytest|cargo test|go test|npm test|npm run test"
                       r"|python3? -m unittest|(python3? -m )?coverage run"
                       r"|python3? [\w./-]*(test\w*|tests|runtests)\.py)\b"),
}  # fmt: skip


def ci_workflows(repo: Path) -> dict[str, StageSpec]:
    """Plain one-line `run:` steps of the workflows testing this repo that call a known tool."""
    found: dict[str, StageSpec] = {}
    for name, job in _own_jobs(repo):
        for step in job.get("steps") or []:
            run = step.get("run") if isinstance(step, dict) else None
            if not isinstance(run, str) or "\n" in run.strip() or "${{" in run:
                continue
            line = _RUN_PREFIX.sub("", run.strip())
            for stage, pattern in _CI_TOOLS.items():
                if stage not in found and pattern.match(line):
                    found[stage] = StageSpec(
                        stage=stage, command=line, source=f"CI workflow ({name})"
                    )
    return found


def ci_run_lines(repo: Path) -> list[str]:
    """Every line of every `run:` step of the workflows testing this repo (continuations joined)."""
    lines: list[str] = []
    for _, job in _own_jobs(repo):
        for step in job.get("steps") or []:
            run = step.get("run") if isinstance(step, dict) else None
            if isinstance(run, str):
                lines += [ln.strip() for ln in run.replace("\\\n", " ").splitlines() if ln.strip()]
    return lines


def _own_jobs(repo: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file name, job) of the workflows that test this repository on push or pull_request.

    A workflow run only by hand or on a schedule, and a job that checks out another
    repository (a downstream project's tests), do not say how this repository is tested.
    """
    folder = repo / ".github" / "workflows"
    # Never through a link: the agent's or the repository's code ran before the gate.
    real = treefs.kind(repo, ".github/workflows") == "dir"
    files = sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]) if real else []
    jobs: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        try:
            doc = yaml.safe_load(treefs.read_text(repo, f".github/workflows/{path.name}"))
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(doc, dict):
            continue
        on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
        events = [on] if isinstance(on, str) else list(on) if isinstance(on, list | dict) else []
        if not {"push", "pull_request"} & {str(e) for e in events}:
            continue
        for job in (doc.get("jobs") or {}).values():
            if isinstance(job, dict) and not _checks_out_another(job):
                jobs.append((path.name, job))
    return jobs


def _checks_out_another(job: dict[str, Any]) -> bool:
    """True when a step checks out another repository (`actions/checkout` with `repository:`)."""
    for step in job.get("steps") or []:
        if not isinstance(step, dict) or "actions/checkout" not in str(step.get("uses", "")):
            continue
        with_ = step.get("with")
        other = isinstance(with_, dict) and str(with_.get("repository") or "")
        if other and "github.repository" not in other:
            return True
    return False
