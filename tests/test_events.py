"""Event routing (DESIGN §3) on the vendored @octokit/webhooks-examples payloads."""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Commands, Labels, RepoConfig
from bot.events import Ignore, decision_json, describe, installation_id, repo_full_name
from bot.events import decide as decide_with
from bot.models import Job, JobKind
from bot.workflows.handlers import HANDLERS

# The trigger rules of every kind, as if each were built; `BUILT` is what production routes.
decide = functools.partial(decide_with, kinds=frozenset(JobKind))
BUILT = frozenset(HANDLERS)

WEBHOOKS = Path(__file__).parent / "data" / "webhooks"
DEFAULT = RepoConfig()
ACTIONS = {"fix_issue", "implement", "refuel", "tdd", "cover", "follow_up", "ignore"}
DECISION_KEYS = {"action", "reason", "repo", "number", "actor", "ref", "installation_id", "params"}


def _load() -> dict[str, list[dict[str, Any]]]:
    return {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(WEBHOOKS.glob("*.json"))}


VENDORED = _load()
ALL = [
    pytest.param(event, ex["payload"], id=f"{event}-{i}-{ex['action'] or 'none'}")
    for event, examples in VENDORED.items()
    for i, ex in enumerate(examples)
]


def example(event: str, action: str | None = None) -> dict[str, Any]:
    """A deep copy of the first vendored payload of `event` (with `action`)."""
    for ex in VENDORED[event]:
        if action is None or ex["action"] == action:
            return copy.deepcopy(ex["payload"])
    raise LookupError(f"no vendored {event}.{action}")


def labeled(name: str) -> dict[str, Any]:
    payload = example("issues", "labeled")
    payload["label"]["name"] = name
    return payload


def comment(body: str, *, on_pr: bool = False) -> dict[str, Any]:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = body
    if on_pr:
        # The examples hold no comment on a pull request; this is the key GitHub adds then.
        number = payload["issue"]["number"]
        base = "https://api.github.com/repos/Codertocat/Hello-World"
        payload["issue"]["pull_request"] = {
            "url": f"{base}/pulls/{number}",
            "html_url": f"https://github.com/Codertocat/Hello-World/pull/{number}",
            "diff_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.diff",
            "patch_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.patch",
            "merged_at": None,
        }
    return payload


def push(branch: str = "feature/login", *files: str) -> dict[str, Any]:
    payload: dict[str, Any] = next(
        copy.deepcopy(ex["payload"])
        for ex in VENDORED["push"]
        if ex["payload"]["ref"].startswith("refs/heads/")
    )
    payload["ref"] = f"refs/heads/{branch}"
    payload["commits"][0]["added"] = list(files)
    payload["commits"][0]["modified"] = []
    payload["commits"][0]["removed"] = []
    return payload


def as_bot(payload: dict[str, Any], login: str, *, type_: str = "Bot") -> dict[str, Any]:
    payload["sender"]["login"] = login
    payload["sender"]["type"] = type_
    if "comment" in payload:
        payload["comment"]["user"]["login"] = login
        payload["comment"]["user"]["type"] = type_
    return payload


def job(decision: Job | Ignore) -> Job:
    assert isinstance(decision, Job), decision
    return decision


def ignored(decision: Job | Ignore, *words: str) -> Ignore:
    assert isinstance(decision, Ignore), decision
    for word in words:
        assert word in decision.reason, (word, decision.reason)
    return decision


# --- the vendored set --------------------------------------------------------------------


def test_vendored_set_is_complete_and_licensed() -> None:
    assert len(VENDORED) >= 58
    assert {"issues", "issue_comment", "push", "workflow_dispatch", "pull_request"} <= set(VENDORED)
    assert sum(len(v) for v in VENDORED.values()) >= 329
    for event, examples in VENDORED.items():
        assert examples, event
        for ex in examples:
            assert set(ex) == {"action", "payload"}
            assert ex["action"] == ex["payload"].get("action"), event
    assert "MIT License" in (WEBHOOKS / "LICENSE").read_text()
    readme = (WEBHOOKS / "README.md").read_text()
    assert re.search(r"@octokit/webhooks-examples.*\*\*\d+\.\d+\.\d+\*\*", readme, re.S)
    assert "scripts/vendor_webhooks.py" in readme
    size = sum(p.stat().st_size for p in WEBHOOKS.iterdir())
    assert size < 10_000_000


@pytest.mark.parametrize(("event", "payload"), ALL)
def test_decide_handles_every_vendored_payload(event: str, payload: dict[str, Any]) -> None:
    before = copy.deepcopy(payload)
    decision = decide(event, payload, DEFAULT, bot_login="agentbot")
    assert isinstance(decision, Job | Ignore)
    out = decision_json(decision)
    assert set(out) == DECISION_KEYS
    assert out["action"] in ACTIONS
    assert out["reason"]
    json.dumps(out)
    assert payload == before  # decide does not touch its input
    # Unmodified examples only trigger a refuel (workflow_dispatch); no label or comment in
    # them is an agentbot trigger, and the push examples are tags or the default branch.
    assert isinstance(decision, Job) == (event == "workflow_dispatch")


def test_unrouted_events_name_event_and_action() -> None:
    ignored(decide("star", example("star", "created"), DEFAULT), "star.created")
    ignored(
        decide("pull_request", example("pull_request", "labeled"), DEFAULT), "pull_request.labeled"
    )
    ignored(decide("create", example("create"), DEFAULT), "create does not trigger")
    ignored(decide("issues", example("issues", "opened"), DEFAULT), "issues.opened")
    ignored(decide("issues", example("issues", "unlabeled"), DEFAULT), "issues.unlabeled")


def test_early_ignore_keeps_repo_and_actor() -> None:
    decision = ignored(decide("issues", example("issues", "opened"), DEFAULT))
    assert decision.repo == "Codertocat/Hello-World"
    assert decision.actor == "Codertocat"


# --- issues.labeled ----------------------------------------------------------------------


def test_fix_label_starts_fix_issue() -> None:
    payload = labeled("agent-fix")
    payload["installation"] = {"id": 42, "node_id": "x"}
    got = job(decide("issues", payload, DEFAULT))
    assert got.kind is JobKind.FIX_ISSUE
    assert got.repo == "Codertocat/Hello-World"
    assert got.number == payload["issue"]["number"] == 1
    assert got.actor == "Codertocat"
    assert got.installation_id == 42
    assert got.delivery_id == ""
    assert got.params == {"trigger": "label", "label": "agent-fix"}


def test_tdd_label_starts_tdd() -> None:
    assert job(decide("issues", labeled("agent-tdd"), DEFAULT)).kind is JobKind.TDD


def test_label_names_compare_like_github_case_insensitively() -> None:
    assert job(decide("issues", labeled("Agent-Fix"), DEFAULT)).kind is JobKind.FIX_ISSUE


def test_other_label_is_ignored_by_name() -> None:
    decision = ignored(decide("issues", labeled("bug"), DEFAULT), "'bug'", "agent-fix")
    assert decision.number == 1
    assert decision.reply == ""


def test_custom_labels_from_config() -> None:
    cfg = RepoConfig(labels=Labels(fix="bot:fix", tdd="kata"))
    assert job(decide("issues", labeled("bot:fix"), cfg)).kind is JobKind.FIX_ISSUE
    assert job(decide("issues", labeled("kata"), cfg)).kind is JobKind.TDD
    ignored(decide("issues", labeled("agent-fix"), cfg), "agent-fix", "bot:fix")


def test_empty_configured_label_matches_nothing() -> None:
    cfg = RepoConfig(labels=Labels(fix="", tdd=" "))
    ignored(decide("issues", labeled(""), cfg), "not an agentbot label")
    ignored(decide("issues", labeled(" "), cfg), "not an agentbot label")


def test_closed_or_locked_issue_is_skipped() -> None:
    closed = labeled("agent-fix")
    closed["issue"]["state"] = "closed"
    ignored(decide("issues", closed, DEFAULT), "#1 is closed")
    locked = labeled("agent-fix")
    locked["issue"]["locked"] = True
    ignored(decide("issues", locked, DEFAULT), "#1 is locked")


def test_labeled_without_label_is_ignored() -> None:
    payload = labeled("agent-fix")
    del payload["label"]
    ignored(decide("issues", payload, DEFAULT), "without a label")


# --- issue_comment.created ---------------------------------------------------------------


@pytest.mark.parametrize(
    "body", ["/fix", "  \n\t/fix", "/fix please look at the null case", "/FIX", "/fix\nmore text"]
)
def test_fix_command_on_issue(body: str) -> None:
    payload = comment(body)
    got = job(decide("issue_comment", payload, DEFAULT))
    assert got.kind is JobKind.FIX_ISSUE
    assert (got.number, got.actor, got.repo) == (1, "Codertocat", "Codertocat/Hello-World")
    assert got.params == {"trigger": "comment", "comment_id": payload["comment"]["id"]}


@pytest.mark.parametrize(
    "body", ["/fixes", "/fix.", "please /fix", "> /fix", "", "/fi", "fix", "`/fix`", "/unknown"]
)
def test_non_commands_are_ignored_without_reply(body: str) -> None:
    decision = ignored(decide("issue_comment", comment(body), DEFAULT), "not an agentbot command")
    assert decision.reply == ""


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ("/implement", ""),
        ("/implement   ", ""),
        ("/implement specs/001-login/tasks.md", "specs/001-login/tasks.md"),
        ("/implement `specs/tasks.md` now please", "specs/tasks.md"),
        ("  /implement ./specs//tasks.md\nthanks", "specs/tasks.md"),
        ("/implement tasks.md", "tasks.md"),
    ],
)
def test_implement_command_on_pull_request(body: str, path: str) -> None:
    got = job(decide("issue_comment", comment(body, on_pr=True), DEFAULT))
    assert got.kind is JobKind.IMPLEMENT
    assert got.number == 1
    assert got.ref == ""  # the worker resolves the PR head
    assert got.params["tasks_path"] == path
    assert got.params["trigger"] == "comment"


@pytest.mark.parametrize(
    ("body", "path", "selection"),
    [
        ("/implement phase 2", "", "phase 2"),
        ("/implement T003", "", "T003"),
        ("/implement specs/001/tasks.md T010-T015", "specs/001/tasks.md", "T010-T015"),
        ("/implement tasks.md T012,T014 US2\nthanks", "tasks.md", "T012,T014 US2"),
    ],
)
def test_implement_command_selects_tasks(body: str, path: str, selection: str) -> None:
    got = job(decide("issue_comment", comment(body, on_pr=True), DEFAULT))
    assert got.params["tasks_path"] == path
    assert got.params["selection"] == selection


@pytest.mark.parametrize("path", ["../secrets/tasks.md", "specs/../../x.md", "/etc/passwd", "a\\b"])
def test_implement_path_must_stay_in_the_repository(path: str) -> None:
    decision = ignored(decide("issue_comment", comment(f"/implement {path}", on_pr=True), DEFAULT))
    assert "/implement" in decision.reply
    assert decision.number == 1


def test_cover_command_on_pull_request() -> None:
    got = job(decide("issue_comment", comment("/cover", on_pr=True), DEFAULT))
    assert got.kind is JobKind.COVER
    assert got.number == 1
    assert got.params["targets"] == [] and got.params["force"] is False


def test_cover_takes_targets_and_force() -> None:
    body = "/cover src/calc.py `Shop.total` --force\nthanks!"
    got = job(decide_with("issue_comment", comment(body, on_pr=True), DEFAULT, kinds=BUILT))
    assert got.params["targets"] == ["src/calc.py", "Shop.total"]
    assert got.params["force"] is True


@pytest.mark.parametrize(
    ("body", "on_pr", "hint"),
    [
        ("/implement", False, "/fix"),
        ("/cover", False, "/fix"),
    ],
)
def test_command_on_wrong_kind_tells_the_user(body: str, on_pr: bool, hint: str) -> None:
    decision = ignored(decide("issue_comment", comment(body, on_pr=on_pr), DEFAULT), body)
    assert hint in decision.reply
    assert decision.number == 1
    assert decision_json(decision)["params"] == {"reply": decision.reply}


def test_custom_commands_from_config() -> None:
    cfg = RepoConfig(commands=Commands(fix="@agentbot fix", implement="/build", cover="/tests"))
    assert job(decide("issue_comment", comment("@agentbot fix now"), cfg)).kind is JobKind.FIX_ISSUE
    ignored(decide("issue_comment", comment("@agentbot fixit"), cfg), "not an agentbot command")
    ignored(decide("issue_comment", comment("/fix"), cfg), "not an agentbot command")
    got = job(decide("issue_comment", comment("/build docs/tasks.md", on_pr=True), cfg))
    assert (got.kind, got.params["tasks_path"]) == (JobKind.IMPLEMENT, "docs/tasks.md")
    assert job(decide("issue_comment", comment("/tests", on_pr=True), cfg)).kind is JobKind.COVER
    wrong = ignored(decide("issue_comment", comment("/build"), cfg))
    assert "@agentbot fix" in wrong.reply


def test_longer_command_wins_over_its_prefix() -> None:
    cfg = RepoConfig(commands=Commands(fix="/agent", implement="/agent implement"))
    got = job(decide("issue_comment", comment("/agent implement", on_pr=True), cfg))
    assert got.kind is JobKind.IMPLEMENT


def test_empty_configured_command_is_switched_off() -> None:
    cfg = RepoConfig(commands=Commands(fix=""))
    ignored(decide("issue_comment", comment(""), cfg), "not an agentbot command")
    ignored(decide("issue_comment", comment("anything"), cfg), "not an agentbot command")


@pytest.mark.parametrize("action", ["edited", "deleted"])
def test_edited_or_deleted_comments_never_trigger(action: str) -> None:
    payload = example("issue_comment", action)
    payload["comment"]["body"] = "/fix"
    ignored(decide("issue_comment", payload, DEFAULT), f"issue_comment.{action}")


def test_command_on_closed_or_locked_issue_is_skipped() -> None:
    closed = comment("/fix")
    closed["issue"]["state"] = "closed"
    ignored(decide("issue_comment", closed, DEFAULT), "issue #1 is closed")
    locked = comment("/cover", on_pr=True)
    locked["issue"]["locked"] = True
    ignored(decide("issue_comment", locked, DEFAULT), "pull request #1 is locked")


# --- bot-loop guard ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bot_login", "sender"),
    [
        ("agentbot", "agentbot[bot]"),
        ("agentbot[bot]", "agentbot[bot]"),
        ("agentbot[bot]", "agentbot"),
        ("AgentBot", "agentbot[bot]"),
    ],
)
def test_events_from_the_bot_itself_are_ignored(bot_login: str, sender: str) -> None:
    for event, payload in [
        ("issue_comment", comment("/fix")),
        ("issues", labeled("agent-fix")),
        ("push", push("feature", "tasks.md")),
    ]:
        decision = decide(event, as_bot(payload, sender), DEFAULT, bot_login=bot_login)
        ignored(decision, "agentbot itself", "loops")


def test_the_bot_itself_is_ignored_even_when_allowed() -> None:
    cfg = RepoConfig(allowed_bots=["agentbot[bot]"])
    payload = as_bot(comment("/fix"), "agentbot[bot]")
    ignored(decide("issue_comment", payload, cfg, bot_login="agentbot"), "itself")


def test_the_bots_own_comment_is_ignored_even_under_a_human_sender() -> None:
    payload = comment("/fix")
    payload["comment"]["user"]["login"] = "agentbot[bot]"
    ignored(decide("issue_comment", payload, DEFAULT, bot_login="agentbot"), "itself")


@pytest.mark.parametrize(
    ("login", "type_"), [("dependabot[bot]", "Bot"), ("renovate", "Bot"), ("ci[bot]", "User")]
)
def test_other_bots_are_ignored_unless_allowed(login: str, type_: str) -> None:
    payload = as_bot(comment("/fix"), login, type_=type_)
    ignored(decide("issue_comment", payload, DEFAULT), login, "allowed_bots")
    bare = login.removesuffix("[bot]")
    for allowed in (login, bare, f"{bare}[bot]", bare.upper()):
        cfg = RepoConfig(allowed_bots=[allowed])
        got = job(decide("issue_comment", copy.deepcopy(payload), cfg, bot_login="agentbot"))
        assert got.actor == login


def test_a_human_named_like_the_bot_prefix_is_not_the_bot() -> None:
    payload = comment("/fix")
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "agentbotfan"
    assert (
        job(decide("issue_comment", payload, DEFAULT, bot_login="agentbot")).actor == "agentbotfan"
    )


# --- push ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["specs/001-login/tasks.md", "tasks.md", "a/b/c/tasks.md"])
def test_push_changing_tasks_md_on_a_branch_implements(path: str) -> None:
    payload = push("feature/login", "README.md", path)
    got = job(decide("push", payload, DEFAULT))
    assert got.kind is JobKind.IMPLEMENT
    assert got.ref == "feature/login"
    assert got.number is None
    assert got.actor == "Codertocat"
    assert got.params == {"trigger": "push", "tasks_path": path, "sha": payload["after"]}


def test_push_modified_files_count_too() -> None:
    payload = push("feature", "README.md")
    payload["commits"][0]["modified"] = ["specs/x/tasks.md"]
    assert job(decide("push", payload, DEFAULT)).params["tasks_path"] == "specs/x/tasks.md"


def test_push_names_every_tasks_md_it_changed() -> None:
    got = job(decide("push", push("f", "b/tasks.md", "a/tasks.md"), DEFAULT))
    assert got.params["tasks_path"] == "b/tasks.md"
    assert got.params["tasks_paths"] == ["b/tasks.md", "a/tasks.md"]


@pytest.mark.parametrize(
    "path", ["mytasks.md", "docs/tasks.md.bak", "Tasks.md", "tasks.mdx", "x/tasks"]
)
def test_push_without_tasks_md_is_ignored(path: str) -> None:
    ignored(decide("push", push("feature", path), DEFAULT), "changed no tasks.md")


def test_push_that_adds_then_removes_tasks_md_is_ignored() -> None:
    payload = push("feature", "specs/tasks.md")
    later = copy.deepcopy(payload["commits"][0])
    later.update(added=[], modified=[], removed=["specs/tasks.md"])
    payload["commits"].append(later)
    ignored(decide("push", payload, DEFAULT), "changed no tasks.md")


def test_push_falls_back_to_head_commit_when_commits_is_empty() -> None:
    payload = push("feature", "tasks.md")
    payload["head_commit"] = payload["commits"][0]
    payload["commits"] = []
    assert job(decide("push", payload, DEFAULT)).params["tasks_path"] == "tasks.md"


def test_push_to_default_branch_deleted_branch_and_tags_are_ignored() -> None:
    ignored(decide("push", push("master", "tasks.md"), DEFAULT), "default branch master")
    deleted = push("feature", "tasks.md")
    deleted["deleted"] = True
    ignored(decide("push", deleted, DEFAULT), "feature was deleted")
    tag = push("x", "tasks.md")
    tag["ref"] = "refs/tags/v1.0"
    ignored(decide("push", tag, DEFAULT), "refs/tags/v1.0", "not a branch")
    for ex in VENDORED["push"]:  # the real tag and deleted-tag pushes
        if ex["payload"]["ref"].startswith("refs/tags/"):
            ignored(decide("push", ex["payload"], DEFAULT), "not a branch")


def test_default_branch_argument_is_the_fallback() -> None:
    payload = push("main", "tasks.md")
    del payload["repository"]["default_branch"]
    ignored(decide("push", payload, DEFAULT), "default branch is unknown")
    ignored(decide("push", payload, DEFAULT, default_branch="main"), "default branch main")
    assert job(decide("push", payload, DEFAULT, default_branch="trunk")).ref == "main"
    # The payload, when it names one, wins over the argument.
    named = push("main", "tasks.md")
    named["repository"]["default_branch"] = "trunk"
    assert job(decide("push", named, DEFAULT, default_branch="main")).ref == "main"


# --- schedule and workflow_dispatch --------------------------------------------------------


def test_schedule_refuels() -> None:
    base = example("workflow_dispatch")
    payload = {"schedule": "0 3 * * *", "repository": base["repository"], "sender": base["sender"]}
    got = job(decide("schedule", payload, DEFAULT))
    assert got.kind is JobKind.REFUEL
    assert got.repo == base["repository"]["full_name"]
    assert got.params == {"trigger": "schedule", "schedule": "0 3 * * *"}
    ignored(decide("schedule", {"schedule": "0 3 * * *"}, DEFAULT), "repository")


def test_workflow_dispatch_refuels_with_parsed_inputs() -> None:
    payload = example("workflow_dispatch")
    payload["inputs"] = {"label": " bug ", "limit": "5", "max_usd": "2.5", "dry_run": "true"}
    got = job(decide("workflow_dispatch", payload, DEFAULT))
    assert got.kind is JobKind.REFUEL
    assert got.params == {
        "trigger": "workflow_dispatch",
        "label": "bug",
        "limit": 5,
        "max_usd": 2.5,
    }
    payload["inputs"] = {"limit": 3, "max_usd": 4, "label": ""}
    assert job(decide("workflow_dispatch", payload, DEFAULT)).params == {
        "trigger": "workflow_dispatch",
        "limit": 3,
        "max_usd": 4.0,
    }
    payload["inputs"] = None
    assert job(decide("workflow_dispatch", payload, DEFAULT)).params == {
        "trigger": "workflow_dispatch"
    }


@pytest.mark.parametrize(
    ("inputs", "word"),
    [
        ({"limit": "five"}, "limit"),
        ({"limit": "0"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"limit": True}, "limit"),
        ({"limit": "9" * 5000}, "limit"),
        ({"max_usd": "abc"}, "max_usd"),
        ({"max_usd": "nan"}, "max_usd"),
        ({"max_usd": "inf"}, "max_usd"),
        ({"max_usd": "0"}, "max_usd"),
        ({"max_usd": 10**400}, "max_usd"),
        ({"max_usd": [1]}, "max_usd"),
        ({"label": 7}, "label"),
        ({"label": "   "}, "label"),
    ],
)
def test_workflow_dispatch_bad_inputs_are_ignored_with_the_reason(
    inputs: dict[str, Any], word: str
) -> None:
    payload = example("workflow_dispatch")
    payload["inputs"] = inputs
    ignored(decide("workflow_dispatch", payload, DEFAULT), "workflow_dispatch", f"input {word}")


# --- malformed payloads and helpers --------------------------------------------------------


@pytest.mark.parametrize("payload", [None, [], "text", 3, [{"action": "labeled"}]])
def test_non_object_payload_is_ignored(payload: Any) -> None:
    ignored(decide("issues", payload, DEFAULT), "not a JSON object")


def test_missing_event_name_is_ignored() -> None:
    ignored(decide("", labeled("agent-fix"), DEFAULT), "no event name")


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("issue", "number"), "1", "issue.number"),
        (("issue", "number"), True, "issue.number"),
        (("issue", "number"), 0, "issue.number"),
        (("sender", "login"), None, "sender.login"),
        (("repository", "full_name"), "not a repo", "repository.full_name"),
        (("label",), "agent-fix", "label"),
        (("issue",), None, "issue"),
    ],
)
def test_malformed_fields_are_named(path: tuple[str, ...], value: Any, where: str) -> None:
    payload = labeled("agent-fix")
    node = payload
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    ignored(decide("issues", payload, DEFAULT), "malformed issues payload", where)


def test_non_string_action_is_ignored() -> None:
    payload = labeled("agent-fix")
    payload["action"] = ["labeled"]
    ignored(decide("issues", payload, DEFAULT), "action")


def test_installation_id_and_repo_full_name() -> None:
    payload = labeled("agent-fix")
    assert installation_id(payload) is None
    assert repo_full_name(payload) == "Codertocat/Hello-World"
    payload["installation"] = {"id": 99}
    assert installation_id(payload) == 99
    for bad in [{"id": True}, {"id": "99"}, [], None, {}]:
        payload["installation"] = bad
        assert installation_id(payload) is None
    # `.` and `..` would make the repository's API calls other endpoints' paths
    odd = [{"full_name": n} for n in ("no-slash", "../x", "a/..", "./b", "a/b/c")]
    for bad_repo in [*odd, {"full_name": 5}, "x", None, {}]:
        payload["repository"] = bad_repo
        assert repo_full_name(payload) is None
    assert installation_id([]) is None  # type: ignore[arg-type]
    assert repo_full_name("x") is None  # type: ignore[arg-type]


def test_decision_json_of_a_job() -> None:
    got = job(decide("issue_comment", comment("/implement specs/tasks.md", on_pr=True), DEFAULT))
    out = decision_json(got)
    assert out == {
        "action": "implement",
        "reason": describe(got),
        "repo": "Codertocat/Hello-World",
        "number": 1,
        "actor": "Codertocat",
        "ref": "",
        "installation_id": None,
        "params": got.params,
    }
    assert out["reason"] == "implement on Codertocat/Hello-World#1 for Codertocat (by comment)"
    branch = job(decide("push", push("feat", "tasks.md"), DEFAULT))
    assert describe(branch) == "implement on Codertocat/Hello-World@feat for Codertocat (by push)"


def test_ignore_is_frozen() -> None:
    decision = Ignore(reason="x")
    with pytest.raises(ValueError, match="frozen"):
        decision.reason = "y"  # type: ignore[misc]


# --- totality under random input -----------------------------------------------------------

KEYS = [
    "action", "issue", "number", "state", "locked", "pull_request", "label", "name", "sender",
    "login", "type", "repository", "full_name", "default_branch", "installation", "id",
    "comment", "body", "user", "ref", "deleted", "commits", "added", "modified", "removed",
    "head_commit", "after", "pusher", "inputs", "limit", "max_usd", "schedule",
]  # fmt: skip
EVENTS = ["issues", "issue_comment", "push", "schedule", "workflow_dispatch", "star", "ping"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**63, -(2**64), 10**400])
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["/fix", " /implement ../x", "/cover", "agent-fix", "refs/heads/x", "Bot"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=30,
)
# Commands start with a sigil (or are blank: switched off), as the config demands.
commands = st.sampled_from(["/", "@", " "]).flatmap(
    lambda sigil: st.text(max_size=8).map(lambda rest: sigil + rest if sigil.strip() else "")
)
configs = st.builds(
    RepoConfig,
    labels=st.builds(Labels, fix=st.text(max_size=8), tdd=st.text(max_size=8)),
    commands=st.builds(
        Commands,
        fix=commands | st.just("/fix"),
        implement=commands | st.just("/implement"),
        cover=commands,
    ),
    allowed_bots=st.lists(st.text(max_size=8), max_size=3),
)


def check_total(event: Any, payload: Any, config: RepoConfig, bot_login: str) -> Job | Ignore:
    decision = decide(event, payload, config, bot_login=bot_login)
    built = decide_with(event, payload, config, kinds=BUILT, bot_login=bot_login)
    assert not isinstance(built, Job) or built.kind in BUILT
    assert isinstance(decision, Job | Ignore)
    out = decision_json(decision)
    assert out["action"] in ACTIONS and out["reason"]
    json.dumps(out)
    if isinstance(decision, Job):
        assert repo_full_name({"repository": {"full_name": decision.repo}}) == decision.repo
    return decision


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    event=st.sampled_from(EVENTS) | st.text(max_size=10),
    payload=json_values | st.dictionaries(st.sampled_from(KEYS), json_values, max_size=10),
    config=configs,
    bot_login=st.text(max_size=10),
)
def test_decide_never_raises_on_random_structures(
    event: str, payload: Any, config: RepoConfig, bot_login: str
) -> None:
    check_total(event, payload, config, bot_login)


FOCUS: list[tuple[str | int, ...]] = [
    ("action",), ("issue",), ("issue", "number"), ("issue", "state"), ("issue", "locked"),
    ("issue", "pull_request"), ("label",), ("label", "name"), ("sender",), ("sender", "login"),
    ("sender", "type"), ("comment",), ("comment", "body"), ("comment", "user"), ("comment", "id"),
    ("repository",), ("repository", "full_name"), ("repository", "default_branch"),
    ("installation",), ("installation", "id"), ("ref",), ("deleted",), ("commits",),
    ("commits", 0), ("commits", 0, "added"), ("commits", 0, "added", 0), ("head_commit",),
    ("pusher",), ("inputs",), ("inputs", "limit"), ("inputs", "max_usd"), ("inputs", "label"),
]  # fmt: skip


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _mutate(payload: Any, path: tuple[Any, ...], op: str, value: Any) -> Any:
    if not path:
        return value if op == "replace" else payload
    parent = payload
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return payload
    last = path[-1]
    if isinstance(parent, dict) or (isinstance(parent, list) and isinstance(last, int)):
        try:
            if op == "delete":
                del parent[last]
            else:
                parent[last] = value
        except (KeyError, IndexError):
            pass
    return payload


@functools.cache
def _triggering(event: str) -> list[dict[str, Any]]:
    """Real payloads made to hit each rule, so mutations explore the deep branches."""
    wd = example("workflow_dispatch")
    wd["inputs"] = {"limit": "3", "max_usd": "1.5", "label": "bug"}
    return {
        "issues": [labeled("agent-fix"), labeled("agent-tdd"), example("issues", "opened")],
        "issue_comment": [comment("/fix"), comment("/implement a/tasks.md", on_pr=True)],
        "push": [push("feature", "specs/tasks.md"), example("push")],
        "workflow_dispatch": [wd],
        "schedule": [{"schedule": "* * * * *", "repository": wd["repository"]}],
    }.get(event) or [example(event)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), config=configs | st.just(DEFAULT))
def test_decide_never_raises_on_mutated_real_payloads(
    data: st.DataObject, config: RepoConfig
) -> None:
    event = data.draw(st.sampled_from([*EVENTS[:5], "pull_request", "check_run"]), label="event")
    payload = copy.deepcopy(data.draw(st.sampled_from(_triggering(event)), label="base"))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4), label="mutations")):
        paths = list(_paths(payload))
        index = st.integers(min_value=0, max_value=len(paths) - 1).map(paths.__getitem__)
        path = data.draw(st.sampled_from(FOCUS) | index, label="path")
        op = data.draw(st.sampled_from(["delete", "replace"]), label="op")
        value = data.draw(json_values, label="value")
        payload = _mutate(payload, path, op, value)
    as_event = data.draw(st.sampled_from([event, *EVENTS]), label="as_event")
    decision = check_total(as_event, payload, config, data.draw(st.sampled_from(["", "agentbot"])))
    hypothesis.event(type(decision).__name__)


def test_workflow_dispatch_from_the_app_runs_the_named_job() -> None:
    from bot.worker.process import dispatch_inputs

    job = Job(kind=JobKind.FIX_ISSUE, repo="octo/app", number=7, actor="alice", params={"x": 1})
    inputs = dispatch_inputs(job)
    payload: dict[str, Any] = {
        "inputs": inputs,
        "ref": "refs/heads/main",
        "repository": {"full_name": "octo/app", "default_branch": "main"},
        "sender": {"login": "agentbot[bot]", "type": "Bot"},
    }
    decided = decide("workflow_dispatch", payload, RepoConfig())
    assert isinstance(decided, Job)
    assert (decided.kind, decided.number, decided.actor) == (JobKind.FIX_ISSUE, 7, "alice")
    assert decided.params["x"] == 1
    bad = dict(payload, inputs={**inputs, "kind": "format_disk"})
    ignored = decide("workflow_dispatch", bad, RepoConfig())
    assert isinstance(ignored, Ignore) and "input kind" in ignored.reason


# --- only built kinds are routed (a kind without a handler has no trigger) -------------------


def test_every_routed_kind_has_a_handler() -> None:
    """Every trigger, decided as production decides, starts only kinds in the handler map."""
    wd = example("workflow_dispatch")
    triggers = [
        ("issues", labeled("agent-fix")),
        ("issues", labeled("agent-tdd")),
        ("issue_comment", comment("/fix")),
        ("issue_comment", comment("/implement", on_pr=True)),
        ("issue_comment", comment("/cover", on_pr=True)),
        ("issue_comment", comment("/fix", on_pr=True)),
        ("issue_comment", comment("/plan")),
        ("push", push("feature", "tasks.md")),
        ("schedule", {"schedule": "0 * * * *", "repository": wd["repository"]}),
        ("workflow_dispatch", wd),
    ]
    routed = {
        got.kind
        for event, payload in triggers
        if isinstance(got := decide_with(event, payload, DEFAULT, kinds=BUILT), Job)
    }
    assert (
        routed
        == set(HANDLERS)
        == {
            JobKind.FIX_ISSUE,
            JobKind.IMPLEMENT,
            JobKind.REFUEL,
            JobKind.COVER,
            JobKind.TDD,
            JobKind.FOLLOW_UP,
            JobKind.PLAN,
        }
    )
    for kind in JobKind:
        assert (kind in HANDLERS) == (kind in routed), kind


def test_the_tdd_label_is_routed_now_that_tdd_is_built() -> None:
    got = job(decide_with("issues", labeled("agent-tdd"), DEFAULT, kinds=BUILT))
    assert got.kind is JobKind.TDD and got.params == {"trigger": "label", "label": "agent-tdd"}
    without = ignored(
        decide_with("issues", labeled("agent-tdd"), DEFAULT, kinds=BUILT - {JobKind.TDD})
    )
    assert "not an agentbot label" in without.reason and "TDD" not in without.reason


def test_unbuilt_triggers_are_not_routed_nor_offered() -> None:
    unbuilt = BUILT - {JobKind.FOLLOW_UP}
    fix_on_pr = ignored(
        decide_with("issue_comment", comment("/fix", on_pr=True), DEFAULT, kinds=unbuilt)
    )
    assert "/implement" in fix_on_pr.reply and "/cover" in fix_on_pr.reply


def test_a_command_needs_a_sigil() -> None:
    with pytest.raises(ValueError, match="starts with / or @"):
        Commands(fix="fix")
    assert Commands(fix="", cover="  ").fix == ""


def test_the_app_and_the_readme_offer_only_built_triggers() -> None:
    root = Path(__file__).resolve().parents[1]
    offered = (root / "app.yml").read_text() + (root / "README.md").read_text()
    for built in (
        "/fix",
        "/implement",
        "/cover",
        "/plan",
        "/approve",
        "agent-fix",
        "agent-tdd",
        "agent-plan",
    ):
        assert built in offered, built
