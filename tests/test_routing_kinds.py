"""Every kind routing can start has a handler; an unbuilt kind's trigger starts nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from bot.config import RepoConfig
from bot.events import Ignore, decide
from bot.models import Job, JobKind
from bot.workflows.handlers import HANDLERS

DATA = Path(__file__).parent / "data" / "webhooks"
REPO = {
    "full_name": "octo/app",
    "name": "app",
    "default_branch": "main",
    "owner": {"login": "octo"},
}
SENDER = {"login": "alice", "type": "User", "id": 1}


def _example(event: str, action: str) -> dict[str, Any]:
    items = json.loads((DATA / f"{event}.json").read_text())
    payload = next(i["payload"] for i in items if i.get("action") == action)
    payload = copy.deepcopy(payload)
    payload["repository"] = {**payload["repository"], **REPO}
    payload["sender"] = SENDER
    return dict(payload)


def triggers() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every recorded delivery, and every label, command and dispatch a person can send."""
    for path in sorted(DATA.glob("*.json")):
        for item in json.loads(path.read_text()):
            if isinstance(item, dict) and isinstance(item.get("payload"), dict):
                yield path.stem, item["payload"]
    config = RepoConfig()
    for label in config.labels.model_dump().values():
        p = _example("issues", "labeled")
        p["issue"] = {**p["issue"], "state": "open", "locked": False, "number": 3}
        p["issue"].pop("pull_request", None)
        p["label"] = {**p["label"], "name": label}
        yield "issues", p
    commands = [*config.commands.model_dump().values(), "/tdd", "@agentbot tdd"]
    for body in commands:
        for on_pull in (False, True):
            p = _example("issue_comment", "created")
            p["issue"] = {**p["issue"], "state": "open", "locked": False, "number": 5}
            if on_pull:
                p["issue"]["pull_request"] = {
                    "url": "https://api.github.com/repos/octo/app/pulls/5"
                }
            else:
                p["issue"].pop("pull_request", None)
            p["comment"] = {**p["comment"], "body": f"{body} please", "user": SENDER}
            yield "issue_comment", p
    for kind in JobKind:
        inputs = {"kind": kind.value, "number": "3", "actor": "alice", "ref": "", "params": "{}"}
        yield "workflow_dispatch", {"inputs": inputs, "repository": REPO, "sender": SENDER}
    yield "workflow_dispatch", {"inputs": {}, "repository": REPO, "sender": SENDER}
    yield "schedule", {"schedule": "0 3 * * *", "repository": REPO}


def routed(kinds: Collection[JobKind]) -> set[JobKind]:
    found: set[JobKind] = set()
    for event, payload in triggers():
        decision = decide(event, payload, RepoConfig(), kinds=kinds)
        if isinstance(decision, Job):
            found.add(decision.kind)
        else:
            assert isinstance(decision, Ignore)
    return found


def test_the_triggers_reach_every_kind_when_all_are_built() -> None:
    """The enumeration is not vacuous: with every kind built, every kind is started."""
    assert routed(set(JobKind)) == set(JobKind)


def test_every_routed_kind_has_a_handler() -> None:
    started = routed(HANDLERS)
    assert started <= set(HANDLERS), started - set(HANDLERS)
    assert started == set(HANDLERS)  # and every handler has a trigger
    assert all(callable(HANDLERS[kind]) for kind in started)


def test_an_unbuilt_kind_offers_nothing() -> None:
    unbuilt = set(JobKind) - set(HANDLERS)
    for event, payload in triggers():
        decision = decide(event, payload, RepoConfig(), kinds=HANDLERS)
        if isinstance(decision, Ignore) and decision.reply:
            for kind in unbuilt:
                assert kind.value not in decision.reply.lower(), decision.reply
