"""Near and at the limits (issue #20): a warning before the turns run out, the work proposed
as a draft PR when they do, and a refusing model stopped at once."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from bot.config import RepoConfig
from bot.errors import LimitsExceeded
from bot.models import JobStatus
from bot.workflows.fix.story import fix_issue
from tests import test_agent
from tests.e2e import FIX_EDIT, REPO, TEST_EDIT, fast_validation_yaml, world
from tests.fakes import anthropic as fake
from tests.fakes.gitrepo import read_tree
from tests.fakes.scripted_llm import ScriptedLLM, reply
from tests.test_agent import budget_for, run, view
from tests.test_fix_issue import BRANCH, job, seed_issue

EDITOR = "str_replace_based_edit_tool"
repo, clock = test_agent.repo, test_agent.clock  # the agent loop's fixtures


def warnings_in(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["text"]
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "text" and b["text"].startswith("[agentbot]")
    ]


def test_the_model_is_warned_once_three_turns_before_the_limit(repo: Path, clock: Any) -> None:
    llm = ScriptedLLM(itertools.repeat(reply(view("calc.py"))))
    with pytest.raises(LimitsExceeded):
        run(llm, repo, clock, budget=budget_for(clock, max_turns=6))
    assert len(llm.calls) == 6
    assert warnings_in(llm.calls[2].messages) == []
    warned = warnings_in(llm.calls[3].messages)
    assert len(warned) == 1 and "3 turn(s) left" in warned[0]
    assert warnings_in(llm.calls[5].messages) == warned  # once, and kept in the history


@pytest.mark.parametrize(
    "answer",
    [
        reply("I can't help with that request.", stop_reason="end_turn"),
        reply("", stop_reason="refusal"),
    ],
)
def test_a_refusing_model_stops_at_once(repo: Path, clock: Any, answer: Any) -> None:
    llm = ScriptedLLM([answer, *[reply(view("calc.py"))] * 10])
    result = run(llm, repo, clock)
    assert len(llm.calls) == 1
    assert not result.success and result.output is None
    assert "refused" in (result.error_details or "")
    assert result.turns == 1


def test_a_reply_without_tools_that_is_no_refusal_is_still_nudged(repo: Path, clock: Any) -> None:
    llm = ScriptedLLM([reply("Let me think about the design first."), reply(view("calc.py"))])
    with pytest.raises(LimitsExceeded):
        run(llm, repo, clock, budget=budget_for(clock, max_turns=2))
    assert len(llm.calls) == 2


@pytest.mark.slow
def test_right_edit_without_finish_becomes_a_draft_pr_saying_why(tmp_path: Path) -> None:
    look = fake.reply(fake.tool_use("bash", {"command": "git diff --stat"}))
    script = [
        fake.reply(fake.tool_use(EDITOR, FIX_EDIT), fake.tool_use(EDITOR, TEST_EDIT)),
        look, look, look, look,
    ]  # fmt: skip
    with world(tmp_path, script) as w:
        seed_issue(w)
        cfg = RepoConfig.from_text(fast_validation_yaml("budget:\n  max_turns: 5\n"))
        result = fix_issue(job(), w.env(cfg))
        requests = w.llm.requests
        assert len(requests) == 5
        warned = [r for r in requests if "turn(s) left before your turn limit" in r.body.decode()]
        assert warned and "turn(s) left" not in requests[1].body.decode()
        pulls = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")
        assert len(pulls) == 1 and pulls[0].json["draft"] is True
        body = pulls[0].json["body"]
        assert "**Unfinished:**" in body and "turn budget used up" in body
        assert "| test | ✅ passed" in body  # the work was validated before it was proposed
        assert "return a + b" in read_tree(w.remote, BRANCH)["calc.py"]
        comment = w.gh.comments_on(REPO, 7)[0].body
        assert "ran out of turns or budget before finishing" in comment
        assert "Write a fix — stopped at its limit" in comment
        assert result.status == JobStatus.FAILED


@pytest.mark.slow
def test_no_change_at_the_limit_fails_as_before(tmp_path: Path) -> None:
    look = fake.reply(fake.tool_use("bash", {"command": "ls"}))
    with world(tmp_path, [look] * 3) as w:
        seed_issue(w)
        cfg = RepoConfig.from_text(fast_validation_yaml("budget:\n  max_turns: 3\n"))
        result = fix_issue(job(), w.env(cfg))
        assert result.status == JobStatus.FAILED and "budget exhausted" in result.error
        assert w.gh.pulls(REPO) == []
