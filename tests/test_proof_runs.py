"""The proof's two runs (issue #25, items 4 and 7): the base run executes the base's code (the
package resolved inside the run is shown), and a test cannot tell it from the head run by
`.git`, by the environment or by the path. Fake GitHub, scripted model, real git and pytest."""

from __future__ import annotations

import re
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
        assert result.status == JobStatus.SUCCESS, result.error
        section = proof_section(w)
    assert "fail on the base commit" not in section, section
    assert "Unproven" in section, section
