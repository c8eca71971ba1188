"""More ways a change could redefine its judge (an attacker trial, issue #25 item 6).

Each hostile change leaves the bug and makes the repository's own run green: a conftest in a
subfolder binding a hook by assignment, a Makefile `include` file rewritten, `.npmrc`
preloading a script into node, a pytest plugin declared as a `pytest11` entry point. The
gate must say `failed` and name the file. Real git, the real pipeline, real pytest/make/node.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.judge_files import changed_judge
from tests.test_judge_hostile import (
    CALC,
    JS_BROKEN,
    JS_FILES,
    PLUGIN,
    PYTEST,
    TEST,
    repo_with,
    test_gate,
    validate,
)

pytestmark = pytest.mark.slow

BROKEN = CALC.replace("a + b", "a - b")


@pytest.mark.parametrize(
    "conftest",
    [
        # A hook bound by assignment, not `def pytest_...`.
        f"{PLUGIN.replace('def pytest_runtest_makereport', 'def _rewrite')}\n"
        "pytest_runtest_makereport = _rewrite\n",
        # The same through globals().
        f"{PLUGIN.replace('def pytest_runtest_makereport', 'def _rewrite')}\n"
        "globals()['pytest_runtest_' + 'makereport'] = _rewrite\n",
    ],
    ids=["assignment", "globals"],
)
def test_a_subfolder_conftest_binding_a_hook_is_no_green(tmp_path: Path, conftest: str) -> None:
    conf = "tests/unit/conftest.py"
    test = "tests/unit/test_calc.py"
    repo, base = repo_with(tmp_path, {"calc.py": CALC, test: TEST, conf: "import sys\n"})
    (repo / "calc.py").write_text(BROKEN)
    (repo / conf).write_text("import sys\n\nsys.path.insert(0, '.')\n" + conftest)
    head = subprocess.run(PYTEST.split(), cwd=repo, capture_output=True, text=True)
    assert head.returncode == 0, head.stdout  # the hook does turn the run green
    report = validate(repo, base, PYTEST, tmp_path / "data")
    assert not report.passed and test_gate(report) == "failed"
    assert any(f"`{conf}`" in w for w in report.warnings), report.warnings


def test_a_conftest_adding_only_a_fixture_is_not_a_judge_change() -> None:
    base = b"import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n"
    head = base + b"\n\n@pytest.fixture\ndef two(one):\n    return one + 1\n"
    assert changed_judge({"tests/conftest.py": (base, head)}) == []
    evil = (
        head
        + b"\n\n@pytest.fixture(autouse=True)\ndef x(request):\n"
        + (b"    request.config.pluginmanager.register(object())\n")
    )
    assert changed_judge({"tests/conftest.py": (base, evil)}) == ["tests/conftest.py"]


def test_a_makefile_include_file_rewritten_to_pass_is_no_green(tmp_path: Path) -> None:
    files = {
        "calc.py": CALC,
        "tests/test_calc.py": TEST,
        "Makefile": "include mk/test.mk\n",
        "mk/test.mk": f"test:\n\t{PYTEST}\n",
    }
    repo, base = repo_with(tmp_path, files)
    (repo / "calc.py").write_text(BROKEN)
    (repo / "mk/test.mk").write_text("test:\n\t@echo '2 passed in 0.01s'\n")
    report = validate(repo, base, "make -s test", tmp_path / "data")
    assert not report.passed and test_gate(report) == "failed"
    assert any("`mk/test.mk`" in w for w in report.warnings), report.warnings


def test_an_npmrc_preloading_a_script_is_no_green(tmp_path: Path) -> None:
    repo, base = repo_with(tmp_path, JS_FILES)
    (repo / "add.js").write_text(JS_BROKEN)
    # Preloaded into every node process npm starts: the run prints a pass and exits 0.
    (repo / "evil.js").write_text("console.log('# pass 1\\n# fail 0'); process.exit(0);\n")
    (repo / ".npmrc").write_text(f"node-options=--require {repo / 'evil.js'}\n")
    head = subprocess.run(["npm", "test"], cwd=repo, capture_output=True, text=True)
    assert head.returncode == 0, head.stdout + head.stderr
    report = validate(repo, base, "npm test", tmp_path / "data")
    assert not report.passed and test_gate(report) == "failed"
    assert any("`.npmrc`" in w for w in report.warnings), report.warnings


@pytest.mark.parametrize(
    ("name", "base", "head"),
    [
        (
            "pyproject.toml",
            b'[project]\nname = "calc"\nversion = "0"\n',
            b'[project]\nname = "calc"\nversion = "0"\n'
            b'[project.entry-points.pytest11]\nj = "judge_plugin"\n',
        ),
        (
            "setup.cfg",
            b"[metadata]\nname = calc\n",
            b"[metadata]\nname = calc\n[options.entry_points]\npytest11 =\n    j = judge_plugin\n",
        ),
        (
            "setup.py",
            b"from setuptools import setup\nsetup(name='calc')\n",
            b"from setuptools import setup\n"
            b"setup(name='calc', entry_points={'pytest' + '11': ['j = judge_plugin']})\n",
        ),
    ],
)
def test_a_pytest11_entry_point_is_a_judge_change(name: str, base: bytes, head: bytes) -> None:
    assert changed_judge({name: (base, head)}) == [name]
    # The rest of the file is the project's business: a version bump is not a judge change.
    bumped = base.replace(b"calc", b"calc2")
    assert changed_judge({name: (base, bumped)}) == []
