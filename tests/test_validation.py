"""The validation pipeline and `agentbot validate` on real git repos, real tools, no network.

The Python stages run in the per-workspace venv the pipeline's own zero-config setup
creates. pip installs offline: the test tools (ruff, mypy, pytest and what they need)
come from a wheelhouse repacked from this venv's installed distributions, and the demo
project builds with a dependency-free in-tree PEP 517 backend. Every test reuses one
workspace path, so the venv is created once per session and later runs find the setup
cached, as a bot re-validating one workspace would.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

from bot.cli import load_app
from bot.config import ValidationConfig
from bot.models import QualityGateResult, ValidationReport
from bot.validation import run_validation
from bot.validation.baseline import cache_path
from bot.validation.environment import repository_key, workspace_key

TOOLS = ("ruff", "mypy", "pytest")

# --- an offline wheelhouse from this venv's installed distributions --------------------------


def _closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The distributions `names` need (their requirements whose markers hold here)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        dist = metadata.distribution(name)
        seen[name] = dist
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def _repack(dist: metadata.Distribution, dest: Path) -> None:
    """Write an installed distribution back into a wheel (same files, tags and metadata)."""
    files = list(dist.files or [])
    info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    tags = re.findall(r"^Tag: (\S+)$", dist.read_text("WHEEL") or "", re.MULTILINE)
    # One file name for every tag (py2.py3-none-any), as the wheel was published.
    parts = [dict.fromkeys(t.split("-")[i] for t in tags) for i in range(3)]
    tags = ["-".join(".".join(p) for p in parts)]
    generated = {
        ep.name for ep in dist.entry_points if ep.group in ("console_scripts", "gui_scripts")
    }
    stem = info.removesuffix(".dist-info")
    data = f"{stem}.data/scripts/"
    records: list[tuple[str, str, str]] = []
    path = dest / f"{stem}-{tags[0]}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for f in files:
            rel = str(f)
            if "__pycache__" in f.parts or rel.endswith(".pyc"):
                continue
            if rel.startswith(".."):
                if f.name in generated or f.parts[-2] != "bin":
                    continue  # pip writes console scripts itself
                arc = data + f.name
            elif f.parts[0] == info and f.name in (
                "RECORD",
                "INSTALLER",
                "REQUESTED",
                "direct_url.json",
            ):
                continue
            else:
                arc = rel
            src = Path(str(f.locate()))
            body = src.read_bytes()
            zi = zipfile.ZipInfo(arc)
            zi.external_attr = (src.stat().st_mode & 0o777 | 0o100000) << 16
            zf.writestr(zi, body)
            digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=")
            records.append((arc, f"sha256={digest.decode()}", str(len(body))))
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([*records, (f"{info}/RECORD", "", "")])
        zf.writestr(f"{info}/RECORD", out.getvalue())


# --- the demo project ------------------------------------------------------------------------

BACKEND = '''\
"""A dependency-free PEP 517/660 build backend: the editable wheel holds a .pth to src/."""

import base64
import hashlib
import pathlib
import tomllib
import zipfile


def _meta():
    project = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["project"]
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    return project["name"], project["version"], "\\n".join(lines) + "\\n"


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, meta = _meta()
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.pth": str(pathlib.Path("src").resolve()) + "\\n",
        f"{info}/METADATA": meta,
        f"{info}/WHEEL": "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w") as zf:
        record = []
        for arc, text in files.items():
            zf.writestr(arc, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
            record.append(f"{arc},sha256={digest.decode()},{len(text.encode())}")
        zf.writestr(f"{info}/RECORD", "\\n".join([*record, f"{info}/RECORD,,"]) + "\\n")
    return wheel


build_wheel = build_editable
'''

PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "demo"
version = "0.1.0"

[project.optional-dependencies]
test = ["pytest"]

[tool.mypy]
strict = true
files = ["src"]

[tool.ruff]
extend-exclude = ["_build"]

[tool.ruff.format]
quote-style = "double"
"""

CODE = '''\
"""Demo package."""


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''

TESTS = """\
from demo import add


def test_add():
    assert add(1, 2) == 3
"""

FAILING_TEST = """

def test_add_again():
    assert add(2, 2) == 5
"""

NO_TYPES = ValidationConfig(typecheck=None)  # mypy costs a second a run; most tests need no types
BAD_FORMAT = 'VALUES = {  "a":1,\n    "b" : 2}\n'
BAD_LINT = '"""Util."""\n\nimport os\n\nNAME = "util"\n'


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` with a fixed identity; return stdout."""
    proc = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def write(repo: Path, files: dict[str, str]) -> None:
    """Write files (paths relative to `repo`)."""
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Path, message: str) -> str:
    """Commit everything; return the SHA."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def build_wheelhouse(dest: Path) -> Path:
    """Wheels of the profile's tools and their dependencies, from this venv; no network."""
    dest.mkdir(parents=True, exist_ok=True)
    # pre-commit for the hooks tests; setuptools to build projects that name no backend.
    for dist in _closure((*TOOLS, "pre-commit", "setuptools")):
        _repack(dist, dest)
    return dest


def offline_env(wheelhouse: Path) -> dict[str, str]:
    """This process's environment with pip and uv pointed at the wheelhouse only (no network).

    The stage environment is an allowlist (bot.secrets): an index URL and find-links pass
    it, a "no index" switch does not, so the index is an empty local one.
    """
    empty = wheelhouse.parent / f"{wheelhouse.name}-empty-index"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_INDEX_URL=empty.as_uri(), PIP_FIND_LINKS=str(wheelhouse))
    env.update(
        UV_INDEX_URL=empty.as_uri(), UV_FIND_LINKS=str(wheelhouse), PIP_CONFIG_FILE=os.devnull
    )
    return env


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))


@pytest.fixture(scope="session")
def base_env(wheelhouse: Path) -> dict[str, str]:
    return offline_env(wheelhouse)


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("validation")


@pytest.fixture
def data_dir(session_dir: Path) -> Path:
    """Shared by every test: the workspace's venv and setup marker live here."""
    return session_dir / "data"


@pytest.fixture
def repo(session_dir: Path) -> Path:
    """A fresh demo repo at the one workspace path every test uses (so its venv is reused)."""
    path = session_dir / "ws" / "demo"
    clone = session_dir / "demo-clone-id"
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    git(path, "init", "-q")
    # The same clone for setup (bot.validation.setup_marker): a new one would set up afresh.
    clone.write_text(clone.read_text() if clone.exists() else "demo")
    (path / ".git" / "agentbot-clone-id").write_text(clone.read_text())
    write(
        path,
        {
            "pyproject.toml": PYPROJECT,
            "_build/backend.py": BACKEND,
            "src/demo/__init__.py": CODE,
            "tests/test_demo.py": TESTS,
            ".gitignore": "",
        },
    )
    commit(path, "initial")
    return path


def validate(repo: Path, data_dir: Path, env: dict[str, str], **kw: object) -> ValidationReport:
    config = kw.pop("config", ValidationConfig())
    assert isinstance(config, ValidationConfig)
    return run_validation(repo, config, data_dir=data_dir, env=env, **kw)  # type: ignore[arg-type]


def gate(report: ValidationReport, name: str) -> QualityGateResult:
    return next(g for g in report.gates if g.gate_name == name)


def statuses(report: ValidationReport) -> dict[str, str]:
    return {g.gate_name: g.status for g in report.gates}


def broken(repo: Path, *, committed: bool = True) -> None:
    """A format error, a lint error and a failing test (left uncommitted: a change to fix)."""
    write(
        repo,
        {
            "src/demo/values.py": BAD_FORMAT,
            "src/demo/util.py": BAD_LINT,
            "tests/test_demo.py": TESTS + FAILING_TEST,
        },
    )
    if committed:
        commit(repo, "break things")


# --- setup -----------------------------------------------------------------------------------


def test_a_project_install_that_could_not_reach_its_host_is_tried_again(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # A package host down (here: a build requirement on a closed port) falls back to "the
    # dependencies only"; cached, that would stand after the outage, the project never
    # installed again until its dependency files changed.
    down = 'requires = ["backend-dep @ http://127.0.0.1:9/backend_dep-1.0.tar.gz"]'
    pyproject = (repo / "pyproject.toml").read_text().replace("requires = []", down, 1)
    write(repo, {"pyproject.toml": pyproject})
    commit(repo, "a build requirement on a host that is down")
    first = gate(validate(repo, data_dir, base_env), "setup")
    assert first.status == "passed", first
    assert "could not be installed" in first.warning and "tried again" in first.warning
    again = gate(validate(repo, data_dir, base_env), "setup")
    assert again.status != "skipped" and "cached" not in (again.warning or ""), again
    assert again.command_result is not None and "backend_dep" in again.command_result.output


def test_zero_config_setup_makes_a_venv_under_the_data_dir_once(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    first = validate(repo, data_dir, base_env)
    assert first.passed, first
    venv = data_dir / "packages" / repository_key(repo) / "venvs" / workspace_key(repo)
    for tool in TOOLS:
        assert (venv / "bin" / tool).is_file(), tool
    # Its own venv: not agentbot's, which it must not even see on PATH.
    assert Path(sys.prefix).resolve() != venv.resolve()
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import demo, sys; print(demo.__file__)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip() == str(repo / "src" / "demo" / "__init__.py")  # pip install -e .

    again = validate(repo, data_dir, base_env)
    setup = gate(again, "setup")
    assert setup.status == "skipped" and "cached" in setup.warning
    assert setup.command_result is None

    setup = gate(first, "setup")
    # uv (agentbot depends on it) installs the project editable with its test extra.
    assert "uv" in setup.command and " pip install " in setup.command
    assert "-e '.[test]'" in setup.command
    # pytest comes from the `test` extra; the tools the repo doesn't pin are added, and said so.
    assert " ruff mypy && " in setup.command and setup.command.endswith("-e '.[test]'")
    assert "not pinned by the repo, latest used: ruff, mypy" in setup.warning
    marker = json.loads((data_dir / "setup" / f"{workspace_key(repo)}.json").read_text())
    assert marker["command"] == setup.command


def test_setup_runs_again_only_when_a_dependency_file_changes(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    path = session_dir / "js-setup"
    path.mkdir()
    write(path, {"package.json": '{"name": "x", "version": "1.0.0"}\n'})
    log = session_dir / "setup.log"
    cfg = ValidationConfig(setup=f"echo ran >> {log}", format=None, lint=None, test="true")
    runs = [gate(validate(path, data_dir, base_env, config=cfg), "setup") for _ in range(2)]
    assert [g.status for g in runs] == ["passed", "skipped"]
    assert log.read_text() == "ran\n"
    (path / "README.md").write_text("not a dependency file\n")
    assert gate(validate(path, data_dir, base_env, config=cfg), "setup").status == "skipped"
    write(path, {"package.json": '{"name": "x", "version": "1.0.1"}\n'})
    assert gate(validate(path, data_dir, base_env, config=cfg), "setup").status == "passed"
    assert log.read_text() == "ran\nran\n"
    # A failed setup leaves no marker: it runs again; the stages still run what can run.
    bad = cfg.model_copy(update={"setup": f"echo ran >> {log}; exit 3"})
    for _ in range(2):
        report = validate(path, data_dir, base_env, config=bad)
        assert gate(report, "setup").status == "failed" and not report.passed
        assert gate(report, "test").command_result is not None  # ran (`true`: uncounted)
    assert log.read_text() == "ran\n" * 4


def test_stage_environment_drops_secrets_and_agentbots_venv(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    env = {
        **base_env,
        "GITHUB_TOKEN": "ghs_secret1",
        "ANTHROPIC_API_KEY": "sk-ant-secret2",
        "MY_SECRET_THING": "secret3",
        "SAFE_SETTING": "visible",
    }
    cfg = ValidationConfig(format=None, lint=None, typecheck=None, test="env")
    report = validate(repo, data_dir, env, config=cfg)
    out = gate(report, "test").command_result
    assert out is not None
    # An allowlist (bot.secrets): a variable not on it is not inherited, however harmless.
    assert "SAFE_SETTING" not in out.output and "CI=true" in out.output
    for leaked in ("GITHUB_TOKEN", "ANTHROPIC_API_KEY", "MY_SECRET_THING", "secret"):
        assert leaked not in out.output
    path = re.search(r"^PATH=(.*)$", out.output, re.M)
    assert path is not None
    entries = path.group(1).split(os.pathsep)
    venv = data_dir.resolve() / "packages" / repository_key(repo) / "venvs" / workspace_key(repo)
    assert entries[0] == str(venv / "bin")
    assert str(Path(sys.prefix) / "bin") not in entries


# --- stages ----------------------------------------------------------------------------------


def test_each_stage_is_reported(repo: Path, data_dir: Path, base_env: dict[str, str]) -> None:
    broken(repo)
    seen: list[str] = []
    report = validate(repo, data_dir, base_env, on_stage=lambda g: seen.append(g.gate_name))
    assert statuses(report) == {
        "setup": gate(report, "setup").status,  # cached, unless an earlier test's config differed
        "format": "failed",
        "lint": "failed",
        "typecheck": "passed",
        "test": "failed",
    }
    assert seen == ["setup", "format", "lint", "typecheck", "test"]
    assert not report.passed
    assert report.failing_gate is not None and report.failing_gate.gate_name == "format"
    fmt, lint = gate(report, "format").command_result, gate(report, "lint").command_result
    assert fmt is not None and "src/demo/values.py" in fmt.output
    assert lint is not None and "F401" in lint.output
    assert report.tests is not None
    assert (report.tests.passed_count, report.tests.failed_count) == (1, 1)
    assert report.tests.failed_tests == ["tests/test_demo.py::test_add_again"]
    assert gate(report, "test").issues_found == ["tests/test_demo.py::test_add_again"]
    # Validation leaves the workspace as it found it (tool caches live in the data dir).
    assert git(repo, "status", "--porcelain", "--ignored") == ""


def test_fix_runs_format_and_lint_fixers_and_leaves_the_test_failure(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # Without a base, the fixers take the whole tree (here only the uncommitted change is bad).
    broken(repo, committed=False)
    report = validate(repo, data_dir, base_env, fix=True)
    assert statuses(report) == {
        "setup": gate(report, "setup").status,
        "format": "passed",
        "lint": "passed",
        "typecheck": "passed",
        "test": "failed",
    }
    assert gate(report, "format").auto_fixed and gate(report, "lint").auto_fixed
    assert not gate(report, "test").auto_fixed
    assert not report.passed and report.fix_rounds_used == 0
    assert "import os" not in (repo / "src/demo/util.py").read_text()
    assert (repo / "src/demo/values.py").read_text() == 'VALUES = {"a": 1, "b": 2}\n'
    assert "test_add_again" in (repo / "tests/test_demo.py").read_text()


def test_without_a_base_fix_takes_the_whole_tree_it_judges(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # Without --base the gate judges the whole tree, so a committed lint or format error
    # fails it; --fix must then fix that same tree, not only what differs from HEAD.
    broken(repo, committed=True)
    assert statuses(validate(repo, data_dir, base_env))["lint"] == "failed"
    report = validate(repo, data_dir, base_env, fix=True)
    assert statuses(report)["format"] == "passed" and gate(report, "format").auto_fixed
    assert statuses(report)["lint"] == "passed" and gate(report, "lint").auto_fixed
    assert "import os" not in (repo / "src/demo/util.py").read_text()
    assert (repo / "src/demo/values.py").read_text() == 'VALUES = {"a": 1, "b": 2}\n'


def test_fix_formats_only_the_lines_the_change_touched(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # The base is not formatted to its own config; the PR must carry the change, not a
    # re-format of the lines nobody touched (issue #26 item 9).
    untouched = 'X = {  "a":1,\n    "b" : 2}\n\n\ndef f( a ):\n    return a\n'
    write(repo, {"src/demo/values.py": untouched})
    base = commit(repo, "unformatted base")
    # A new file, unformatted, makes the format stage fail: its fixer then runs on both.
    write(
        repo,
        {"src/demo/values.py": untouched + "\n\nY = [1,2 ,3]\n", "src/demo/new.py": "Z = ( 1 )\n"},
    )
    report = validate(repo, data_dir, base_env, config=NO_TYPES, base_sha=base, fix=True)
    text = (repo / "src/demo/values.py").read_text()
    assert text == untouched + "\n\nY = [1, 2, 3]\n"
    assert (repo / "src/demo/new.py").read_text() == "Z = 1\n"
    assert gate(report, "format").status != "failed", gate(report, "format")


def test_fix_callback_gets_the_failing_report_and_a_fix_makes_it_pass(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    write(repo, {"tests/test_demo.py": TESTS + FAILING_TEST})
    commit(repo, "failing test")
    seen: list[ValidationReport] = []

    def fixer(report: ValidationReport) -> None:
        seen.append(report)
        write(repo, {"tests/test_demo.py": TESTS + FAILING_TEST.replace("== 5", "== 4")})

    cfg = NO_TYPES.model_copy(update={"fix_rounds": 3})
    report = validate(repo, data_dir, base_env, config=cfg, fix=True, fix_callback=fixer)
    assert report.passed and report.fix_rounds_used == 1
    assert len(seen) == 1 and not seen[0].passed
    assert seen[0].failing_gate is not None and seen[0].failing_gate.gate_name == "test"
    assert seen[0].tests is not None and seen[0].tests.failed_tests == [
        "tests/test_demo.py::test_add_again"
    ]
    assert report.tests is not None and report.tests.passed_count == 2


def test_fix_callback_that_does_not_fix_uses_every_round(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    write(repo, {"tests/test_demo.py": TESTS + FAILING_TEST})
    commit(repo, "failing test")
    calls: list[bool] = []
    cfg = NO_TYPES.model_copy(update={"fix_rounds": 2})
    report = validate(
        repo,
        data_dir,
        base_env,
        config=cfg,
        fix=True,
        fix_callback=lambda r: calls.append(r.passed),
    )
    assert calls == [False, False]
    assert report.fix_rounds_used == 2 and not report.passed
    # Without fix=True the callback is never called.
    calls.clear()
    validate(repo, data_dir, base_env, config=cfg, fix_callback=lambda r: calls.append(r.passed))
    assert calls == []


def test_a_repo_without_tests_says_so_plainly_and_never_passes_the_test_stage(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    (repo / "tests" / "test_demo.py").unlink()
    commit(repo, "no tests yet")
    report = validate(repo, data_dir, base_env, config=ValidationConfig(typecheck=None))
    test = gate(report, "test")
    assert test.status == "skipped" and test.warning.startswith("no tests in this repository")
    assert test.command_result is not None and test.command_result.exit_code == 5
    assert report.tests is not None and report.tests.test_count == 0
    assert report.passed and not report.unverified  # format and lint ran; no tests to run


def test_tests_the_runner_does_not_collect_are_unverified_not_passed(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    """A `test.py` at the root: pytest collects nothing (`0/0 passed` used to be a green)."""
    (repo / "tests" / "test_demo.py").rename(repo / "test.py")
    commit(repo, "tests in test.py")
    report = validate(repo, data_dir, base_env, config=ValidationConfig(typecheck=None))
    test = gate(report, "test")
    assert test.status == "unverified" and "found no test to run" in test.warning
    assert report.unverified == [test] and not test.passed


# --- skipped stages: configuration, missing tools, nothing to validate -----------------------


def test_a_stage_set_to_null_is_skipped_as_disabled(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    cfg = ValidationConfig(typecheck=None, lint="ruff check --select E501 --line-length 10 .")
    report = validate(repo, data_dir, base_env, config=cfg)
    assert gate(report, "typecheck").status == "skipped"
    assert gate(report, "typecheck").warning == "disabled in config"
    lint = gate(report, "lint")  # a configured command replaces the default one
    assert lint.status == "failed" and lint.command_result is not None
    assert "E501" in lint.command_result.output


def test_missing_tools_are_skipped_with_a_warning_never_passed(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # setup: null -> no workspace venv; with a bare PATH none of the tools exists.
    bare = {**base_env, "PATH": "/usr/bin:/bin"}
    assert not any(shutil.which(t, path=bare["PATH"]) for t in TOOLS)
    report = validate(repo, data_dir, bare, config=ValidationConfig(setup=None))
    assert statuses(report) == {
        "setup": "skipped",
        "format": "skipped",
        "lint": "skipped",
        "typecheck": "skipped",
        "test": "unverified",  # the tests should have run: not just skipped
    }
    assert gate(report, "setup").warning == "disabled in config"
    assert "`ruff` is not installed" in gate(report, "format").warning
    assert "`pytest` is not installed" in gate(report, "test").warning
    assert not report.passed
    assert report.warnings == ["nothing was validated: every stage was skipped"]


def test_one_missing_tool_is_skipped_and_the_rest_still_decides(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    cfg = ValidationConfig(lint="no-such-linter-xyz .", test="sh -c 'no-such-runner-xyz -q'")
    report = validate(repo, data_dir, base_env, config=cfg)
    lint, test = gate(report, "lint"), gate(report, "test")
    assert lint.status == "skipped" and "`no-such-linter-xyz` is not installed" in lint.warning
    # Found only when it ran (exit 127 from the shell): unverified, not failed or passed.
    assert test.status == "unverified" and "`no-such-runner-xyz` is not installed" in test.warning
    assert test.command_result is not None and test.command_result.exit_code == 127
    assert report.passed and report.unverified == [test]  # format and typecheck passed


def test_an_unknown_repo_validates_nothing_and_fails(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    path = session_dir / "unknown"
    path.mkdir(exist_ok=True)
    (path / "README.md").write_text("docs only\n")
    report = validate(path, data_dir, base_env)
    assert report.profile == "unknown" and not report.passed
    assert all(g.status == "skipped" for g in report.gates)
    assert "no language profile detected" in gate(report, "test").warning
    # A configured command runs whatever the profile.
    counted = validate(path, data_dir, base_env, config=ValidationConfig(test="true"))
    test = gate(counted, "test")
    assert test.status == "unverified" and "test counts not recognised" in test.warning
    assert not counted.passed and test.command_result is not None


# --- timeout ---------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for its reaper is gone too


def test_a_hanging_test_command_is_killed_at_the_timeout(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    cfg = ValidationConfig(
        setup=None,
        format=None,
        lint=None,
        typecheck=None,
        test="sleep 100 & echo $! > ../child.pid; wait",
        timeout_seconds=1,
    )
    t0 = time.monotonic()
    report = validate(repo, data_dir, base_env, config=cfg)
    assert time.monotonic() - t0 < 10
    test = gate(report, "test")
    assert test.status == "timed_out" and not report.passed
    assert test.command_result is not None and test.command_result.timed_out
    child = int((repo.parent / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


# --- baseline --------------------------------------------------------------------------------

PRE_FAILING = """

def test_pre():
    assert add(1, 1) == 3  # fails on the base commit already
"""


def with_base_failure(repo: Path) -> str:
    write(repo, {"tests/test_demo.py": TESTS + PRE_FAILING})
    return commit(repo, "base with a failing test")


def test_baseline_fails_the_gate_only_on_failures_the_change_introduced(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    base = with_base_failure(repo)
    # The change breaks add(): test_add fails now, but passed on the base. If the base run
    # imported the workspace's (editable) code instead of its own, it would count as old.
    write(repo, {"src/demo/__init__.py": CODE.replace("a + b", "a - b")})
    commit(repo, "break add")
    # Checking the base out must not run the repo's hooks (nor hand them agentbot's secrets).
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho ran $GITHUB_TOKEN >> {repo.parent / 'hook.log'}\n")
    hook.chmod(0o755)
    env = {**base_env, "GITHUB_TOKEN": "ghs_secret"}
    report = validate(repo, data_dir, env, config=NO_TYPES, base_sha=base)
    assert not (repo.parent / "hook.log").exists()
    assert not report.passed
    assert report.new_failures == ["tests/test_demo.py::test_add"]
    assert report.preexisting_failures == ["tests/test_demo.py::test_pre"]
    assert gate(report, "test").status == "failed"
    # The base ran in a temporary worktree: the workspace is untouched and no worktree is left.
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    (cache,) = (data_dir / "baselines" / base).glob("test-*.json")
    cached = json.loads(cache.read_text())
    assert cached["tests"]["failed_tests"] == ["tests/test_demo.py::test_pre"]


def test_baseline_passes_a_change_that_adds_no_failure(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    base = with_base_failure(repo)
    write(
        repo,
        {
            "tests/test_more.py": TESTS.replace("test_add", "test_more"),
        },
    )
    commit(repo, "add a passing test")
    report = validate(repo, data_dir, base_env, config=NO_TYPES, base_sha=base)
    assert report.passed, report
    test = gate(report, "test")
    assert test.status == "passed" and "also fail on the base commit" in test.warning
    assert report.new_failures == []
    assert report.preexisting_failures == ["tests/test_demo.py::test_pre"]
    assert report.tests is not None and report.tests.failed_count == 1
    # Without a base the same tree fails: the baseline is what lets it through.
    assert not validate(repo, data_dir, base_env, config=NO_TYPES).passed


def test_a_same_size_change_within_the_second_is_what_the_tests_run(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    # CI found it: the next test's fresh repo, at the same path, had the same-size `a - b`
    # as the last one's, and Python ran the cached bytecode of the old text.
    env = {k: v for k, v in base_env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    source = repo / "src" / "demo" / "__init__.py"
    stamp = int(time.time())
    write(repo, {"src/demo/__init__.py": CODE.replace("a + b", "a - b")})
    os.utime(source, (stamp, stamp))
    assert not validate(repo, data_dir, env, config=NO_TYPES).passed
    write(repo, {"src/demo/__init__.py": CODE})
    os.utime(source, (stamp, stamp))
    assert validate(repo, data_dir, env, config=NO_TYPES).passed


def test_baseline_is_read_from_the_cache_by_commit_sha(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    base = with_base_failure(repo)
    write(repo, {"tests/test_demo.py": TESTS + PRE_FAILING + FAILING_TEST})
    commit(repo, "another failure")
    command = "pytest -q -p no:cacheprovider"
    cache = cache_path(data_dir.resolve(), base, "test", command)
    cache.parent.mkdir(parents=True, exist_ok=True)
    fake = {
        "passed": False, "test_count": 3, "passed_count": 1, "failed_count": 2,
        "failed_tests": ["tests/test_demo.py::test_pre", "tests/test_demo.py::test_add_again"],
    }  # fmt: skip
    cache.write_text(json.dumps({"sha": base, "command": command, "exit_code": 1, "tests": fake}))
    report = validate(repo, data_dir, base_env, config=NO_TYPES, base_sha=base)
    assert report.passed and report.new_failures == []  # the (doctored) cache was believed
    # Another test command is another baseline: the cache entry is not reused for it.
    other = NO_TYPES.model_copy(update={"test": "python -m " + command})
    report = validate(repo, data_dir, base_env, config=other, base_sha=base)
    assert report.new_failures == ["tests/test_demo.py::test_add_again"]
    other_cache = cache_path(data_dir.resolve(), base, "test", "python -m " + command)
    assert json.loads(other_cache.read_text())["command"] == "python -m " + command


def test_an_unknown_base_counts_every_failure_as_new(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    write(repo, {"tests/test_demo.py": TESTS + FAILING_TEST})
    commit(repo, "failing")
    report = validate(repo, data_dir, base_env, config=NO_TYPES, base_sha="0" * 40)
    assert not report.passed
    assert report.new_failures == ["tests/test_demo.py::test_add_again"]
    assert "baseline unavailable" in gate(report, "test").warning


# --- the CLI ---------------------------------------------------------------------------------


def cli(args: list[str], data_dir: Path, base_env: dict[str, str]) -> tuple[int, str, str]:
    keep = ("PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE", "UV_INDEX_URL", "UV_FIND_LINKS")
    env = {k: base_env[k] for k in keep}
    env.update(AGENTBOT_DATA_DIR=str(data_dir), COLUMNS="200")
    result = CliRunner().invoke(load_app(), ["validate", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def test_cli_prints_a_table_and_exits_0_when_the_gate_passes(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    write(repo, {".github/agentbot.yml": "validation:\n  typecheck: null\n"})
    commit(repo, "config")
    code, out, err = cli(["--repo", str(repo)], data_dir, base_env)
    assert code == 0, out + err
    rows = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("│")}
    assert "passed" in rows["format"] and "passed" in rows["test"]
    assert "1/1 passed" in rows["test"]
    assert "disabled in config" in rows["typecheck"]  # read from .github/agentbot.yml
    assert "gate PASSED" in out
    assert "  test: passed" in err  # progress, one line per stage


def test_cli_fix_json_fixes_format_and_lint_and_exits_1_on_the_test(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    broken(repo, committed=False)
    code, out, _ = cli(["--repo", str(repo), "--fix", "--json"], data_dir, base_env)
    assert code == 1
    report = ValidationReport.model_validate_json(out)
    assert statuses(report)["format"] == "passed" and gate(report, "format").auto_fixed
    assert statuses(report)["lint"] == "passed" and gate(report, "lint").auto_fixed
    assert statuses(report)["test"] == "failed"
    assert report.tests is not None and report.tests.failed_tests == [
        "tests/test_demo.py::test_add_again"
    ]
    assert "import os" not in (repo / "src/demo/util.py").read_text()


def test_cli_base_ref_reports_preexisting_failures(
    repo: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    with_base_failure(repo)
    git(repo, "tag", "base")
    write(repo, {".github/agentbot.yml": "validation:\n  typecheck: null\n"})
    commit(repo, "config only")
    code, out, _ = cli(["--repo", str(repo), "--json", "--base", "base"], data_dir, base_env)
    assert code == 0
    report = ValidationReport.model_validate_json(out)
    assert report.preexisting_failures == ["tests/test_demo.py::test_pre"]


def test_cli_bad_input_exits_2_with_a_clear_message(
    repo: Path, data_dir: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    code, _, err = cli(["--repo", str(tmp_path / "nope")], data_dir, base_env)
    assert code == 2 and "Invalid value for '--repo'" in err and "does not exist" in err
    write(repo, {".github/agentbot.yml": "validation:\n  tset: pytest\n"})
    code, _, err = cli(["--repo", str(repo)], data_dir, base_env)
    assert code == 2 and "validation.tset" in err and "unknown key" in err
    write(repo, {".github/agentbot.yml": ""})
    code, _, err = cli(["--repo", str(repo), "--base", "no-such-ref"], data_dir, base_env)
    assert code == 2 and "--base no-such-ref: no such commit" in err


# --- other languages -------------------------------------------------------------------------

NODE_TEST = """\
const { test } = require("node:test");
const assert = require("node:assert");

test("adds", () => { assert.strictEqual(1 + 1, 2); });
test("breaks", () => { assert.strictEqual(1 + 1, 3); });
test.skip("later", () => {});
"""


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")
def test_javascript_repo_runs_its_package_json_test_script(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    path = session_dir / "js"
    path.mkdir()
    git(path, "init", "-q")
    write(
        path,
        {
            "package.json": json.dumps(
                {"name": "js", "version": "1.0.0", "scripts": {"test": "node --test"}}
            ),
            "test/calc.test.js": NODE_TEST,
        },
    )
    commit(path, "js")
    report = validate(path, data_dir, base_env)
    assert report.profile == "javascript"
    assert statuses(report) == {
        "setup": "passed",  # npm install, writing no lockfile into the workspace
        "format": "skipped",
        "lint": "skipped",
        "typecheck": "skipped",
        "test": "failed",
    }
    assert gate(report, "format").warning == "no formatter adopted by this repo (prettier)"
    assert gate(report, "lint").warning == "no eslint configuration in this repo"
    assert report.tests is not None
    assert (report.tests.passed_count, report.tests.failed_count, report.tests.skipped_count) == (
        1,
        1,
        1,
    )
    assert report.tests.failed_tests == ["breaks"]
    assert not (path / "package-lock.json").exists()


GO_CODE = "package calc\n\nfunc Add(a, b int) int {\n\treturn a+b\n}\n"
GO_TEST = """\
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("bad")
	}
}

func TestBroken(t *testing.T) {
	if Add(2, 2) != 5 {
		t.Fatal("still bad")
	}
}
"""


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
def test_go_repo_uses_gofmt_vet_build_and_go_test(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    path = session_dir / "go"
    path.mkdir()
    git(path, "init", "-q")
    write(path, {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc_test.go": GO_TEST})
    commit(path, "go")
    # The change to fix: auto-fix formats only what differs from HEAD.
    write(path, {"calc.go": GO_CODE.replace("a+b", "a  +  b").replace("\t", "  ")})
    env = {**base_env, "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    report = validate(path, data_dir, env, fix=True)
    assert report.profile == "go"
    assert statuses(report) == {
        "setup": "passed",
        "format": "passed",
        "lint": "passed",
        "typecheck": "passed",
        "test": "failed",
    }
    assert gate(report, "format").auto_fixed  # gofmt -w
    assert (path / "calc.go").read_text() == GO_CODE.replace("a+b", "a + b")
    assert report.tests is not None
    assert (report.tests.passed_count, report.tests.failed_count) == (1, 1)
    assert report.tests.failed_tests == ["example.com/calc.TestBroken"]


RUST_LIB = """\
pub fn add(a: i32, b: i32) -> i32 {
    let sum = a + b;
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn broken() {
        assert_eq!(add(2, 2), 5);
    }
}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_rust_repo_fixes_format_but_not_clippy(
    session_dir: Path, data_dir: Path, base_env: dict[str, str]
) -> None:
    path = session_dir / "rust"
    path.mkdir()
    git(path, "init", "-q")
    write(
        path,
        {
            "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
            ".gitignore": "/target\n",
        },
    )
    commit(path, "rust")
    write(path, {"src/lib.rs": RUST_LIB.replace("a + b", "a+b")})  # the change, to fix
    report = validate(path, data_dir, base_env, fix=True)
    assert report.profile == "rust"
    assert statuses(report) == {
        "setup": "passed",
        "format": "passed",
        "lint": "failed",  # a new clippy warning (let_and_return); no fixer for it
        "typecheck": "passed",
        "test": "failed",
    }
    assert gate(report, "setup").command == "cargo fetch"  # network only in setup
    assert gate(report, "format").auto_fixed and not gate(report, "lint").auto_fixed
    assert gate(report, "lint").new_issues == [
        "src/lib.rs:3: clippy::let_and_return returning the result of a `let` binding from a block"
    ]
    assert (path / "src/lib.rs").read_text() == RUST_LIB
    assert report.tests is not None
    assert (report.tests.passed_count, report.tests.failed_count) == (1, 1)
    assert report.tests.failed_tests == ["tests::broken"]


def test_a_data_dir_inside_the_checkout_is_kept_out_of_git(
    repo: Path, base_env: dict[str, str]
) -> None:
    counted = "echo '1 passed in 0.01s'"  # a summary the test stage counts
    cfg = ValidationConfig(setup=None, format=None, lint=None, typecheck=None, test=counted)
    report = validate(repo, repo / ".agentbot", base_env, config=cfg)
    assert report.passed
    assert (repo / ".agentbot" / ".gitignore").read_text() == "*\n"
    assert git(repo, "status", "--porcelain") == ""
