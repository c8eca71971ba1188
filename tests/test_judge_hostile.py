"""A change cannot redefine its judge (issue #25, item 6): a hostile change that breaks the code
and rewrites how it is judged (a pytest plugin through every file pytest reads its configuration
from, a Makefile recipe, a package.json script) gets no green; the files are named.

Real git repositories, the real pipeline, real pytest, make and node.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ValidationConfig
from bot.judge_files import changed_judge, is_judge_file
from bot.models import ValidationReport
from bot.validation import run_validation
from bot.validation.base_judge import judge_changes, judged_by_base

pytestmark = pytest.mark.slow

PY = sys.executable
PYTEST = f"{PY} -m pytest -q -p no:cacheprovider"
CALC = "def add(a: int, b: int) -> int:\n    return a + b\n"
BROKEN = "def add(a: int, b: int) -> int:\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
# Every test report says "passed", whatever happened.
PLUGIN = """import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    report.longrepr = None
    return report
"""
PYTEST_CONFIGS = {
    "pytest.ini": "[pytest]\naddopts = -p judge_plugin\n",
    ".pytest.ini": "[pytest]\naddopts = -p judge_plugin\n",
    "pytest.toml": '[pytest]\naddopts = ["-p", "judge_plugin"]\n',
    ".pytest.toml": '[pytest]\naddopts = ["-p", "judge_plugin"]\n',
    "tox.ini": "[pytest]\naddopts = -p judge_plugin\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p judge_plugin\n",
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n'
    '[tool.pytest.ini_options]\naddopts = "-p judge_plugin"\n',
}
CONFTEST = f"import sys\n\nsys.path.insert(0, '.')\n\n{PLUGIN}"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def repo_with(tmp: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A git repository holding `files` in one commit; (its path, the commit)."""
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD")


def validate(repo: Path, base: str, test: str, data: Path) -> ValidationReport:
    cfg = ValidationConfig(setup=None, format=None, lint=None, typecheck=None, test=test)
    return run_validation(repo, cfg, data_dir=data, base_sha=base, fix=False)


def test_gate(report: ValidationReport) -> str:
    return next(g.status for g in report.gates if g.gate_name == "test")


test_gate.__test__ = False  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [*PYTEST_CONFIGS, "conftest.py"])
def test_a_pytest_plugin_through_any_config_file_is_no_green(tmp_path: Path, name: str) -> None:
    base_files = {"calc.py": CALC, "tests/test_calc.py": TEST}
    if name == "pyproject.toml":
        base_files[name] = '[project]\nname = "calc"\nversion = "0"\n'
    repo, base = repo_with(tmp_path, base_files)
    (repo / "calc.py").write_text(BROKEN)
    if name == "conftest.py":
        (repo / name).write_text(CONFTEST)
    else:
        (repo / "judge_plugin.py").write_text(PLUGIN)
        (repo / name).write_text(PYTEST_CONFIGS[name])
    # The plugin does turn the run green: without the base's judge it would pass.
    head = subprocess.run(PYTEST.split(), cwd=repo, capture_output=True, text=True)
    assert head.returncode == 0, head.stdout
    report = validate(repo, base, PYTEST, tmp_path / "data")
    assert not report.passed
    assert test_gate(report) == "failed"
    assert any(f"`{name}`" in w for w in report.warnings), report.warnings
    assert (repo / name).read_text() == (
        CONFTEST if name == "conftest.py" else PYTEST_CONFIGS[name]
    )


def test_a_makefile_recipe_rewritten_to_pass_is_no_green(tmp_path: Path) -> None:
    recipe = f"test:\n\t{PYTEST}\n"
    repo, base = repo_with(tmp_path, {"calc.py": CALC, "tests/test_calc.py": TEST,
                                      "Makefile": recipe})  # fmt: skip
    (repo / "calc.py").write_text(BROKEN)
    (repo / "Makefile").write_text("test:\n\t@echo '2 passed in 0.01s'\n")
    report = validate(repo, base, "make -s test", tmp_path / "data")
    assert not report.passed and test_gate(report) == "failed"
    assert any("`Makefile`" in w for w in report.warnings), report.warnings
    assert "echo" in (repo / "Makefile").read_text()  # the change is left as it was


# A node:test project whose `npm test` is its judge; JS_BROKEN leaves its bug in.
PKG = '{"name": "calc", "version": "0.0.0", "scripts": {"test": "node --test"}}\n'
JS_FILES = {
    "add.js": "exports.add = (a, b) => a + b;\n",
    "test/add.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\nconst { add } = require('../add.js');\n"
    "test('adds', () => { assert.strictEqual(add(2, 3), 5); });\n",
    "package.json": PKG,
}
JS_BROKEN = "exports.add = (a, b) => a - b;\n"


def test_a_package_json_script_rewritten_to_pass_is_no_green(tmp_path: Path) -> None:
    repo, base = repo_with(tmp_path, JS_FILES)
    (repo / "add.js").write_text(JS_BROKEN)
    (repo / "package.json").write_text(PKG.replace("node --test", "echo '# pass 1'"))
    report = validate(repo, base, "npm test", tmp_path / "data")
    assert not report.passed and test_gate(report) == "failed"
    assert any("`package.json`" in w for w in report.warnings), report.warnings


def test_the_base_judge_is_put_in_place_and_the_change_put_back(tmp_path: Path) -> None:
    repo, base = repo_with(tmp_path, {"Makefile": "test:\n\ttrue\n", "tox.ini": "[tox]\n"})
    (repo / "Makefile").write_text("test:\n\tfalse\n")
    (repo / "pytest.ini").write_text("[pytest]\n")
    (repo / "README").write_text("not a judge\n")
    assert judge_changes(repo, base) == ["Makefile", "pytest.ini"]
    with judged_by_base(repo, base) as altered:
        assert altered == ["Makefile", "pytest.ini"]
        assert (repo / "Makefile").read_text() == "test:\n\ttrue\n"
        assert not (repo / "pytest.ini").exists()
    assert (repo / "Makefile").read_text() == "test:\n\tfalse\n"
    assert (repo / "pytest.ini").read_text() == "[pytest]\n"


def test_only_the_judging_part_of_a_shared_file_counts() -> None:
    old = b'[project]\nname = "x"\ndependencies = []\n'
    deps = b'[project]\nname = "x"\ndependencies = ["attrs"]\n'
    opts = old + b'[tool.pytest.ini_options]\naddopts = "-p x"\n'
    fixture = b"import pytest\n\n@pytest.fixture\ndef db():\n    return 1\n"
    hook = fixture + b"\ndef pytest_runtest_logreport(report):\n    report.outcome = 'passed'\n"
    assert changed_judge({"pyproject.toml": (old, deps)}) == []
    assert changed_judge({"pyproject.toml": (old, opts)}) == ["pyproject.toml"]
    assert changed_judge({"tests/conftest.py": (None, fixture)}) == []
    assert changed_judge({"tests/conftest.py": (fixture, hook)}) == ["tests/conftest.py"]
    for name in [*PYTEST_CONFIGS, "Makefile", "justfile", "noxfile.py", ".mocharc.yml",
                 "jest.config.ts", "vitest.config.mts", ".github/agentbot.yml"]:  # fmt: skip
        assert is_judge_file(name), name
    assert not is_judge_file("src/calc.py") and not is_judge_file("docs/pytest.ini.md")


# --- through `agentbot fix` -------------------------------------------------------------------

EDITOR = "str_replace_based_edit_tool"
NEG = "from calc import add\n\n\ndef test_neg() -> None:\n    assert add(-1, 1) == 0\n"
NEG_TEST = {"command": "create", "path": "tests/test_neg.py", "file_text": NEG}


def make_yaml() -> str:
    return (
        "validation:\n  setup: null\n  format: null\n  lint: null\n  typecheck: null\n"
        "  test: make -s test\n  fix_rounds: 1\n"
    )


def test_the_fixer_rewriting_the_makefile_behind_the_test_command_gets_no_green(
    tmp_path: Path,
) -> None:
    from bot.models import JobStatus
    from bot.workflows.fix.story import fix_issue
    from tests.e2e import BUGGY_FILES, REPO, world
    from tests.fakes.anthropic import finish, reply, tool_use
    from tests.test_fix_issue import job, seed_issue

    files = {**BUGGY_FILES, "Makefile": f"test:\n\t{PYTEST}\n"}
    rewrite = {"command": "create", "path": "Makefile",
               "file_text": "test:\n\t@echo '2 passed in 0.01s'\n"}  # fmt: skip
    done = reply(finish(summary="add() fixed", root_cause="it subtracted"))
    script = [reply(tool_use(EDITOR, rewrite), tool_use(EDITOR, NEG_TEST)), done, done, done]
    with world(tmp_path, script, files=files, repo_yaml=make_yaml()) as w:
        seed_issue(w)
        from bot.config import RepoConfig

        result = fix_issue(job(), w.env(RepoConfig.from_text(make_yaml())))
        bodies = [str(c.json["body"]) for c in w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")]
    assert result.status != JobStatus.SUCCESS, result
    assert not [b for b in bodies if "2/2 passed" in b or "✅ passed" in b], bodies


def test_a_fix_that_also_edits_the_runner_config_is_a_labelled_draft_naming_it(
    tmp_path: Path,
) -> None:
    from bot.config import RepoConfig
    from bot.workflows.fix.story import fix_issue
    from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, fast_validation_yaml, world
    from tests.fakes.anthropic import finish, reply, tool_use
    from tests.test_fix_issue import job, seed_issue

    opts = {"command": "create", "path": "pytest.toml", "file_text": '[pytest]\naddopts = ["-q"]\n'}
    done = reply(finish(summary="add() now adds", root_cause="it subtracted"))
    edits = [tool_use(EDITOR, e) for e in (FIX_EDIT, TEST_EDIT, opts)]
    script = [reply(*edits), done, done]
    with world(tmp_path, script) as w:
        seed_issue(w)
        fix_issue(job(), w.env(RepoConfig.from_text(fast_validation_yaml())))
        create = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")
        assert len(create) == 1
        number = w.gh.pulls(REPO)[-1].number
        labels = w.gh.labels_on(REPO, number)
    assert create[0].json["draft"] is True
    assert "agent-unverified" in labels
    assert "**Unverified:**" in create[0].json["body"] and "`pytest.toml`" in create[0].json["body"]
