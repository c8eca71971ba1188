"""The proof's two runs (issue #25, items 4 and 7): the base run executes the base's code (the
package resolved inside the run is shown), and a test cannot tell it from the head run by
`.git`, by the environment or by the path. Fake GitHub, scripted model, real git and pytest."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.workflows.fix.story import fix_issue
from tests.e2e import BUGGY_FILES, FIX_EDIT, REPO, TEST_EDIT, fast_validation_yaml, world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.test_fix_issue import job, seed_issue

pytestmark = pytest.mark.slow

EDITOR = "str_replace_based_edit_tool"
DONE = reply(finish(summary="add() now adds", root_cause="it subtracted"))


def no_format() -> RepoConfig:
    """The e2e config without the format stage (the scripted tests are not formatted)."""
    return RepoConfig.from_text(re.sub(r"  format: .*", "  format: null", fast_validation_yaml()))


def proof_section(w: object) -> str:
    create = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")  # type: ignore[attr-defined]
    assert len(create) == 1
    body = str(create[0].json["body"])
    return body[body.index("## Proof of the fix") :]


def test_a_src_layout_proof_runs_the_base_package_and_shows_where_it_resolved(
    tmp_path: Path,
) -> None:
    files = {
        "src/calc/__init__.py": BUGGY_FILES["calc.py"],
        "tests/test_calc.py": BUGGY_FILES["tests/test_calc.py"],
        "pyproject.toml": BUGGY_FILES["pyproject.toml"]
        + '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    }
    fix = {**FIX_EDIT, "path": "src/calc/__init__.py"}
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, TEST_EDIT)), DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "`src/calc/__init__.py` imported from the base checkout" in section, section
    assert "| `tests/test_calc.py::test_add` | ❌ `assert -1 == 5`" in section


TELLS = {
    "git-file": "os.path.isfile(os.path.join(ROOT, '.git'))",
    "pythonpath": "'PYTHONPATH' in os.environ",
    "path": "'worktrees' in os.path.abspath(__file__)",
}


@pytest.mark.parametrize("tell", list(TELLS))
def test_a_test_telling_the_base_run_from_the_head_is_not_proven(tmp_path: Path, tell: str) -> None:
    text = (
        "import os\n\nfrom calc import add\n\n"
        "ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n\n\n"
        f"def test_tell() -> None:\n    assert not ({TELLS[tell]})\n    assert add(2, 3) == 5\n"
    )
    test = {"command": "create", "path": "tests/test_tell.py", "file_text": text}
    script = [reply(tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, test)), DONE, DONE]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(no_format()))
        assert result.status == JobStatus.UNPROVEN, result.error  # never a success
        section = proof_section(w)
    assert "fail on the base commit" not in section, section
    assert "Unproven" in section, section


def stage_yaml(test: str) -> RepoConfig:
    """Only a test stage, with `test` as its command."""
    return RepoConfig.from_text(
        "validation:\n  setup: null\n  format: null\n  lint: null\n  typecheck: null\n"
        f"  test: {test}\n  fix_rounds: 1\n"
    )


UNIT = """import unittest

from calc import add


class T(unittest.TestCase):
    def test_{name}(self) -> None:
        self.assertEqual(add({a}, {b}), {total})
"""


def test_a_unittest_project_is_proven_by_unittest_itself(tmp_path: Path) -> None:
    files = {
        "calc.py": BUGGY_FILES["calc.py"],
        "tests/__init__.py": "",
        "tests/test_calc.py": UNIT.format(name="big", a=3, b=0, total=3),
    }
    new = {"command": "create", "path": "tests/test_neg.py",
           "file_text": UNIT.format(name="neg", a=-1, b=1, total=0)}  # fmt: skip
    script = [reply(tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, new)), DONE, DONE]
    command = f"{sys.executable} -m unittest discover -s tests -t ."
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(stage_yaml(command)))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "`tests.test_neg.T.test_neg`" in section, section
    assert "`calc.py` imported from the base checkout" in section, section


NODE_TEST = """const test = require('node:test');
const assert = require('node:assert');
const {{ add }} = require('../add.js');

test('{name}', () => {{ assert.strictEqual(add({a}, {b}), {total}); }});
"""


def test_a_node_test_project_is_proven_by_node_itself(tmp_path: Path) -> None:
    files = {
        "add.js": "exports.add = (a, b) => a - b;\n",
        "test/big.test.js": NODE_TEST.format(name="big", a=3, b=0, total=3),
        "package.json": '{"name": "calc", "scripts": {"test": "node --test"}}\n',
    }
    fix = {"command": "str_replace", "path": "add.js", "old_str": "a - b", "new_str": "a + b"}
    new = {"command": "create", "path": "test/neg.test.js",
           "file_text": NODE_TEST.format(name="neg", a=-1, b=1, total=0)}  # fmt: skip
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, new)), DONE, DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(stage_yaml("npm test")))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "neg" in section.split("| --- | --- | --- |")[1], section


JEST_TEST = """const {{ add }} = require('../add.js');

test('{name}', () => {{ expect(add({a}, {b})).toBe({total}); }});
"""
VITEST_TEST = """import {{ expect, test }} from 'vitest';
import {{ add }} from '../add.js';

test('{name}', () => {{ expect(add({a}, {b})).toBe({total}); }});
"""


@pytest.mark.parametrize("runner", ["jest", "vitest"])
def test_a_jest_or_vitest_project_is_proven_by_its_runner(tmp_path: Path, runner: str) -> None:
    from tests.cover_tools import jest_modules, vitest_modules

    modules = jest_modules() if runner == "jest" else vitest_modules()
    text = JEST_TEST if runner == "jest" else VITEST_TEST
    esm = runner == "vitest"
    export = "export const add" if esm else "exports.add"
    kind = ', "type": "module"' if esm else ""
    files = {
        "add.js": f"{export} = (a, b) => a - b;\n",
        "test/big.test.js": text.format(name="big", a=3, b=0, total=3),
        "package.json": f'{{"name": "calc"{kind}, "scripts": {{"test": "{runner}"}}}}\n',
        ".gitignore": "node_modules\n",
    }
    fix = {"command": "str_replace", "path": "add.js", "old_str": "a - b", "new_str": "a + b"}
    new = {"command": "create", "path": "test/neg.test.js",
           "file_text": text.format(name="neg", a=-1, b=1, total=0)}  # fmt: skip
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, new)), DONE, DONE]
    command = f"node_modules/.bin/{runner}" + (" run" if esm else "")
    config = RepoConfig.from_text(
        f"validation:\n  setup: ln -sfn {modules} node_modules\n  format: null\n  lint: null\n"
        f"  typecheck: null\n  test: {command}\n  fix_rounds: 1\n"
    )
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(config))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "neg" in section.split("| --- | --- | --- |")[1], section


GO_TEST = """package calc

import "testing"

func Test{name}(t *testing.T) {{
	if got := Add({a}, {b}); got != {total} {{
		t.Fatalf("Add = %d, want {total}", got)
	}}
}}
"""


def test_a_go_project_is_proven_by_go_test(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/calc\n\ngo 1.21\n",
        "calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n",
        "big_test.go": GO_TEST.format(name="Big", a=3, b=0, total=3),
    }
    fix = {"command": "str_replace", "path": "calc.go", "old_str": "a - b", "new_str": "a + b"}
    new = {"command": "create", "path": "neg_test.go",
           "file_text": GO_TEST.format(name="Neg", a=-1, b=1, total=0)}  # fmt: skip
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, new)), DONE, DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        # `-v`: go prints no count of passed tests without it (a bare run is unverified).
        result = fix_issue(job(), w.env(stage_yaml("go test -v ./...")))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "TestNeg" in section, section


RUST_TEST = """use calc::add;

#[test]
fn {name}() {{
    assert_eq!(add({a}, {b}), {total});
}}
"""


def test_a_rust_project_is_proven_by_cargo_test(tmp_path: Path) -> None:
    files = {
        "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
        "tests/big.rs": RUST_TEST.format(name="big", a=3, b=0, total=3),
        ".gitignore": "target\n",
    }
    fix = {"command": "str_replace", "path": "src/lib.rs", "old_str": "a - b", "new_str": "a + b"}
    new = {"command": "create", "path": "tests/neg.rs",
           "file_text": RUST_TEST.format(name="neg", a=-1, b=1, total=0)}  # fmt: skip
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, new)), DONE, DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(stage_yaml("cargo test")))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "neg" in section.split("| --- | --- | --- |")[1], section


def test_a_version_module_generated_at_setup_is_there_in_both_runs(tmp_path: Path) -> None:
    init = "from calc._version import VERSION\n\n\n" + BUGGY_FILES["calc.py"]
    files = {
        "src/calc/__init__.py": init,
        "tests/test_calc.py": BUGGY_FILES["tests/test_calc.py"],
        "pyproject.toml": BUGGY_FILES["pyproject.toml"]
        + '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        ".gitignore": "src/calc/_version.py\n",
    }
    setup = "printf 'VERSION = 1\\\\n' > src/calc/_version.py"
    config = RepoConfig.from_text(
        f'validation:\n  setup: "{setup}"\n  format: null\n  lint: null\n  typecheck: null\n'
        f"  test: {sys.executable} -m pytest -q -p no:cacheprovider\n  fix_rounds: 1\n"
    )
    fix = {**FIX_EDIT, "path": "src/calc/__init__.py"}
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, TEST_EDIT)), DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(config))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "`src/calc/__init__.py` imported from the base checkout" in section, section


def test_a_hatch_vcs_like_project_with_coloured_pytest_output_is_proven(tmp_path: Path) -> None:
    """humanize's shape: `_version.py` ignored and written at setup, and pytest's addopts ask for
    `--color=yes`, so the base run's summary is full of ANSI codes (issue #25, item 4)."""
    init = "from calc._version import VERSION\n\n\n" + BUGGY_FILES["calc.py"]
    files = {
        "src/calc/__init__.py": init,
        "tests/test_calc.py": BUGGY_FILES["tests/test_calc.py"],
        "pyproject.toml": BUGGY_FILES["pyproject.toml"]
        + '[tool.pytest.ini_options]\npythonpath = ["src"]\naddopts = "--color=yes"\n',
        ".gitignore": "src/calc/_version.py\n",
    }
    setup = "printf 'VERSION = 1\\\\n' > src/calc/_version.py"
    config = RepoConfig.from_text(
        f'validation:\n  setup: "{setup}"\n  format: null\n  lint: null\n  typecheck: null\n'
        f"  test: {sys.executable} -m pytest -q -p no:cacheprovider\n  fix_rounds: 1\n"
    )
    fix = {**FIX_EDIT, "path": "src/calc/__init__.py"}
    script = [reply(tool_use(EDITOR, fix), tool_use(EDITOR, TEST_EDIT)), DONE]
    with world(tmp_path, script, files=files) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(config))
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" in section, section
    assert "| `tests/test_calc.py::test_add` | ❌ `assert -1 == 5`" in section, section
    assert "\x1b[" not in section
