"""A validation failure goes back into the same conversation (issue #20): the next request
keeps the previous one's bytes as its prefix (checked at the fake) and carries the failing
command and output. Fake GitHub, scripted Anthropic, real git and pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus, ValidationReport
from bot.models.validation import CommandResult, QualityGateResult
from bot.roles.fixer import repair_task
from bot.workflows.fix.story import fix_issue
from tests.e2e import FIX_EDIT, fast_validation_yaml, world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.fakes.gitrepo import read_tree
from tests.test_fix_issue import BRANCH, job, seed_issue

EDITOR = "str_replace_based_edit_tool"
REGRESSION = (
    "from calc import add\n\n\ndef test_one_plus_one() -> None:\n    assert add(1, 1) == 2\n"
)


@pytest.mark.slow
def test_validation_failure_continues_the_same_conversation(tmp_path: Path) -> None:
    script = [
        reply(
            tool_use(EDITOR, dict(FIX_EDIT, new_str="return a * b")),
            tool_use(
                EDITOR,
                {"command": "create", "path": "tests/test_regression.py", "file_text": REGRESSION},
            ),
        ),
        reply(finish(summary="multiply")),
        # validation fails; the same conversation goes on
        reply(tool_use(EDITOR, dict(FIX_EDIT, old_str="return a * b"))),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        requests = w.llm.requests
    assert result.status == JobStatus.SUCCESS, result.error
    assert len(requests) == 4
    before, after = requests[1], requests[2]
    assert after.json["system"] == before.json["system"]  # no cold Fixer
    assert "IssueFixer" in after.json["system"][0]["text"]
    assert after.json["tools"] == before.json["tools"]
    kept = len(before.json["messages"]) - 1  # the last one loses its moving cache mark
    assert after.json["messages"][:kept] == before.json["messages"][:kept]
    common = next(
        (i for i, (a, b) in enumerate(zip(before.body, after.body, strict=False)) if a != b),
        len(before.body),
    )
    assert common > before.body.rfind(b'"role"'), "the cached prefix bytes changed"
    last = after.json["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result"  # the finish call gets its result
    text = last[-1]["text"]
    assert "Validation failed after your change: test (fix round 1 of 1)" in text
    assert "pytest -q -p no:cacheprovider" in text
    assert "test_one_plus_one" in text and "assert" in text
    assert "<untrusted" in text or "```" in text  # fenced as data
    assert "return a + b" in read_tree(w.remote, BRANCH)["calc.py"]


def test_the_cold_fixer_gets_stage_command_and_head_and_tail() -> None:
    output = "HEAD-LINE\n" + "x" * 50_000 + "\nTAIL-LINE"
    gate = QualityGateResult(
        gate_name="lint",
        status="failed",
        command="ruff check .",
        command_result=CommandResult(
            command=["/bin/sh", "-c", "ruff check ."],
            exit_code=1,
            output=output,
            success=False,
            duration_seconds=1.0,
        ),
    )
    task = repair_task(
        ValidationReport(profile="python", gates=[gate], passed=False),
        goal="fix #1",
        round=1,
        max_rounds=2,
    )
    assert "Validation failed: lint" in task and "Command: `ruff check .`" in task
    assert "HEAD-LINE" in task and "TAIL-LINE" in task and len(task) < 25_000


@pytest.mark.slow
def test_a_conversation_that_cannot_go_on_falls_back_to_a_cold_fixer(tmp_path: Path) -> None:
    wrong = dict(FIX_EDIT, new_str="return a * b")
    create = {"command": "create", "path": "tests/test_regression.py", "file_text": REGRESSION}
    script = [
        reply(tool_use(EDITOR, wrong), tool_use(EDITOR, create)),
        reply(finish(summary="multiply")),
        # round 1 goes back into the conversation, which ends without a valid finish
        *[reply(finish(status="NOT-A-STATUS")) for _ in range(3)],
        # round 2: a cold Fixer
        reply(tool_use(EDITOR, dict(FIX_EDIT, old_str="return a * b"))),
        reply(finish(summary="add() adds again")),
    ]
    cfg = RepoConfig.from_text(fast_validation_yaml().replace("fix_rounds: 1", "fix_rounds: 2"))
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env(cfg))
        requests = w.llm.requests
    assert result.status == JobStatus.SUCCESS, result.error
    cold = requests[5].json
    assert "You are the Fixer agent" in cold["system"][0]["text"]
    task = cold["messages"][0]["content"][0]["text"]
    assert "# Validation failed: test (fix round 2 of 2)" in task
    assert "Command: `" in task and "pytest" in task and "test_one_plus_one" in task
