"""What a Python repository declares it needs, and the setup steps that install it.

Installs with uv where it is found (far faster than pip), else pip, into a venv of the
workspace's own under the data dir. `uv.lock` is honoured with `uv sync --frozen`;
otherwise the project is installed editable with its test/dev extras, its test and dev
requirement files and PEP 735 groups, and `poetry.lock` pins versions as constraints.
The tools a stage runs come from the repository's own pins (a requirements line, a dev
extra, a pre-commit rev) and only otherwise unpinned, which the setup stage says. When
the project itself cannot be installed (flat layout, an application, a scripts repo),
its declared dependencies are installed without it and the stages run from the root.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.validation.devdeps import (
    OTHER_PURPOSE,
    REQ_NAME,
    dev_requirements,
    requirement_names,
    setup_notes,
)
from bot.validation.envs import pre_commit_pins
from bot.validation.profiles import declares, setup_cfg

EXTRA_NAMES = ("test", "tests", "testing", "dev", "develop", "development")
GROUP_NAMES = (*EXTRA_NAMES, "lint", "typing", "type", "types", "mypy")
PYTHON_TOOLS = frozenset(
    {"ruff", "black", "mypy", "pytest", "pre-commit", "flake8", "pylint", "pyright", "isort",
     "coverage", "pyflakes", "pycodestyle", "codespell", "bandit"}
)  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One setup command; `fallback` runs instead when it fails (saying `warning`)."""

    command: str
    fallback: str | None = None
    warning: str = ""
    optional: bool = False
    """A failure is a warning, not a setup failure (pre-commit's hook environments)."""
    flag: str = ""
    """Recorded in the setup marker when the step (not its fallback) succeeded."""


@dataclass(frozen=True)
class PythonSetup:
    """The steps, and what to tell the user about the tools."""

    steps: list[Step] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    """Where the installed dev/test dependencies were declared, for the setup row."""
    names: list[str] = field(default_factory=list)
    """The dev/test packages and tools installed, by name, for the setup row."""

    def notes(self) -> list[str]:
        """What the setup row says of it: where from, what (by name), what was not pinned."""
        return setup_notes(self.sources, self.names, self.unpinned)


def _requirement_files(repo: Path) -> list[str]:
    """Requirement files a test run needs: root *requirements*.txt and requirements/test*.txt."""
    root = [p.name for p in repo.glob("*requirements*.txt") if not OTHER_PURPOSE.search(p.name)]
    sub = [f"requirements/{p.name}" for p in (repo / "requirements").glob("test*.txt")]
    return sorted(root) + sorted(sub)


def _all_requirement_files(repo: Path) -> list[Path]:
    return sorted([*repo.glob("*requirements*.txt"), *(repo / "requirements").glob("*.txt")])


def extras(repo: Path, pyproject: dict[str, Any]) -> list[str]:
    """The test/dev extras the project declares."""
    declared = set(pyproject.get("project", {}).get("optional-dependencies", {}))
    cfg = setup_cfg(repo)
    if cfg.has_section("options.extras_require"):
        declared |= set(cfg["options.extras_require"])
    return [name for name in EXTRA_NAMES if name in declared]


def groups(pyproject: dict[str, Any], names: Iterable[str]) -> list[str]:
    """PEP 735 dependency groups' requirements, `{include-group = ...}` followed."""
    table = pyproject.get("dependency-groups", {})
    out: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for item in table.get(name, []):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                add(item["include-group"])

    for name in names:
        add(name)
    return out


def _poetry_dev(pyproject: dict[str, Any]) -> list[str]:
    poetry = pyproject.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dev-dependencies", {})]
    tables += [
        g.get("dependencies", {}) for n, g in poetry.get("group", {}).items() if n in GROUP_NAMES
    ]
    return [name for t in tables for name in t if name != "python"]


def _project_deps(repo: Path, pyproject: dict[str, Any]) -> list[str]:
    """The project's own dependencies and those of its test/dev extras (not the project)."""
    project = pyproject.get("project", {})
    deps = [str(d) for d in project.get("dependencies", [])]
    for name in extras(repo, pyproject):
        deps += [str(d) for d in project.get("optional-dependencies", {}).get(name, [])]
    poetry = pyproject.get("tool", {}).get("poetry", {}).get("dependencies", {})
    deps += [n for n in poetry if n != "python"]
    cfg = setup_cfg(repo)
    if cfg.has_option("options", "install_requires"):
        deps += [ln.strip() for ln in cfg["options"]["install_requires"].splitlines() if ln.strip()]
    return deps


def declared_text(repo: Path, pyproject: dict[str, Any]) -> str:
    """Every requirement the repo declares anywhere, as one text (for `declares`)."""
    project = pyproject.get("project", {})
    parts = [
        *project.get("dependencies", []),
        *groups(pyproject, pyproject.get("dependency-groups", {})),
    ]
    for reqs in project.get("optional-dependencies", {}).values():
        parts += reqs
    parts += _poetry_dev(pyproject)
    parts += [p.read_text(encoding="utf-8", errors="replace") for p in _all_requirement_files(repo)]
    cfg = setup_cfg(repo)
    parts += [v for s in cfg.sections() for v in cfg[s].values()]
    return "\n".join(str(p) for p in parts)


def tool_requirement(repo: Path, pyproject: dict[str, Any], tool: str) -> str | None:
    """The requirement line that pins `tool` in the repo (`ruff==0.4.4`), else a pre-commit rev."""
    for line in declared_text(repo, pyproject).splitlines():
        line = line.split("#", 1)[0].strip()
        m = REQ_NAME.match(line)
        if m and m.group(1).lower().replace("_", "-") == tool and not line.startswith("-"):
            return line
    return pre_commit_pins(repo).get(tool)


def poetry_constraints(repo: Path, name: str = "poetry.lock") -> str:
    """`name==version` for every package poetry.lock (or pdm.lock) pins ("" without one)."""
    from bot.validation.profiles import toml

    lock = toml(repo / name)
    lines = [f"{p['name']}=={p['version']}" for p in lock.get("package", []) if "name" in p]
    return "\n".join(lines) + ("\n" if lines else "")


def python_setup(
    repo: Path,
    pyproject: dict[str, Any],
    *,
    venv: Path,
    python: str,
    uv: str | None,
    tools: Iterable[str],
    extra_requirements: Iterable[str],
    constraints: Path | None,
    pre_commit: bool,
) -> PythonSetup:
    """The setup steps for a Python repo into `venv` (uv if given, else pip)."""
    q = shlex.quote
    vpy = q(str(venv / "bin" / "python"))
    install = f"{q(uv)} pip install --python {vpy}" if uv else f"{vpy} -m pip install -q"
    create = (
        f"{q(uv)} venv -q --python {q(python)} {q(str(venv))}"
        if uv
        else (f"{q(python)} -m venv {q(str(venv))}")
    )
    steps = [Step(create, flag="venv")]  # skipped by setup while the venv exists
    has_build = bool(pyproject.get("project") or pyproject.get("build-system")) or any(
        (repo / f).is_file() for f in ("setup.py", "setup.cfg")
    )
    asked = list(extra_requirements)
    # `.[x]` (a tox env's extras) is the project with that extra, not a requirement.
    local = [m.group(1) for r in asked if (m := re.fullmatch(r"\.\[([\w,.-]+)\]", r))]
    extra_requirements = [r for r in asked if not re.fullmatch(r"\.\[([\w,.-]+)\]", r)]
    dev, dev_extras, where = dev_requirements(repo, pyproject)
    declared = set(pyproject.get("project", {}).get("optional-dependencies", {}))
    wanted_extras = [*dev_extras, *(e for x in local for e in x.split(","))]
    names = list(
        dict.fromkeys([*extras(repo, pyproject), *(e for e in wanted_extras if e in declared)])
    )
    reqs = [a for f in _requirement_files(repo) for a in ("-r", q(f))]  # a name is a word
    group_reqs = groups(
        pyproject, [n for n in GROUP_NAMES if n in pyproject.get("dependency-groups", {})]
    )
    uv_lock = bool(uv and (repo / "uv.lock").is_file() and pyproject.get("project"))
    if not uv_lock:
        group_reqs += [r for r in dev if r not in group_reqs]
    cons = ["-c", q(str(constraints))] if constraints else []
    flat = (
        "the project itself could not be installed (flat layout, application or scripts);"
        " installed its declared dependencies and run the stages from the repository root"
    )
    if uv and uv_lock:
        sync = (
            f"UV_PROJECT_ENVIRONMENT={q(str(venv))} {q(uv)} sync --frozen --inexact -q"
            + "".join(f" --extra {q(n)}" for n in names)
        )
        sync += "".join(
            f" --group {q(g)}" for g in GROUP_NAMES if g in pyproject.get("dependency-groups", {})
        )
        project_step: Step | None = Step(
            sync, fallback=f"{sync} --no-install-project", warning=flat, flag="project"
        )
        rest = [*reqs, *_quoted(dev)]
    elif has_build:
        project = q(f".[{','.join(names)}]") if names else "."
        deps = _quoted([*_project_deps(repo, pyproject), *group_reqs])
        main = " ".join([install, "-e", project, *reqs, *_quoted(group_reqs), *cons])
        fallback = " ".join([install, *deps, *reqs, *cons]) if deps or reqs else "true"
        project_step = Step(main, fallback=fallback, warning=flat, flag="project")
        rest = []
    else:
        project_step = None
        rest = [*reqs, *_quoted(group_reqs)]
    # Tools the install above brings are there already; others come pinned where the repo
    # pins them (another requirements file, a pre-commit rev), else unpinned, and said so.
    installed = "\n".join(
        [*_project_deps(repo, pyproject), *group_reqs, *extra_requirements]
        + [(repo / f).read_text(errors="replace") for f in _requirement_files(repo)]
        + [(repo / "uv.lock").read_text(errors="replace") if (repo / "uv.lock").is_file() else ""]
    )
    wanted: list[str] = []
    unpinned: list[str] = []
    for tool in dict.fromkeys(tools):
        if declares(installed, tool):
            continue
        pin = tool_requirement(repo, pyproject, tool)
        wanted.append(pin or tool)
        if pin is None:
            unpinned.append(tool)
    rest += _quoted([*extra_requirements, *wanted])
    # Tools first, the project last: a tool that needs a package of the project's name
    # (pytest needs iniconfig) must not replace the checkout's own editable install.
    if rest:
        steps.append(Step(" ".join([install, *rest, *cons])))
    if project_step is not None:
        steps.append(project_step)
    if pre_commit:
        steps.append(
            Step(
                "pre-commit install-hooks",
                optional=True,
                flag="pre-commit",
                warning="pre-commit's hook environments could not be installed",
            )
        )
    sources = [f"extras {', '.join(names)}"] if names else []
    sources += [f for f in _requirement_files(repo)]
    group_names = [n for n in GROUP_NAMES if n in pyproject.get("dependency-groups", {})]
    sources += [f"dependency groups {', '.join(group_names)}"] if group_names else []
    sources += ["uv.lock (frozen)"] if uv_lock else []
    locks = [n for n in ("poetry.lock", "pdm.lock") if (repo / n).is_file()]
    sources += [f"{locks[0]} (as constraints)"] if constraints and locks else []
    optional = pyproject.get("project", {}).get("optional-dependencies", {})
    declared_reqs = [*group_reqs, *dev, *(r for n in names for r in optional.get(n, []))]
    declared_reqs += [(repo / f).read_text(errors="replace") for f in _requirement_files(repo)]
    return PythonSetup(
        steps=steps, unpinned=unpinned, sources=[*sources, *where],
        names=requirement_names([*declared_reqs, *extra_requirements, *wanted]),
    )  # fmt: skip


def _quoted(items: Iterable[str]) -> list[str]:
    """Requirement lines as shell words; `-r file` and `-c file` lines split in two."""
    words: list[str] = []
    for item in items:
        item = item.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
        if item.startswith("-"):
            try:
                parts = shlex.split(item)
            except ValueError:  # an unbalanced quote: one word as written, for uv to refuse
                parts = [item]
            words += [shlex.quote(w) for w in parts]
        else:
            words.append(shlex.quote(item))
    return words
