"""An OK `finish` is checked against the workspace before it is accepted (issue #20):
fake GitHub, scripted Anthropic, real git with a bare remote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.models import JobStatus
from bot.workflows.fix.story import fix_issue
from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.fakes.gitrepo import read_tree
from tests.test_fix_issue import BRANCH, job, seed_issue

pytestmark = pytest.mark.slow

EDITOR = "str_replace_based_edit_tool"
REPRODUCE = {
    "command": "create",
    "path": "reproduce.py",
    "file_text": "from calc import add\nprint(add(2, 3))\n",
}


def told(request: Any) -> dict[str, Any]:
    """The first tool result of a request's last message (what the model was told)."""
    block: dict[str, Any] = request.json["messages"][-1]["content"][0]
    return block


def test_empty_diff_then_a_scratch_file_each_get_a_second_chance(tmp_path: Path) -> None:
    script = [
        reply(finish(summary="fixed")),  # nothing changed yet
        reply(
            tool_use(EDITOR, REPRODUCE),
            tool_use(EDITOR, FIX_EDIT),
            tool_use(EDITOR, TEST_EDIT),
        ),
        reply(finish(summary="fixed")),  # reproduce.py left behind
        reply(tool_use("bash", {"command": "rm reproduce.py"})),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        requests = w.llm.requests
    assert result.status == JobStatus.SUCCESS, result.error
    empty = told(requests[1])
    assert empty["is_error"] and "the workspace has no change" in empty["content"]
    assert "git diff --stat" not in empty["content"]
    scratch = told(requests[3])
    assert scratch["is_error"] and "scratch files you created" in scratch["content"]
    assert "reproduce.py" in scratch["content"]
    assert "calc.py" in scratch["content"] and "git diff --stat" in scratch["content"]
    assert len(requests) == 5
    tree = read_tree(w.remote, BRANCH)
    assert "reproduce.py" not in tree and "return a + b" in tree["calc.py"]


def test_a_scratch_file_the_model_keeps_never_reaches_the_pr(tmp_path: Path) -> None:
    script = [
        reply(tool_use(EDITOR, REPRODUCE), tool_use(EDITOR, FIX_EDIT), tool_use(EDITOR, TEST_EDIT)),
        *[reply(finish(summary="add() now adds")) for _ in range(3)],
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        requests = w.llm.requests
    assert result.status == JobStatus.SUCCESS, result.error
    second, third = told(requests[2]), told(requests[3])
    assert "reproduce.py" in second["content"] and "git diff --stat" in second["content"]
    assert "reproduce.py" in third["content"] and "git diff --stat" not in third["content"]
    assert "accepted as it is" in third["content"]
    assert "reproduce.py" not in read_tree(w.remote, BRANCH)
    assert len(w.gh.pulls(REPO)) == 1


def test_code_without_a_test_is_asked_for_one_once(tmp_path: Path) -> None:
    script = [
        reply(tool_use(EDITOR, FIX_EDIT)),
        reply(finish(summary="add() now adds")),
        reply(tool_use(EDITOR, TEST_EDIT)),
        reply(finish(summary="add() now adds", root_cause="it subtracted")),
    ]
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        requests = w.llm.requests
    assert result.status == JobStatus.SUCCESS, result.error
    asked = told(requests[2])
    assert asked["is_error"] and "no test was added or changed" in asked["content"]
    assert "assert add(-1, 1) == 0" in read_tree(w.remote, BRANCH)["tests/test_calc.py"]


def test_a_docs_only_change_needs_no_test(tmp_path: Path) -> None:
    edit = {"command": "create", "path": "docs/usage.md", "file_text": "# Usage\n\nadd(a, b)\n"}
    script = [reply(tool_use(EDITOR, edit)), reply(finish(summary="documented add()"))]
    with world(tmp_path, script) as w:
        seed_issue(w)
        fix_issue(job(), w.env())
        requests = w.llm.requests
    assert len(requests) == 2  # the finish was accepted at once
