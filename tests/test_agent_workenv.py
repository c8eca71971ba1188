"""The Implementer's and TDD's agents work in the prepared environment, as the IssueFixer's:
a tool that validation's setup installed is on PATH in their shell (issue #26 item 7).
Real parts: git, venvs, the setup command, pytest; fake GitHub, scripted Anthropic."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.workflows.implement.story import implement
from bot.workflows.tdd.story import tdd
from tests.e2e import fast_validation_yaml, world
from tests.fakes.anthropic import RecordedRequest, ScriptedReply, finish, reply, tool_use
from tests.tdd_script import role_cycle_attempt, team
from tests.test_implement import FILES, TASKS, _task_of, job, seed_branch
from tests.test_tdd_python import FILES as TDD_FILES
from tests.test_tdd_python import config as tdd_config
from tests.test_tdd_python import issue, straight

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# Setup puts a tool into the workspace's venv; only a shell in the prepared environment finds it.
SETUP = (
    "printf '#!/bin/sh\\necho settool-ok\\n' > \"$VIRTUAL_ENV/bin/settool\""
    ' && chmod +x "$VIRTUAL_ENV/bin/settool"'
)
PROBE = tool_use("bash", {"command": "settool"})


def with_setup(config: RepoConfig) -> RepoConfig:
    """`config` whose validation runs SETUP first."""
    validation = config.validation.model_copy(update={"setup": SETUP})
    return config.model_copy(update={"validation": validation})


def probed(request: RecordedRequest) -> str:
    """What the agent's shell printed for PROBE, from the request that follows it."""
    for message in request.json["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == PROBE["id"]:
                return json.dumps(block.get("content"))
    return ""


def test_every_implementer_task_shell_has_what_setup_installed(tmp_path: Path) -> None:
    """Each task's agent, [P] ones in their own worktrees too, runs the setup's tool."""
    seen: dict[str, str] = {}

    def step(request: RecordedRequest) -> ScriptedReply:
        task = _task_of(request)
        if len(request.json["messages"]) == 1:
            src = f'def {task.lower()}() -> str:\n    return "{task}"\n'
            return reply(
                tool_use("bash", {"command": "settool"}, id=f"{PROBE['id']}_{task}"),
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": f"mod_{task.lower()}.py", "file_text": src},
                ),
            )
        seen[task] = json.dumps(request.json["messages"][-1]["content"])
        return reply(finish(summary=f"{task} done"))

    with world(tmp_path, [step] * 12, files=FILES) as w:
        seed_branch(w, TASKS)
        result = implement(job(), w.env(with_setup(RepoConfig.from_text(fast_validation_yaml()))))
        assert result.status == JobStatus.SUCCESS, result.error
    assert sorted(seen) == ["T001", "T002", "T003", "T004", "T005"]
    assert all("settool-ok" in out for out in seen.values()), seen


def test_every_tdd_agent_shell_has_what_setup_installed(tmp_path: Path) -> None:
    """The Tester's first turn runs the setup's tool beside writing its test."""
    t, _ = team(straight())

    def step(request: RecordedRequest) -> ScriptedReply:
        role, cycle, _, _ = role_cycle_attempt(request)
        answer = t(request)
        if (role, cycle, len(request.json["messages"])) == ("tester", 1, 1):
            return replace(answer, content=[PROBE, *answer.content])
        return answer

    with world(tmp_path, [step] * 200, files=TDD_FILES) as w:
        job = issue(w)
        result = tdd(job, w.env(with_setup(tdd_config())))
        assert result.status == JobStatus.SUCCESS, result.error
        outputs = [probed(r) for r in w.llm.requests]
    assert any("settool-ok" in out for out in outputs), outputs
