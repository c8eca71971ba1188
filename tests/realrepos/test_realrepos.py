"""The gate on real repositories: published releases with a planted bug and its fixes.

Each project (scripts/realrepos.py) is a real release from PyPI, npm or Debian's
archive, as a git repository whose base commit has a bug. The correct fix passes the
gate; a fix that adds one lint error, one type error or breaks one test fails, naming
only that problem, however many pre-existing findings the repository carries; and the
gate never leaves a file changed outside the change, nor a tracked lockfile changed.

These download releases (cached by version) and let setup install from the registries:
they run with AGENTBOT_REALREPOS=1 (.ci/run sets it) and are marked `realrepo`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.models import ValidationReport
from bot.report import validation_table
from bot.validation import run_validation
from scripts.realrepos import PROJECTS, Project, apply, fix, git, prepare

pytestmark = [
    pytest.mark.realrepo,
    pytest.mark.skipif(
        os.environ.get("AGENTBOT_REALREPOS") != "1",
        reason="real repositories: set AGENTBOT_REALREPOS=1 (downloads releases, cached)",
    ),
    pytest.mark.timeout(1200),
]


HERE = f"py{sys.version_info[0]}{sys.version_info[1]}"


@dataclass(frozen=True)
class Expect:
    """What the gate must say about each fix of one project."""

    lint: list[str]
    breaks: list[str]
    types: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    """stage -> where its command came from (the repository's own first)."""
    lockfile: str = ""
    setup_note: str = ""


EXPECT = {
    # tox's typing env runs the repo's pinned mypy (1.9.0) and pyright; tests via tox's env.
    "itsdangerous": Expect(
        lint=["src/itsdangerous/encoding.py:4: F401 `os` imported but unused"],
        types=[
            "src/itsdangerous/encoding.py:45: assignment Incompatible types in assignment"
            ' (expression has type "str", variable has type "int")'
        ],
        breaks=["tests/test_itsdangerous/test_encoding.py::test_base64_bad"],
        # The env for the interpreter present (py311 here), not the first listed.
        sources={"lint": "default", "typecheck": "tox (typing)", "test": f"tox ({HERE})"},
    ),
    # uv.lock (frozen sync); pre-commit hooks from GitHub cannot install here: the defaults
    # run instead, with ruff at the version the pre-commit config pins.
    "iniconfig": Expect(
        lint=["src/iniconfig/__init__.py:6: F401 `sys` imported but unused"],
        types=[
            "src/iniconfig/__init__.py:20: assignment Incompatible types in assignment"
            ' (expression has type "str", variable has type "int")'
        ],
        breaks=["testing/test_iniconfig.py::test_iniconfig_lineof"],
        sources={"format": "default", "lint": "default", "typecheck": "default", "test": "default"},
        lockfile="uv.lock",
        setup_note="pre-commit's hook environments could not be installed",
    ),
    # Every stage from tox envs; ruff's {posargs} become the changed files.
    "cachetools": Expect(
        lint=["src/cachetools/__init__.py:22: F401 `os` imported but unused"],
        breaks=[
            "tests/test_cached.py::CacheWrapperTest::test_decorator_typed",
            "tests/test_cached.py::DictTest::test_decorator_typed",
            "tests/test_cached.py::CustomCacheTest::test_decorator_typed",
            "tests/test_func.py::FIFODecoratorTest::test_decorator_typed",
            "tests/test_func.py::LFUDecoratorTest::test_decorator_typed",
            "tests/test_func.py::LRUDecoratorTest::test_decorator_typed",
            "tests/test_func.py::RRDecoratorTest::test_decorator_typed",
            "tests/test_func.py::TTLDecoratorTest::test_decorator_typed",
            "tests/test_keys.py::CacheKeysTest::test_typedkey",
        ],
        sources={
            "format": "tox (ruff-format)",
            "lint": "tox (ruff)",
            "typecheck": "tox (pyright)",
            "test": "tox (py)",
        },
    ),
    # 51 pre-existing eslint warnings (eslint =8.8.0 pinned by the repo); npm ci.
    "minimist": Expect(
        lint=["index.js:4: no-unused-vars 'unused' is assigned a value but never used"],
        breaks=["nums"],
        sources={"lint": "package.json", "test": "package.json"},
        lockfile="package-lock.json",
    ),
    # pnpm install --frozen-lockfile.
    "is-callable": Expect(
        lint=["index.js:4: no-unused-vars 'unused' is assigned a value but never used"],
        breaks=["not callables"],
        sources={"lint": "package.json", "test": "package.json"},
        lockfile="pnpm-lock.yaml",
    ),
    # A nightly-only bench and 7 pre-existing clippy warnings of a newer toolchain.
    "strsim": Expect(
        lint=["src/lib.rs:60: clippy::len_zero length comparison to zero"],
        breaks=["tests::jaro_winkler_both_empty", "tests::jaro_both_empty"],
        sources={"lint": "default", "test": "CI workflow (ci.yml)"},
    ),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("realrepos")


def changed(repo: Path) -> dict[str, bytes]:
    """Every path git sees as changed or new, with its content: what a commit would take."""
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "-z"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    paths = sorted(entry[3:] for entry in out.split("\0") if entry)
    return {p: (repo / p).read_bytes() if (repo / p).is_file() else b"" for p in paths}


def attempt(
    project: Project,
    repo: Path,
    base: str,
    data: Path,
    edits: list[tuple[str, str, str]],
    *,
    autofix: bool = False,
) -> ValidationReport:
    """The fix plus `edits`, validated as a job would; validation itself changes nothing."""
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "clean", "-q", "-fd")  # not -x: installs (node_modules) are excluded, they stay
    fix(project, repo)
    apply(repo, edits)
    before = changed(repo)
    report = run_validation(
        repo, ValidationConfig(), data_dir=data, base_sha=base, env=os.environ, fix=autofix
    )
    if not autofix:
        assert changed(repo) == before, "validation changed files"
    else:
        assert changed(repo).keys() == before.keys(), "validation changed files outside the change"
    print(f"\n{project.name}:\n{validation_table(report)}")
    return report


def _needs(name: str) -> object:
    """The project as a parameter, skipped where its toolchain is not installed."""
    tool = {"npm": "npm", "debian": "cargo"}.get(PROJECTS[name].registry, "git")
    missing = shutil.which(tool) is None
    return pytest.param(name, marks=pytest.mark.skipif(missing, reason=f"needs {tool}"))


@pytest.mark.parametrize("name", [_needs(n) for n in sorted(PROJECTS)])
def test_the_gate_on_a_real_project(name: str, workdir: Path) -> None:
    project, expect = PROJECTS[name], EXPECT[name]
    repo, base = prepare(project, workdir)
    data = workdir / "data"
    # The correct fix passes, as a job runs it (auto-fix on), with nothing else changed.
    good = attempt(project, repo, base, data, [], autofix=True)
    assert good.passed, good.problems()
    assert list(changed(repo)) == [project.bug[0]]
    for stage, source in expect.sources.items():
        assert next(g for g in good.gates if g.gate_name == stage).source == source, stage
    setup = good.gates[0]
    assert expect.setup_note in setup.warning
    if expect.lockfile:
        assert git(repo, "diff", "--stat", base, "--", expect.lockfile) == ""
    # One new lint error: the lint stage fails naming it alone.
    lint = attempt(project, repo, base, data, project.lint)
    assert not lint.passed
    assert [(g.gate_name, g.new_issues) for g in lint.gates if g.status == "failed"] == [
        ("lint", expect.lint)
    ]
    if project.types:
        typed = attempt(project, repo, base, data, project.types)
        assert [(g.gate_name, g.new_issues) for g in typed.gates if g.status == "failed"] == [
            ("typecheck", expect.types)
        ]
    # A test that passed on the base fails: the test stage fails naming it alone (in any
    # order: cargo's test threads finish as they please).
    broken = attempt(project, repo, base, data, project.breaks)
    failed = [(g.gate_name, sorted(g.new_issues)) for g in broken.gates if g.status == "failed"]
    assert failed == [("test", sorted(expect.breaks))]
    assert sorted(broken.new_failures) == sorted(expect.breaks)
