"""What the IssueFixer's first message carries (issue #20): untrusted input capped with a
note, hidden comments dropped, authors' associations shown, the repository's map and the
tests already failing on the base; and the tool polish (view cap, syntax check, the
OpenAI bash description)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.agent_overhead import first_requests
from bot.llm.schemas import BASH_DESCRIPTION
from bot.models.github import Comment, Issue
from bot.roles import ISSUE_FIXER
from bot.roles.issue_fixer import issue_task
from bot.tools import Toolbox
from bot.untrusted import BODY_CAP
from bot.workflows.fix.story import fix_issue
from bot.workflows.steps.workenv import file_tree
from tests.e2e import world
from tests.fakes.anthropic import finish, reply
from tests.test_fix_issue import job, seed_issue

ISSUE = Issue(number=7, title="add() is wrong", body="add(2, 3) is -1", user="bob")


def test_a_200_kb_body_reaches_the_model_capped_with_a_note() -> None:
    body = "FIRST-LINE\n" + "log line\n" * 23_000 + "LAST-LINE"
    assert len(body) > 200_000
    task = issue_task("octo/calc", ISSUE.model_copy(update={"body": body}), [])
    assert len(task) < BODY_CAP + 5_000
    assert "FIRST-LINE" in task and "LAST-LINE" in task
    assert "characters were cut from the middle" in task


def test_hidden_comments_are_dropped_and_associations_shown() -> None:
    comments = [
        Comment(id=1, body="It fails on 3.12 too.", user="carol", author_association="MEMBER"),
        Comment(id=2, body="SPAM buy now", user="mallory", minimized=True),
        Comment(id=3, body="+1", user="dave", author_association="NONE"),
    ]
    task = issue_task("octo/calc", ISSUE, comments)
    assert "SPAM" not in task and "mallory" not in task
    assert "comment by @carol (member)" in task and "comment by @dave (none)" in task


def test_a_comment_payload_knows_association_and_minimized() -> None:
    data = {"id": 1, "body": "x", "user": {"login": "a"}, "author_association": "OWNER"}
    assert Comment.from_api(data).author_association == "OWNER"
    assert Comment.from_api({**data, "isMinimized": True}).minimized


def test_the_file_map_is_compact_when_the_repository_is_large() -> None:
    small = ["a.py", "pkg/b.py"]
    assert file_tree(small) == "a.py\npkg/b.py"
    large = [f"pkg/sub{i % 5}/f{i}.py" for i in range(1000)] + ["setup.py"]
    tree = file_tree(large)
    assert "setup.py" in tree and "pkg/sub0/ (200 files)" in tree
    assert len(tree.splitlines()) <= 10


def test_first_request_sizes_typical_and_log_heavy() -> None:
    sizes = first_requests()
    assert sizes["typical"] < 16_000
    assert sizes["log-heavy"] < sizes["typical"] + 30_000  # not the 250 kB pasted


@pytest.mark.slow
def test_the_first_message_maps_the_repo_and_names_base_failures(tmp_path: Path) -> None:
    with world(tmp_path, [reply(finish(status="FAIL", summary="giving up"))]) as w:
        seed_issue(w)
        fix_issue(job(), w.env())
        task = w.llm.requests[0].json["messages"][0]["content"][0]["text"]
    assert "## Repository files (at the base commit)" in task
    assert "calc.py" in task and "tests/test_calc.py" in task
    assert "## Tests already failing on the base commit" in task
    assert "`tests/test_calc.py::test_add`" in task


def test_an_edit_that_breaks_python_syntax_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    box = Toolbox(tmp_path)
    edit = {"command": "str_replace", "path": "m.py", "old_str": "return 1", "new_str": "return ("}
    out = box.run("str_replace_based_edit_tool", edit)
    assert "no longer parses" in out.content and "line 2" in out.content
    fine = box.run(
        "str_replace_based_edit_tool",
        {"command": "str_replace", "path": "m.py", "old_str": "return (", "new_str": "return 2"},
    )
    assert "no longer parses" not in fine.content


def test_a_whole_file_view_is_capped_in_lines(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 1000)
    out = Toolbox(tmp_path).run(
        "str_replace_based_edit_tool", {"command": "view", "path": "big.py"}
    )
    assert "showing lines 1-400 of 1000" in out.content
    assert "\n   401\t" not in out.content


def test_prompt_and_openai_description_state_the_limits_truthfully() -> None:
    assert "Nothing persists between calls" in BASH_DESCRIPTION and "120 s" in BASH_DESCRIPTION
    system = ISSUE_FIXER.system_prompt()
    assert "stopped after 120 seconds" in system and "30,000 characters" in system
    assert "Do not install packages into the system" in system
