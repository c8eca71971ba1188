"""Language profiles: the default stage commands, detected from the repository's files.

The last resort after the repository's own commands (pre-commit, tox, Makefile, CI…).
Defaults check only what the change touched where a tool can take files (formatters,
linters), ask for machine-readable output where tools have it, and are used only where
the repository adopted the tool: formatting is enforced only with a formatter's config,
Python lint without a ruff config is ruff's default rule set (pyflakes-class bugs),
mypy only where it is configured. Pure reads.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.validation.envs import pre_commit_pins
from bot.validation.sources import package_scripts
from bot.validation.stage import FILES, STAGES, StageSpec

PY = (".py", ".pyi")
JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")
PRETTIER = (*JS, ".json", ".css", ".scss", ".less", ".md", ".yaml", ".yml", ".html", ".graphql")


@dataclass(frozen=True)
class Profile:
    """How to check one kind of repository when it says nothing itself."""

    name: str
    defaults: dict[str, StageSpec] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    """stage -> why the profile has no default for it."""
    lockfiles: tuple[str, ...] = ()
    """Glob patterns of the files whose content keys the once-per-workspace setup."""
    venv: bool = False
    """Stages run with a per-workspace virtualenv (under the data dir) first on PATH."""
    bin_dirs: tuple[str, ...] = ()
    """Repo-relative directories put first on PATH (node_modules/.bin)."""

    def note(self, stage: str) -> str:
        """Why the profile has no command for `stage`."""
        return self.notes.get(stage, f"the {self.name} profile has no {stage} command")


def detect_profile(repo: Path) -> Profile:
    """The profile of the repository at `repo`: rust, go, python, typescript, javascript, ruby."""
    from bot.validation.native import go_profile, ruby_profile, rust_profile

    if (repo / "Cargo.toml").is_file():
        return rust_profile(repo)
    if (repo / "go.mod").is_file():
        return go_profile()
    if any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return _python(repo)
    if (repo / "package.json").is_file():
        return _javascript(repo)
    if (repo / "Gemfile").is_file() or (repo / ".rspec").is_file() or any(repo.glob("*.gemspec")):
        return ruby_profile(repo)
    if any(repo.glob("*requirements*.txt")):
        return _python(repo)
    note = "no language profile detected; set the stage in .github/agentbot.yml"
    return Profile(name="unknown", notes={s: note for s in ("setup", *STAGES)})


def spec(stage: str, command: str, **kw: Any) -> StageSpec:
    """A default stage spec."""
    return StageSpec(stage=stage, command=command, source="default", **kw)


# --- python ----------------------------------------------------------------------------------


def toml(path: Path) -> dict[str, Any]:
    """A TOML file's table, {} if missing or invalid."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def setup_cfg(repo: Path) -> configparser.ConfigParser:
    """setup.cfg parsed (empty if missing or invalid)."""
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read(repo / "setup.cfg", encoding="utf-8")
    except configparser.Error:
        return configparser.ConfigParser()
    return cfg


def python_formatter(repo: Path, pyproject: dict[str, Any], declared: str) -> str | None:
    """The formatter the repo adopted: `black` or `ruff`, else None."""
    tool = pyproject.get("tool", {})
    pins = pre_commit_pins(repo)
    if "black" in tool or "black" in pins or declares(declared, "black"):
        return "black"
    ruff_format = "format" in tool.get("ruff", {}) or "format" in toml(repo / "ruff.toml")
    precommit = repo / ".pre-commit-config.yaml"
    hooks = precommit.read_text(errors="replace") if precommit.is_file() else ""
    return "ruff" if ruff_format or "ruff-format" in hooks else None


def mypy_configured(repo: Path, pyproject: dict[str, Any]) -> bool:
    """True when the repo configures mypy ([tool.mypy], mypy.ini, setup.cfg [mypy])."""
    if "mypy" in pyproject.get("tool", {}):
        return True
    if any((repo / n).is_file() for n in ("mypy.ini", ".mypy.ini")):
        return True
    return setup_cfg(repo).has_section("mypy")


def _mypy_command(repo: Path, pyproject: dict[str, Any]) -> str:
    """`mypy` where the config names its files, else the package folder (src/ or .)."""
    conf = pyproject.get("tool", {}).get("mypy", {})
    cfg = setup_cfg(repo)
    texts = [(repo / n).read_text(errors="replace") for n in ("mypy.ini", ".mypy.ini")
             if (repo / n).is_file()]  # fmt: skip
    if conf.get("files") or cfg.has_option("mypy", "files"):
        return "mypy"
    if any(re.search(r"^files\s*=", t, re.M) for t in texts):
        return "mypy"
    return "mypy src" if (repo / "src").is_dir() else "mypy ."


BUG_RULES = "E4,E7,E9,F"


def ruff_configured(repo: Path, pyproject: dict[str, Any]) -> bool:
    """True when the repo has a ruff configuration (pyproject, ruff.toml, .ruff.toml)."""
    return "ruff" in pyproject.get("tool", {}) or any(
        (repo / f).is_file() for f in ("ruff.toml", ".ruff.toml")
    )


def declares(requirements: str, name: str) -> bool:
    """True if a requirement list names the package `name` (any version, extras, markers)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", requirements, re.I) is not None


def _python(repo: Path) -> Profile:
    from bot.validation.pyenv import declared_text  # one reader of the declared dependencies

    pyproject = toml(repo / "pyproject.toml")
    declared = declared_text(repo, pyproject)
    defaults: dict[str, StageSpec] = {}
    notes: dict[str, str] = {}
    formatter = python_formatter(repo, pyproject, declared)
    if formatter == "black":
        defaults["format"] = spec("format", "black --check .", scoped=f"black --check {FILES}",
                                   fix=f"black -q {FILES}", suffixes=PY)  # fmt: skip
    elif formatter == "ruff":
        fmt = "ruff format --force-exclude"
        defaults["format"] = spec(
            "format",
            "ruff format --check .",
            suffixes=PY,
            scoped=f"{fmt} --check {FILES}",
            fix=f"{fmt} -q {FILES}",
        )
    else:
        notes["format"] = "no formatter adopted by this repo (black, or ruff format configured)"
    # Without a ruff config, ruff's classic default rules, named so a newer ruff's wider
    # defaults cannot creep in: pyflakes-class bugs and syntax-level errors only.
    lint = "ruff check --no-fix --output-format json"
    if not ruff_configured(repo, pyproject):
        lint += f" --select {BUG_RULES}"
    defaults["lint"] = spec(
        "lint", f"{lint} .", scoped=f"{lint} --force-exclude {FILES}", suffixes=PY,
        fix=f"ruff check -q --fix --no-unsafe-fixes --force-exclude {FILES}",
    )  # fmt: skip
    if mypy_configured(repo, pyproject):
        defaults["typecheck"] = spec("typecheck", _mypy_command(repo, pyproject))
    else:
        notes["typecheck"] = "mypy is not configured in this repo ([tool.mypy] or mypy.ini)"
    # The cache plugin would write .pytest_cache into the workspace; we want it untouched.
    defaults["test"] = spec("test", "pytest -q -p no:cacheprovider", runner="pytest")
    return Profile(
        name="python",
        defaults=defaults,
        notes=notes,
        lockfiles=("pyproject.toml", "setup.py", "setup.cfg", "*requirements*.txt",
                   "requirements/*.txt", "uv.lock", "poetry.lock", "pdm.lock", "tox.ini",
                   "noxfile.py", ".pre-commit-config.yaml"),
        venv=True,
    )  # fmt: skip


# --- javascript / typescript -------------------------------------------------------------------

_ESLINT = ("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
           ".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml",
           ".eslintrc.yaml")  # fmt: skip
_PRETTIER = (".prettierrc", ".prettierrc.json", ".prettierrc.yml", ".prettierrc.yaml",
             ".prettierrc.js", ".prettierrc.cjs", ".prettierrc.mjs", ".prettierrc.toml",
             "prettier.config.js", "prettier.config.cjs", "prettier.config.mjs")  # fmt: skip


def _javascript(repo: Path) -> Profile:
    try:
        pkg = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pkg = {}
    pkg = pkg if isinstance(pkg, dict) else {}
    dev = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})}
    ts = (repo / "tsconfig.json").is_file()
    defaults: dict[str, StageSpec] = {}
    notes: dict[str, str] = {}
    if "prettier" in pkg or "prettier" in dev or any((repo / f).is_file() for f in _PRETTIER):
        defaults["format"] = spec(
            "format", "prettier --check .", scoped=f"prettier --check --ignore-unknown {FILES}",
            fix=f"prettier --write --ignore-unknown --log-level warn {FILES}", suffixes=PRETTIER,
        )  # fmt: skip
    else:
        notes["format"] = "no formatter adopted by this repo (prettier)"
    if "eslintConfig" in pkg or any((repo / f).is_file() for f in _ESLINT):
        defaults["lint"] = spec("lint", "eslint -f json .", scoped=f"eslint -f json {FILES}",
                                 fix=f"eslint --fix {FILES}", suffixes=JS)  # fmt: skip
    else:
        notes["lint"] = "no eslint configuration in this repo"
    if ts:
        defaults["typecheck"] = spec("typecheck", "tsc --noEmit")
    else:
        notes["typecheck"] = "JavaScript has no typecheck (no tsconfig.json)"
    script = package_scripts(repo).get("test", "")
    if script and "no test specified" not in script:
        defaults["test"] = spec("test", "npm test --ignore-scripts", tools=("npm",))
    else:
        notes["test"] = "package.json has no test script"
    return Profile(
        name="typescript" if ts else "javascript",
        defaults=defaults,
        notes=notes,
        lockfiles=("package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
                   "yarn.lock", "bun.lockb"),
        bin_dirs=("node_modules/.bin",),
    )  # fmt: skip
