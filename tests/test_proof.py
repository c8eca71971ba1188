"""Proof-carrying fixes (issue #20): the runner checks that the change's tests fail on the
base commit and pass on the head, and the PR shows it. Fake GitHub, scripted Anthropic,
real git worktrees and real pytest runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.models import JobStatus
from bot.workflows.fix_issue import fix_issue
from bot.workflows.proof import own_fault
from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.test_fix_issue import job, seed_issue

pytestmark = pytest.mark.slow

EDITOR = "str_replace_based_edit_tool"
ZERO_TEST = {
    "command": "create",
    "path": "tests/test_zero.py",
    "file_text": "from calc import add\n\n\ndef test_zero() -> None:\n    assert add(0, 0) == 0\n",
}


def pr_body(w: object) -> str:
    create = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")  # type: ignore[attr-defined]
    assert len(create) == 1
    return str(create[0].json["body"])


def test_a_test_failing_on_base_and_passing_on_head_is_shown_as_proof(tmp_path: Path) -> None:
    script = [
        reply(tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, TEST_EDIT)),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.SUCCESS, result.error
        body = pr_body(w)
    assert "## Proof of the fix" in body
    assert "fail on the base commit" in body
    assert "| `tests/test_calc.py::test_add` | ❌ `assert -1 == 5`" in body
    assert "✅ passed" in body and "1 passed" in body
    assert "Unproven" not in body


def test_a_test_that_already_passes_on_base_is_sent_back_once_then_unproven(
    tmp_path: Path,
) -> None:
    script = [
        reply(tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, ZERO_TEST)),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
        # told the test proves nothing; keeps it as it is
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.SUCCESS, result.error
        requests = w.llm.requests
        body = pr_body(w)
    assert len(requests) == 3
    told = requests[2].json["messages"][-1]["content"][-1]["text"]
    assert "already pass on the base commit" in told and "tests/test_zero.py" in told
    assert "**Unproven:**" in body and "tests/test_zero.py" in body


def test_a_failure_of_the_tests_own_making_on_base_is_no_proof(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("")
    assert "SyntaxError" in own_fault(tmp_path, "E     SyntaxError: invalid syntax")
    assert "fixture 'db' not found" in own_fault(tmp_path, "E       fixture 'db' not found")
    third_party = "E   ModuleNotFoundError: No module named 'hypothesis'"
    assert "hypothesis" in own_fault(tmp_path, third_party)
    # A module of the project the fix adds is the missing behaviour, not the test's fault.
    assert own_fault(tmp_path, "E   ModuleNotFoundError: No module named 'calc.extra'") == ""
    assert own_fault(tmp_path, "E   ImportError: cannot import name 'mul' from 'calc'") == ""
