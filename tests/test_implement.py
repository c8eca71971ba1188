"""Implementer end to end: tasks.md on a branch -> one validated commit per task, and a PR."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

from bot.clock import SystemClock
from bot.config import RepoConfig
from bot.git import clone
from bot.models import Job, JobKind, JobStatus
from bot.outbound.guard import PushGuard
from bot.tasks_md import parse_tasks
from bot.workflows.implement.story import ImplementRun, TaskOutcome, implement
from tests.e2e import BUGGY_FILES, REPO, World, fast_validation_yaml, world
from tests.fakes.anthropic import RecordedRequest, ScriptedReply, finish, reply, tool_use
from tests.fakes.gitrepo import commits, file_url, git, push_files, read_file

pytestmark = pytest.mark.slow

BRANCH = "feature/greet"
FILES = {
    **BUGGY_FILES,
    "calc.py": BUGGY_FILES["calc.py"].replace("a - b", "a + b"),
}

TASKS = """# Tasks: greetings

Prose stays as it is.

## Phase 1: Setup
- [ ] T001 Create mod_t001.py with a function

## Phase 2: Features
- [ ] T002 [P] Create mod_t002.py with a function
- [ ] T003 [P] Create mod_t003.py with a function
- [ ] T004 Create mod_t004.py with a function (depends on T002)

**Checkpoint**: features done

## Phase 3: Polish
- [ ] T005 Create mod_t005.py with a function
"""


def _task_of(request: RecordedRequest) -> str:
    first = json.dumps(request.json["messages"][0]["content"])
    found = re.search(r"# Task (T\d{3})", first)
    assert found, first[:300]
    return found.group(1)


def responder(fail: Collection[str] = ()) -> Callable[[RecordedRequest], ScriptedReply]:
    """Answer by task: turn 1 creates mod_<task>.py, turn 2 finishes (FAIL for `fail`)."""

    def step(request: RecordedRequest) -> ScriptedReply:
        task = _task_of(request)
        turn = len(request.json["messages"])
        if task in fail:
            return reply(finish(status="FAIL", summary=f"{task} cannot be done"))
        if turn == 1:
            src = f'def {task.lower()}() -> str:\n    return "{task}"\n'
            return reply(
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": f"mod_{task.lower()}.py", "file_text": src},
                )
            )
        return reply(finish(summary=f"{task} done"))

    return step


def seed_branch(w: World, tasks: str = TASKS) -> None:
    push_files(w.remote, BRANCH, {"specs/greet/tasks.md": tasks}, start="main")


def job() -> Job:
    return Job(kind=JobKind.IMPLEMENT, repo=REPO, ref=BRANCH, actor="alice")


def tick_of(w: World, sha: str) -> list[str]:
    """The task ids whose box a commit ticked in tasks.md."""
    diff = git(w.remote, "show", "--format=", sha, "--", "specs/greet/tasks.md")
    return re.findall(r"^\+- \[x\] (T\d{3})", diff, flags=re.M)


def pr_body(w: World) -> str:
    """The pull request body as the job last wrote it."""
    return str(w.gh.calls_to("*", rf"/repos/{REPO}/pulls(/\d+)?")[-1].json["body"])


def test_five_tasks_one_commit_each_parallel_in_worktrees(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agentbot.job")
    with world(tmp_path, [responder()] * 12, files=FILES) as w:
        seed_branch(w)
        result = implement(job(), w.env(clock=SystemClock()))
        assert result.status == JobStatus.SUCCESS, result.error

        history = list(reversed(commits(w.remote, BRANCH, base="main")))[1:]  # drop the seed
        subjects = [c.subject for c in history]
        assert len(subjects) == 5
        order = [re.match(r"feat\((T\d{3})\)", s).group(1) for s in subjects]  # type: ignore[union-attr]
        assert order[0] == "T001" and order[-1] == "T005"
        assert order.index("T002") < order.index("T004")
        for c, tid in zip(history, order, strict=True):
            assert tick_of(w, c.sha) == [tid]
        final = read_file(w.remote, BRANCH, "specs/greet/tasks.md") or ""
        assert final.count("- [x]") == 5
        assert "**Checkpoint**: features done" in final

        windows: dict[str, list[float]] = {}
        trees: dict[str, str] = {}
        for rec in caplog.records:
            m = re.match(
                r"task (T\d{3}) (started|finished) t=([\d.]+)(?: in (\S+))?", rec.getMessage()
            )
            if m:
                windows.setdefault(m.group(1), []).append(float(m.group(3)))
                if m.group(4):
                    trees[m.group(1)] = m.group(4)
        (s2, e2), (s3, e3) = windows["T002"], windows["T003"]
        assert s2 < e3 and s3 < e2, "the [P] tasks did not overlap"
        assert trees["T002"] != trees["T003"] and "-wt-" in trees["T002"]

        create = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")
        assert len(create) == 1  # opened by the first checkpoint, updated at the end
        assert create[0].json["body"].count("- [x] T00") == 1
        assert pr_body(w).count("- [x] T00") == 5


def test_resume_after_failure_starts_at_the_next_task(tmp_path: Path) -> None:
    serial = "## Phase 1: All\n- [ ] T001 Create a\n- [ ] T002 Create b\n- [ ] T003 Create c\n"
    broken = [responder(), responder()] * 2 + [responder(fail={"T003"})] * 3
    with world(tmp_path, broken + [responder()] * 2, files=FILES) as w:
        seed_branch(w, serial)
        first = implement(job(), w.env())
        assert first.status == JobStatus.FAILED
        assert [i["status"] for i in first.items] == ["done", "done", "failed"]
        second = implement(job(), w.env())
        assert second.status == JobStatus.SUCCESS, second.error
        assert [i["id"] for i in second.items] == ["T003"]
        subjects = [c.subject for c in commits(w.remote, BRANCH, base="main")]
        assert sorted(s.split(":")[0] for s in subjects if s.startswith("feat(")) == [
            "feat(T001)",
            "feat(T002)",
            "feat(T003)",
        ]


def test_failed_task_skips_dependents_and_is_listed(tmp_path: Path) -> None:
    with world(tmp_path, [responder(fail={"T002"})] * 12, files=FILES) as w:
        seed_branch(w)
        result = implement(job(), w.env())
        states = {i["id"]: i["status"] for i in result.items}
        assert states == {
            "T001": "done",
            "T002": "failed",
            "T003": "done",
            "T004": "skipped",
            "T005": "done",
        }
        assert result.status == JobStatus.FAILED
        body = pr_body(w)
        assert "T002" in body and "failed after 3 tries" in body
        assert "T004" in body and "skipped" in body


def test_implement_on_a_fork_pr_is_refused_with_a_comment(tmp_path: Path) -> None:
    with world(tmp_path, [], files=FILES) as w:
        pr = w.gh.add_pull(REPO, head=BRANCH, head_repo="mallory/calc", user="mallory")
        result = implement(
            Job(kind=JobKind.IMPLEMENT, repo=REPO, number=pr.number, actor="alice"), w.env()
        )
        assert result.status == JobStatus.NEUTRAL
        comments = w.gh.comments_on(REPO, pr.number)
        assert len(comments) == 1 and "fork" in comments[0].body
        assert w.llm.requests == []


def test_implement_on_a_same_repo_pr_runs_on_its_head(tmp_path: Path) -> None:
    with world(tmp_path, [responder()] * 12, files=FILES) as w:
        seed_branch(w, "## Phase 1\n- [ ] T001 Create a\n")
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        result = implement(
            Job(kind=JobKind.IMPLEMENT, repo=REPO, number=pr.number, actor="alice"), w.env()
        )
        assert result.status == JobStatus.SUCCESS, result.error
        assert result.pr_number == pr.number
        assert w.gh.calls_to("POST", rf"/repos/{REPO}/pulls") == []
        assert "- [x] T001" in (read_file(w.remote, BRANCH, "specs/greet/tasks.md") or "")


def test_conflicting_parallel_tasks_fail_alone(tmp_path: Path) -> None:
    tasks = (
        "## Phase 1\n- [ ] T001 [P] Edit shared\n- [ ] T002 [P] Edit shared\n- [ ] T003 Create c\n"
    )

    def step(request: RecordedRequest) -> ScriptedReply:
        task = _task_of(request)
        if len(request.json["messages"]) > 1:
            return reply(finish(summary=f"{task} done"))
        if task == "T003":
            return responder()(request)
        edit = {"command": "create", "path": "shared.py", "file_text": f'WHO = "{task}"\n'}
        return reply(tool_use("str_replace_based_edit_tool", edit))

    with world(tmp_path, [step] * 10, files=FILES) as w:
        seed_branch(w, tasks)
        result = implement(job(), w.env())
        states = {i["id"]: i["status"] for i in result.items}
        assert states == {"T001": "done", "T002": "failed", "T003": "done"}
        detail = next(i["detail"] for i in result.items if i["id"] == "T002")
        assert "conflict in shared.py with another [P] task" in detail
        assert read_file(w.remote, BRANCH, "shared.py") == 'WHO = "T001"\n'


def test_tasks_breaking_limits_fail_alone_and_nothing_of_them_is_pushed(tmp_path: Path) -> None:
    tasks = (
        "## Phase 1\n- [ ] T001 Edit the CI workflow\n- [ ] T002 Remove the old test\n"
        "- [ ] T003 Write a big module\n- [ ] T004 Create mod_t004.py\n"
    )
    actions = {
        "T001": tool_use(
            "str_replace_based_edit_tool",
            {"command": "create", "path": ".github/workflows/x.yml", "file_text": "on: push\n"},
        ),
        "T002": tool_use("bash", {"command": "git rm -q tests/test_calc.py"}),
        "T003": tool_use(
            "str_replace_based_edit_tool",
            {"command": "create", "path": "big.py", "file_text": "x = 1\n" * 250},
        ),
    }

    def step(request: RecordedRequest) -> ScriptedReply:
        task = _task_of(request)
        if task not in actions:
            return responder()(request)
        if len(request.json["messages"]) > 1:
            return reply(finish(summary=f"{task} done"))
        return reply(actions[task])

    with world(tmp_path, [step] * 30, files=FILES) as w:
        seed_branch(w, tasks)
        result = implement(job(), w.env())
        states = {i["id"]: (i["status"], i["detail"]) for i in result.items}
        assert states["T004"][0] == "done"
        assert states["T001"][0] == "failed"
        assert "limits.protected_paths: `.github/workflows/x.yml`" in states["T001"][1]
        assert states["T002"][0] == "failed"
        assert "limits.allow_test_deletion: `tests/test_calc.py`" in states["T002"][1]
        assert states["T003"][0] == "failed"
        assert "limits.max_changed_lines: `big.py` (250 lines)" in states["T003"][1]
        pushed = git(w.remote, "log", "--format=", "--name-only", f"main..{BRANCH}").split()
        assert sorted(set(pushed)) == ["mod_t004.py", "specs/greet/tasks.md"]


def test_a_task_commit_that_breaks_a_limit_is_dropped(tmp_path: Path) -> None:
    with world(tmp_path, [], files=FILES) as w:
        seed_branch(w, "## Phase 1\n- [ ] T001 Create a\n")
        ws = clone(file_url(w.remote), tmp_path / "ws", branch=BRANCH)
        run = ImplementRun(job(), w.env())
        run.guard = ws.push_guard = PushGuard(base=ws.head_sha(), per_commit_lines=True)
        before = ws.head_sha()
        # What the worktree check saw was fine; what is committed is not (a hook, a race).
        (ws.path / ".github" / "workflows").mkdir(parents=True)
        (ws.path / ".github" / "workflows" / "late.yml").write_text("on: push\n")
        task = parse_tasks("## Phase 1\n- [ ] T001 Create a\n").tasks[0]
        outcome = run.commit_task(ws, "specs/greet/tasks.md", task, TaskOutcome(task, "done"))
        assert outcome.status == "failed"
        assert "limits.protected_paths: `.github/workflows/late.yml`" in outcome.detail
        assert ws.head_sha() == before and not ws.has_changes()


def test_each_parallel_task_shows_on_the_board_as_it_ends(tmp_path: Path) -> None:
    with world(tmp_path, [responder()] * 12, files=FILES) as w:
        seed_branch(w)
        result = implement(job(), w.env(clock=SystemClock()))
        assert result.status == JobStatus.SUCCESS, result.error
        boards = [
            str(c.json["body"])
            for c in w.gh.calls_to("*", rf"/repos/{REPO}/issues/(\d+/)?comments(/\d+)?")
            if "T002" in str((c.json or {}).get("body", ""))
        ]

        def state(body: str, tid: str) -> str:
            return next(line.split()[1] for line in body.splitlines() if f" {tid} " in line)

        # Every task's agent works in the prepared environment, as the IssueFixer's does.
        assert "The shell runs in the project's environment" in w.llm_requests_text()
        # The first [P] task to end is shown done while the other still runs.
        assert any({state(b, "T002"), state(b, "T003")} == {"✅", "🔄"} for b in boards), (
            "\n---\n".join(boards)
        )


def test_a_failing_gate_goes_back_into_the_tasks_own_conversation(tmp_path: Path) -> None:
    """As the IssueFixer's repair rounds: validation's verdict is the next message of the agent
    that wrote the task, not a cold Fixer's first (issue #26 item 7)."""
    failing_test = (
        "from mod_t001 import t001\n\n\ndef test_t001() -> None:\n    assert t001() == 2\n"
    )

    def step(request: RecordedRequest) -> ScriptedReply:
        said = json.dumps(request.json["messages"][-1]["content"])
        if len(request.json["messages"]) == 1:
            return reply(
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "mod_t001.py",
                     "file_text": "def t001() -> int:\n    return 1\n"},
                ),
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "create", "path": "tests/test_t001.py", "file_text": failing_test},
                ),
            )  # fmt: skip
        if "Validation failed after your change" in said:
            return reply(
                tool_use(
                    "str_replace_based_edit_tool",
                    {"command": "str_replace", "path": "mod_t001.py",
                     "old_str": "return 1", "new_str": "return 2"},
                )
            )  # fmt: skip
        return reply(finish(summary="T001 done"))

    with world(tmp_path, [step] * 12, files=FILES) as w:
        seed_branch(w, "## Phase 1\n- [ ] T001 Create mod_t001.py with a function\n")
        result = implement(job(), w.env())
        assert result.status == JobStatus.SUCCESS, result.error
        systems = [json.dumps(r.json.get("system", "")) for r in w.llm.requests]
        assert not any("You are the Fixer agent" in s for s in systems)
        repaired = [
            r for r in w.llm.requests
            if "Validation failed after your change" in json.dumps(r.json["messages"])
        ]  # fmt: skip
        assert repaired and all(
            "# Task T001" in json.dumps(r.json["messages"][0]) for r in repaired
        )
        # Its own earlier turns, then the gate's output: the failing assertion.
        said = json.dumps(repaired[0].json["messages"])
        assert said.index("return 1") < said.index("Validation failed after your change")
        assert "assert 1 == 2" in said
        assert "return 2" in (read_file(w.remote, BRANCH, "mod_t001.py") or "")


def test_an_unverified_gate_stops_the_task_with_its_reason(tmp_path: Path) -> None:
    """A test runner that is not installed: the task fails at once, saying why (issue #25)."""
    yaml = fast_validation_yaml().replace(
        next(ln for ln in fast_validation_yaml().splitlines() if "test:" in ln),
        "  test: no-such-test-runner -q",
    )
    with world(tmp_path, [responder()] * 4, files=FILES) as w:
        seed_branch(w, "## Phase 1\n- [ ] T001 Create mod_t001.py with a function\n")
        result = implement(job(), w.env(RepoConfig.from_text(yaml)))
        assert result.status == JobStatus.FAILED
        (item,) = result.items
        assert item["status"] == "failed"
        assert "unverified" in item["detail"] and "no-such-test-runner" in item["detail"]
        assert len(w.llm.requests) == 2  # one try: retrying cannot install the runner
        assert "no-such-test-runner" in (result.error or "")
