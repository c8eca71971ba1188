"""Assignment as a trigger (issue #28) through both doors: the Action's `assignee` input and
the config's `assignee:`; the App's receiver cancels a queued assignment on unassignment."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bot.cli.run import action_door
from bot.clock import FakeClock
from bot.events import Delivery, Ignore
from bot.models import JobKind, JobResult
from bot.queue import JobState
from bot.queue.sqlite import SqliteQueue
from bot.wiring import worker_deps
from bot.worker import Worker, process_delivery
from bot.worker.cancel import cancel_unassigned
from bot.workflows.handlers import HANDLERS
from tests.test_cli_errors import run as run_cli
from tests.test_usecase import REPO, World
from tests.test_usecase import world as world
from webhooks.app import create_app, signature

DATA = Path(__file__).parent / "data" / "webhooks"
SECRET = "s3cret-for-tests"
BOT = "agentbot-user"


def assignment(
    action: str, login: str = BOT, sender: str = "wendy", number: int = 1
) -> dict[str, Any]:
    """A real issues.assigned/unassigned delivery on REPO's issue #number."""
    items = json.loads((DATA / "issues.json").read_text())
    p: dict[str, Any] = copy.deepcopy(next(i["payload"] for i in items if i["action"] == action))
    p["repository"] = {**p["repository"], "full_name": REPO, "default_branch": "main"}
    p["issue"] = {**p["issue"], "number": number, "state": "open", "locked": False}
    p["assignee"] = {**p["assignee"], "login": login, "type": "User"}
    p["sender"] = {**p["sender"], "login": sender, "type": "User"}
    p.pop("installation", None)
    return p


def test_the_actions_assignee_input_starts_a_fix(world: World) -> None:
    world.gh.add_user(BOT)
    world.gh.issue(REPO, 1).assignees = [BOT]
    door = action_door(
        world.settings(),
        dict.fromkeys(HANDLERS, world.handler),
        checkout=world.tmp,
        dry_run=False,
        inputs={},
        assignee=BOT,
    )
    outcome = door.handle(Delivery("issues", assignment("assigned")))
    assert isinstance(outcome, JobResult)
    (ran,) = world.handler.jobs
    assert (ran.kind, ran.number, ran.actor) == (JobKind.FIX_ISSUE, 1, "wendy")
    other = door.handle(Delivery("issues", assignment("assigned", login="someone")))
    assert isinstance(other, Ignore) and "not agentbot's account" in other.reason
    # A reader's assignment is refused like a reader's label.
    world.gh.set_permission(REPO, "rita", "read")
    refused = door.handle(Delivery("issues", assignment("assigned", sender="rita")))
    assert isinstance(refused, Ignore) and "rita has read" in refused.reason
    # The issue was unassigned before the run started: the job does not run.
    world.gh.issue(REPO, 1).assignees = []
    late = door.handle(Delivery("issues", assignment("assigned")))
    assert isinstance(late, Ignore) and "unassigned" in late.reason
    assert len(world.handler.jobs) == 1


def test_a_bad_assignee_input_is_named_with_exit_2(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(assignment("assigned")))
    proc = run_cli(
        tmp_path,
        "run",
        GITHUB_EVENT_NAME="issues",
        GITHUB_EVENT_PATH=str(event),
        AGENTBOT_ASSIGNEE="two words",
    )
    assert proc.returncode == 2, proc.stderr
    assert "assignee" in proc.stderr and "two words" in proc.stderr
    assert "Traceback" not in proc.stderr


def _post(client: TestClient, payload: dict[str, Any], delivery: str) -> None:
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature(SECRET, body),
        "Content-Type": "application/json",
    }
    assert client.post("/webhook", content=body, headers=headers).status_code == 202


def test_the_app_starts_a_fix_on_assignment_and_an_unassignment_cancels_it(
    world: World,
) -> None:
    world.gh.set_file(REPO, ".github/agentbot.yml", f"assignee: {BOT}\n")
    world.gh.add_user(BOT)
    world.gh.issue(REPO, 1).assignees = [BOT]
    queue = SqliteQueue(world.tmp / "queue.db", clock=FakeClock())
    try:
        client = TestClient(create_app(queue=queue, secret=SECRET))
        deps = worker_deps(world.settings(), queue, dict.fromkeys(HANDLERS, world.handler))
        worker = Worker(queue, process=lambda rec: process_delivery(rec, deps), worker_id="w")
        # Assigned, then unassigned before any worker claimed the job: it never runs.
        _post(client, assignment("assigned"), "d-assigned")
        _post(client, assignment("assigned", number=2), "d-other-issue")
        _post(client, assignment("unassigned"), "d-unassigned")
        cancelled = queue.get("d-assigned")
        assert cancelled is not None and cancelled.state is JobState.IGNORED
        assert cancelled.decision == f"cancelled: #1 was unassigned from {BOT} by wendy"
        other = queue.get("d-other-issue")
        assert other is not None and other.state is JobState.QUEUED
        while worker.run_once():
            pass
        assert world.handler.jobs == []  # #2 is closed in this world, #1's job was cancelled
        gone = queue.get("d-unassigned")
        assert gone is not None and gone.state is JobState.IGNORED and "cancelled" in gone.decision
        # Assigned and left assigned: the worker starts the fix.
        _post(client, assignment("assigned"), "d-again")
        while worker.run_once():
            pass
        (ran,) = world.handler.jobs
        assert (ran.kind, ran.number, ran.params["trigger"]) == (JobKind.FIX_ISSUE, 1, "assigned")
        # An unassignment after the claim cancels nothing.
        assert cancel_unassigned(queue, "issues", assignment("unassigned")) == []
    finally:
        queue.close()


@pytest.mark.parametrize(
    "payload",
    [
        {"action": "unassigned"},
        {"action": "unassigned", "repository": {"full_name": REPO}, "issue": {"number": "1"}},
        {"action": "assigned", "repository": {"full_name": REPO}},
    ],
)
def test_a_malformed_unassignment_cancels_nothing(payload: dict[str, Any], tmp_path: Path) -> None:
    queue = SqliteQueue(tmp_path / "q.db")
    try:
        queue.enqueue(str(uuid.uuid4()), "issues", assignment("assigned"), repo=REPO)
        assert cancel_unassigned(queue, "issues", payload) == []
        assert len(queue.queued(REPO, "issues")) == 1
    finally:
        queue.close()
