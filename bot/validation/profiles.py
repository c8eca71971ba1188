"""Language profiles: which commands validate a repository, detected from its files (pure reads).

A profile is data: a default command per stage (None when the language or the repo has
none, with the reason in `notes`), the fixers `--fix` may run, the test output parser,
and the dependency files whose content decides whether `setup` must run again.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.validation.parsers import infer_runner

STAGES = ("format", "lint", "typecheck", "test")

PYTHON_TOOLS = ("ruff", "mypy", "pytest")
_EXTRA_NAMES = ("test", "tests", "testing", "dev", "develop", "development")
_MYPY_FILES = ("mypy.ini", ".mypy.ini")


@dataclass(frozen=True)
class Profile:
    """How to set up and check one kind of repository."""

    name: str
    markers: tuple[str, ...]
    setup: str | None
    format: str | None
    format_fix: str | None
    lint: str | None
    lint_fix: str | None
    typecheck: str | None
    test: str | None
    parser: str
    notes: tuple[tuple[str, str], ...] = ()
    """(stage, why the profile has no command for it), shown when that stage is skipped."""
    lockfiles: tuple[str, ...] = ()
    """Glob patterns of the files whose content keys the once-per-workspace setup."""
    venv: bool = False
    """Stages run with a per-workspace virtualenv (under the data dir) first on PATH."""
    bin_dirs: tuple[str, ...] = ()
    """Repo-relative directories put first on PATH (node_modules/.bin)."""

    def command(self, stage: str) -> str | None:
        """The default command of a stage (setup, format, lint, typecheck, test)."""
        value: str | None = getattr(self, stage)
        return value

    def fixer(self, stage: str) -> str | None:
        """The auto-fix command of a stage, if it has one."""
        return {"format": self.format_fix, "lint": self.lint_fix}.get(stage)

    def note(self, stage: str) -> str:
        """Why the profile has no command for `stage`."""
        return dict(self.notes).get(stage, f"the {self.name} profile has no {stage} command")


def detect_profile(repo: Path) -> Profile:
    """The profile of the repository at `repo`: rust, go, python, typescript, javascript, ruby."""
    if (repo / "Cargo.toml").is_file():
        return _rust()
    if (repo / "go.mod").is_file():
        return _go()
    if any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return _python(repo)
    if (repo / "package.json").is_file():
        return _javascript(repo)
    if (repo / "Gemfile").is_file() or (repo / ".rspec").is_file() or any(repo.glob("*.gemspec")):
        return _ruby(repo)
    if any(repo.glob("*requirements*.txt")):
        return _python(repo)
    note = "no language profile detected; set the stage in .github/agentbot.yml"
    return Profile(
        name="unknown",
        markers=(),
        setup=None,
        format=None,
        format_fix=None,
        lint=None,
        lint_fix=None,
        typecheck=None,
        test=None,
        parser="auto",
        notes=tuple((s, note) for s in ("setup", *STAGES)),
    )


# --- python ----------------------------------------------------------------------------------


def _python(repo: Path) -> Profile:
    pyproject = _toml(repo / "pyproject.toml")
    project = pyproject.get("project", {})
    has_build = bool(project or pyproject.get("build-system")) or any(
        (repo / f).is_file() for f in ("setup.py", "setup.cfg")
    )
    extras = _python_extras(repo, pyproject)
    groups = pyproject.get("dependency-groups", {})
    # Dependency groups (PEP 735) go in as plain requirements: older pips lack --group.
    group_reqs = [r for name in _EXTRA_NAMES for r in groups.get(name, []) if isinstance(r, str)]
    req_files = sorted(p.name for p in repo.glob("*requirements*.txt"))
    declared = " ".join(
        [*project.get("dependencies", []), *group_reqs]
        + [r for name in extras for r in project.get("optional-dependencies", {}).get(name, [])]
        + [(repo / f).read_text(encoding="utf-8", errors="replace") for f in req_files]
        + [_setup_cfg_text(repo)]
    )
    mypy = _mypy_configured(repo, pyproject)
    # A repo that never adopted ruff would fail (or, with --fix, be reformatted wholesale):
    # ruff runs only where the repo configures it or depends on it.
    ruff = _ruff_configured(repo, pyproject) or _declares(declared, "ruff")
    wanted = [
        t for t in PYTHON_TOOLS if (t != "mypy" or mypy is not None) and (t != "ruff" or ruff)
    ]
    tools = [t for t in wanted if not _declares(declared, t)]

    args = ["python", "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"]
    if has_build:
        args += ["-e", f".[{','.join(extras)}]" if extras else "."]
    for f in req_files:
        args += ["-r", f]
    args += group_reqs + tools
    notes = []
    if mypy is None:
        notes.append(("typecheck", "mypy is not configured in this repo ([tool.mypy] or mypy.ini)"))
    if not ruff:
        why = "ruff is not configured in this repo ([tool.ruff] or ruff.toml)"
        notes += [("format", why), ("lint", why)]
    return Profile(
        name="python",
        markers=("pyproject.toml", "setup.py", "setup.cfg", "requirements*.txt"),
        setup=shlex.join(args),
        format="ruff format --check ." if ruff else None,
        format_fix="ruff format ." if ruff else None,
        lint="ruff check ." if ruff else None,
        lint_fix="ruff check --fix ." if ruff else None,
        typecheck=mypy,
        # The cache plugin would write .pytest_cache into the workspace; we want it untouched.
        test="pytest -q -p no:cacheprovider",
        parser="pytest",
        notes=tuple(notes),
        lockfiles=("pyproject.toml", "setup.py", "setup.cfg", "*requirements*.txt"),
        venv=True,
    )


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _setup_cfg(repo: Path) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(repo / "setup.cfg", encoding="utf-8")
    except configparser.Error:
        return configparser.ConfigParser()
    return cfg


def _setup_cfg_text(repo: Path) -> str:
    cfg = _setup_cfg(repo)
    return " ".join(v for s in cfg.sections() for v in cfg[s].values())


def _python_extras(repo: Path, pyproject: dict[str, Any]) -> list[str]:
    declared = set(pyproject.get("project", {}).get("optional-dependencies", {}))
    cfg = _setup_cfg(repo)
    if cfg.has_section("options.extras_require"):
        declared |= set(cfg["options.extras_require"])
    return [name for name in _EXTRA_NAMES if name in declared]


def _declares(requirements: str, name: str) -> bool:
    """True if a requirement list names the package `name` (any version, extras, markers)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", requirements, re.I) is not None


def _ruff_configured(repo: Path, pyproject: dict[str, Any]) -> bool:
    """True when the repo has a ruff configuration."""
    return "ruff" in pyproject.get("tool", {}) or any(
        (repo / f).is_file() for f in ("ruff.toml", ".ruff.toml")
    )


def _mypy_configured(repo: Path, pyproject: dict[str, Any]) -> str | None:
    """The mypy command if the repo configures mypy; with `files` set, mypy takes no path."""
    conf = pyproject.get("tool", {}).get("mypy")
    if conf is not None:
        return "mypy" if conf.get("files") else "mypy ."
    for name in _MYPY_FILES:
        path = repo / name
        if path.is_file():
            return "mypy" if re.search(r"^files\s*=", path.read_text(), re.M) else "mypy ."
    cfg = _setup_cfg(repo)
    if cfg.has_section("mypy"):
        return "mypy" if cfg.has_option("mypy", "files") else "mypy ."
    return None


# --- javascript / typescript -------------------------------------------------------------------

_ESLINT_CONFIGS = (
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
)


def _javascript(repo: Path) -> Profile:
    try:
        pkg = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pkg = {}
    pkg = pkg if isinstance(pkg, dict) else {}
    ts = (repo / "tsconfig.json").is_file()
    script = str((pkg.get("scripts") or {}).get("test", ""))
    locked = any((repo / f).is_file() for f in ("package-lock.json", "npm-shrinkwrap.json"))
    eslint = "eslintConfig" in pkg or any((repo / f).is_file() for f in _ESLINT_CONFIGS)
    notes = []
    if not eslint:
        notes.append(("lint", "no eslint configuration in this repo"))
    if not ts:
        notes.append(("typecheck", "JavaScript has no typecheck (no tsconfig.json)"))
    return Profile(
        name="typescript" if ts else "javascript",
        markers=("package.json", "tsconfig.json") if ts else ("package.json",),
        # Without a lockfile, install must not write one into the workspace.
        setup="npm ci --no-audit --no-fund"
        if locked
        else "npm install --no-audit --no-fund --no-package-lock",
        format="prettier --check .",
        format_fix="prettier --write .",
        lint="eslint ." if eslint else None,
        lint_fix="eslint --fix ." if eslint else None,
        typecheck="tsc --noEmit" if ts else None,
        # `npm test` runs the package.json script whatever the runner (jest, vitest, mocha…).
        test="npm test",
        parser=infer_runner(script, "auto"),
        notes=tuple(notes),
        lockfiles=("package.json", "package-lock.json", "npm-shrinkwrap.json"),
        bin_dirs=("node_modules/.bin",),
    )


# --- go, rust, ruby ----------------------------------------------------------------------------


def _go() -> Profile:
    return Profile(
        name="go",
        markers=("go.mod",),
        setup="go mod download",
        # gofmt -l exits 0 even when it lists files: any output (files or errors) fails.
        format="gofmt -l . 2>&1 | awk '{print} END {exit (NR > 0)}'",
        format_fix="gofmt -w .",
        lint="go vet ./...",
        lint_fix=None,
        typecheck="go build ./...",
        # -v prints a line per test, so passes are counted too.
        test="go test -v ./...",
        parser="go",
        lockfiles=("go.mod", "go.sum"),
    )


def _rust() -> Profile:
    return Profile(
        name="rust",
        markers=("Cargo.toml",),
        setup=None,
        format="cargo fmt --check",
        format_fix="cargo fmt",
        lint="cargo clippy --all-targets -- -D warnings",
        lint_fix=None,
        typecheck="cargo check --all-targets",
        # Every test binary runs even if one fails, so all failures are known (baseline).
        test="cargo test --no-fail-fast",
        parser="cargo",
        notes=(("setup", "cargo fetches what Cargo.lock names when it builds"),),
        lockfiles=("Cargo.toml", "Cargo.lock"),
    )


def _ruby(repo: Path) -> Profile:
    bundler = (repo / "Gemfile").is_file()
    run = "bundle exec " if bundler else ""
    return Profile(
        name="ruby",
        markers=("Gemfile", ".rspec", "*.gemspec"),
        setup="bundle install" if bundler else None,
        format=f"{run}rubocop",
        format_fix=f"{run}rubocop -a",
        lint=None,
        lint_fix=None,
        typecheck=None,
        test=f"{run}rspec",
        parser="rspec",
        notes=(
            ("setup", "no Gemfile: nothing to install"),
            ("lint", "rubocop runs in the format stage"),
            ("typecheck", "Ruby has no typecheck"),
        ),
        lockfiles=("Gemfile", "Gemfile.lock", "*.gemspec"),
    )
