"""The Implementer on a real-shaped Spec Kit repository: a flat Python layout, a feature
directory with its design documents, adjacent `[P]` tasks, and a re-run that does nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.clock import SystemClock
from bot.models import Job, JobKind, JobStatus
from bot.workflows.implement.story import implement
from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.anthropic import RecordedRequest, ScriptedReply, finish, reply, tool_use
from tests.fakes.gitrepo import commits, git, push_files, read_file
from tests.test_cli_jobs import cli_env
from tests.test_cli_jobs import run as agentbot

pytestmark = pytest.mark.slow

BRANCH = "001-greeter"
FEATURE = "specs/001-greeter"
TASKS_PATH = f"{FEATURE}/tasks.md"

BASE = {
    # A flat layout: the package sits at the root next to specs/ (setuptools would refuse it).
    "pyproject.toml": '[project]\nname = "greeter"\nversion = "0.1.0"\n',
    "README.md": "# greeter\n",
    "tests/__init__.py": "",
    "tests/test_smoke.py": "def test_smoke() -> None:\n    assert True\n",
}

PLAN = """# Implementation Plan: Greeter

**Language/Version**: Python 3.11, standard library only (PLAN-MARKER-tech-stack)

## Project Structure
greeter/ holds one module per greeting; tests/ mirrors it.
"""
SPEC = "# Feature Specification: Greeter\n\nUsers are greeted by name (SPEC-MARKER).\n"
DATA_MODEL = (
    "# Data Model\n\n## Greeting\n- name: str, never empty (DATA-MODEL-MARKER)\n"
    "- text: str, `Hello, <name>!` or `Bye, <name>!`\n"
)

TASKS = """# Tasks: Greeter

**Input**: Design documents from `/specs/001-greeter/`

## Phase 1: Setup

- [ ] T001 Create the greeter package in greeter/__init__.py

## Phase 2: User Story 1 - Greet people (Priority: P1)

- [ ] T002 [P] [US1] Implement hello(name) in greeter/hello.py
- [ ] T003 [P] [US1] Implement bye(name) in greeter/bye.py
- [ ] T004 [US1] Export hello and bye from greeter/api.py (depends on T002, T003)

**Checkpoint**: User Story 1 works on its own

## Phase 3: Polish

- [ ] T005 Add a shout(name) helper in greeter/shout.py
"""


def _module(task: str) -> tuple[str, str, str]:
    """(module path, source, test source) the scripted agent writes for `task`."""
    sources = {
        "T001": (
            "greeter/__init__.py",
            '"""Greeter."""\n',
            "import greeter\n\n\ndef test_t001() -> None:\n    assert greeter.__doc__\n",
        ),
        "T002": (
            "greeter/hello.py",
            'def hello(name: str) -> str:\n    return f"Hello, {name}!"\n',
            "from greeter.hello import hello\n\n\n"
            'def test_t002() -> None:\n    assert hello("Ann") == "Hello, Ann!"\n',
        ),
        "T003": (
            "greeter/bye.py",
            'def bye(name: str) -> str:\n    return f"Bye, {name}!"\n',
            "from greeter.bye import bye\n\n\n"
            'def test_t003() -> None:\n    assert bye("Ann") == "Bye, Ann!"\n',
        ),
        "T004": (
            "greeter/api.py",
            "from greeter.bye import bye\nfrom greeter.hello import hello\n\n"
            '__all__ = ["bye", "hello"]\n',
            "from greeter.api import bye, hello\n\n\n"
            'def test_t004() -> None:\n    assert hello("a") and bye("b")\n',
        ),
        "T005": (
            "greeter/shout.py",
            "from greeter.hello import hello\n\n\n"
            "def shout(name: str) -> str:\n    return hello(name).upper()\n",
            "from greeter.shout import shout\n\n\n"
            'def test_t005() -> None:\n    assert shout("ann") == "HELLO, ANN!"\n',
        ),
    }
    return sources[task]


def task_of(request: RecordedRequest) -> str:
    """The task id of the task message (the first user message) of a request."""
    first = json.dumps(request.json["messages"][0]["content"])
    found = re.search(r"# Task (T\d{3})", first)
    assert found, first[:300]
    return found.group(1)


def edit(command: str, path: str, **fields: Any) -> dict[str, Any]:
    """A call of the edit tool."""
    return tool_use("str_replace_based_edit_tool", {"command": command, "path": path, **fields})


def greeter_agent(request: RecordedRequest) -> ScriptedReply:
    """Write the task's module and test; like real agents, [P] tasks also tick their own box."""
    task = task_of(request)
    turn = len(request.json["messages"])
    path, src, test = _module(task)
    if turn == 1:
        return reply(edit("create", path, file_text=src))
    if turn == 3:
        return reply(edit("create", f"tests/test_{task.lower()}.py", file_text=test))
    if turn == 5 and task in ("T002", "T003"):
        box = f"- [ ] {task}"
        return reply(edit("str_replace", TASKS_PATH, old_str=box, new_str=f"- [x] {task}"))
    return reply(finish(summary=f"{task} done"))


def seed(w: World, extra: dict[str, str] | None = None) -> None:
    files = {
        f"{FEATURE}/plan.md": PLAN,
        f"{FEATURE}/spec.md": SPEC,
        f"{FEATURE}/data-model.md": DATA_MODEL,
        TASKS_PATH: TASKS,
        **(extra or {}),
    }
    push_files(w.remote, BRANCH, files, start="main")


def job() -> Job:
    return Job(kind=JobKind.IMPLEMENT, repo=REPO, ref=BRANCH, actor="alice")


def ticks(w: World, sha: str) -> list[str]:
    diff = git(w.remote, "show", "--format=", sha, "--", TASKS_PATH)
    return re.findall(r"^\+- \[x\] (T\d{3})", diff, flags=re.M)


def scripted(step: Callable[[RecordedRequest], ScriptedReply], n: int) -> list[Any]:
    return [step] * n


def test_greeter_adjacent_parallel_tasks_merge_and_a_rerun_does_nothing(tmp_path: Path) -> None:
    with world(tmp_path, scripted(greeter_agent, 40), files=BASE) as w:
        seed(w)
        result = implement_job(w)
        assert result.status == JobStatus.SUCCESS, result.error

        history = list(reversed(commits(w.remote, BRANCH, base="main")))[1:]  # drop the seed
        order = [re.match(r"feat\((T\d{3})\)", c.subject).group(1) for c in history]  # type: ignore[union-attr]
        assert sorted(order) == ["T001", "T002", "T003", "T004", "T005"]
        assert order[0] == "T001" and order[-1] == "T005"
        assert order.index("T004") > max(order.index("T002"), order.index("T003"))
        for c, tid in zip(history, order, strict=True):
            assert ticks(w, c.sha) == [tid], c.subject
        final = read_file(w.remote, BRANCH, TASKS_PATH) or ""
        assert final == TASKS.replace("- [ ] T", "- [x] T")
        for request in w.llm.requests:  # every task's every request carries the design
            raw = request.body.decode("utf-8")
            assert "PLAN-MARKER-tech-stack" in raw and "DATA-MODEL-MARKER" in raw

        # The PR branch, cloned afresh, passes its own tests.
        clone = tmp_path / "fresh"
        git(tmp_path, "clone", "--quiet", "--branch", BRANCH, w.remote.as_uri(), str(clone))
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=clone,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert "6 passed" in run.stdout

        # A re-run finds every box ticked: no agent, no commit, no pull request change.
        requests, head = len(w.llm.requests), git(w.remote, "rev-parse", BRANCH).strip()
        pr_calls = len(w.gh.calls_to("PATCH", rf"/repos/{REPO}/pulls/\d+"))
        again = implement_job(w)
        assert again.status == JobStatus.NEUTRAL, again.summary
        assert len(w.llm.requests) == requests
        assert git(w.remote, "rev-parse", BRANCH).strip() == head
        assert len(w.gh.calls_to("PATCH", rf"/repos/{REPO}/pulls/\d+")) == pr_calls


def implement_job(w: World, j: Job | None = None) -> Any:
    return implement(j or job(), w.env(clock=SystemClock()))


def one_task_agent(request: RecordedRequest) -> ScriptedReply:
    """T001 only: create the package, then finish."""
    if len(request.json["messages"]) == 1:
        path, src, _ = _module("T001")
        return reply(edit("create", path, file_text=src))
    return reply(finish(summary="T001 done"))


def test_every_task_request_carries_the_feature_design_documents(tmp_path: Path) -> None:
    research = "# Research\n\nRESEARCH-HEAD\n" + "decision: keep it simple.\n" * 8000
    assert len(research.encode()) > 200_000
    contracts = {
        f"{FEATURE}/contracts/cli.md": "# CLI contract\n\n`greet NAME` (CONTRACT-MARKER)\n"
    }
    one = TASKS.split("## Phase 2")[0]
    with world(tmp_path, scripted(one_task_agent, 4), files=BASE) as w:
        seed(
            w,
            {
                TASKS_PATH: one,
                f"{FEATURE}/research.md": research,
                **contracts,
                "specs/002-other/plan.md": "OTHER-FEATURE-MARKER\n",
            },
        )
        result = implement_job(w)
        assert result.status == JobStatus.SUCCESS, result.error
        raw = w.llm.requests[0].body.decode("utf-8")
        for marker in (
            "PLAN-MARKER-tech-stack",
            "SPEC-MARKER",
            "DATA-MODEL-MARKER",
            "CONTRACT-MARKER",
            "RESEARCH-HEAD",
        ):
            assert marker in raw, marker
        assert "OTHER-FEATURE-MARKER" not in raw
        assert f"{FEATURE}/data-model.md" in raw
        # The long file is cut, and the cut is said.
        first = w.llm.requests[0].json["messages"][0]["content"]
        text = first if isinstance(first, str) else json.dumps(first)
        assert text.count("decision: keep it simple.") < 2000
        assert re.search(r"research\.md is \d[\d,]* characters long; only the first", text)
        assert len(raw) < 150_000


def pr_job(number: int, selection: str = "") -> Job:
    params = {"trigger": "comment", "selection": selection} if selection else {}
    return Job(kind=JobKind.IMPLEMENT, repo=REPO, number=number, actor="alice", params=params)


def test_phase_selection_runs_only_that_phase_with_one_progress_comment(tmp_path: Path) -> None:
    with world(tmp_path, scripted(greeter_agent, 40), files=BASE) as w:
        seed(w)
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        result = implement_job(w, pr_job(pr.number, "phase 2"))
        assert result.status == JobStatus.SUCCESS, result.error
        assert sorted(i["id"] for i in result.items) == ["T002", "T003", "T004"]
        subjects = [c.subject for c in commits(w.remote, BRANCH, base="main")]
        assert sorted(s[:10] for s in subjects if s.startswith("feat(")) == [
            "feat(T002)",
            "feat(T003)",
            "feat(T004)",
        ]
        final = read_file(w.remote, BRANCH, TASKS_PATH) or ""
        assert "- [ ] T001" in final and "- [ ] T005" in final
        assert final.count("- [x]") == 3
        assert {r for r in map(task_of, w.llm.requests)} == {"T002", "T003", "T004"}

        # One progress comment, created once and edited in place: batch by batch, then final.
        created = w.gh.calls_to("POST", rf"/repos/{REPO}/issues/{pr.number}/comments")
        updated = w.gh.calls_to("PATCH", rf"/repos/{REPO}/issues/comments/\d+")
        assert len(created) == 1
        # 2 batches x (running, settled) + the final - the create, + one per [P] task as it ends
        assert len(updated) == 6
        bodies = [c.json["body"] for c in created + updated]
        first, second, third = bodies[0], bodies[3], bodies[4]
        ended = bodies[1]  # the first [P] task to end, while the other still runs
        assert {"✅ T002" in ended, "✅ T003" in ended} == {True, False}
        assert ("🔄 T002" in ended) != ("🔄 T003" in ended)
        assert "🔄 T002" in first and "🔄 T003" in first and "Batch 1/2 running" in first
        assert "cost so far $" in first and "⏳ T004" in first
        assert "✅ T002" in second and "⏳ T004" in second
        assert "🔄 T004" in third and "Batch 2/2 running" in third
        comments = w.gh.comments_on(REPO, pr.number)
        assert len(comments) == 1
        last = comments[0].body
        assert last == bodies[-1]
        assert "✅ T002" in last and "✅ T003" in last and "✅ T004" in last
        assert "T001" not in last and "3 tasks done, 0 failed, 0 skipped" in last
        assert "Cost $" in last

        # A second run on the same PR edits the same comment.
        again = implement_job(w, pr_job(pr.number, "T005"))
        assert again.status == JobStatus.SUCCESS, again.error
        assert len(w.gh.calls_to("POST", rf"/repos/{REPO}/issues/{pr.number}/comments")) == 1
        assert "✅ T005" in w.gh.comments_on(REPO, pr.number)[0].body


DEPS = """## Phase 1: Setup
- [ ] T001 Create the greeter package in greeter/__init__.py
- [ ] T002 Implement hello(name) in greeter/hello.py
- [ ] T003 Implement bye(name) in greeter/bye.py (depends on T002)
"""


def test_a_selected_task_whose_dependency_is_not_done_stops_with_the_reason(
    tmp_path: Path,
) -> None:
    with world(tmp_path, [], files=BASE) as w:
        seed(w, {TASKS_PATH: DEPS})
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        head = git(w.remote, "rev-parse", BRANCH).strip()
        result = implement_job(w, pr_job(pr.number, "T003"))
        assert result.status == JobStatus.FAILED
        assert [(i["id"], i["status"]) for i in result.items] == [("T003", "skipped")]
        assert "T003: depends on T002, not done" in (result.error or "")
        assert w.llm.requests == []
        assert git(w.remote, "rev-parse", BRANCH).strip() == head
        board = w.gh.comments_on(REPO, pr.number)[0].body
        assert "⏭️ T003" in board and "depends on T002, not done" in board


def test_a_bad_selection_is_answered_in_a_comment(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE) as w:
        seed(w)
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        result = implement_job(w, pr_job(pr.number, "phase 9"))
        assert result.status == JobStatus.NEUTRAL
        comments = w.gh.comments_on(REPO, pr.number)
        assert len(comments) == 1
        assert "cannot select `phase 9`: not in this tasks.md: phase 9" in comments[0].body
        assert w.llm.requests == []


@pytest.mark.parametrize("selection", ["phase \u00b2", "T" + "9" * 5000 + "-T999"])
def test_a_strange_selection_is_answered_not_an_internal_error(
    tmp_path: Path, selection: str
) -> None:
    with world(tmp_path, [], files=BASE) as w:
        seed(w)
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        result = implement_job(w, pr_job(pr.number, selection))
        assert result.status == JobStatus.NEUTRAL, result.error
        [comment] = w.gh.comments_on(REPO, pr.number)
        assert "cannot read" in comment.body and "internal error" not in comment.body
        assert len(comment.body) < 2000
        assert w.llm.requests == []


def test_a_parallel_task_breaking_a_limit_fails_alone(tmp_path: Path) -> None:
    tasks = "## Phase 1\n- [ ] T001 [P] Edit the CI workflow\n- [ ] T002 [P] Add greeter/hello.py\n"

    def step(request: RecordedRequest) -> ScriptedReply:
        task = task_of(request)
        if len(request.json["messages"]) > 1:
            return reply(finish(summary=f"{task} done"))
        if task == "T001":
            return reply(edit("create", ".github/workflows/ci.yml", file_text="on: push\n"))
        path, src, _ = _module("T002")
        return reply(edit("create", path, file_text=src))

    with world(tmp_path, scripted(step, 12), files=BASE) as w:
        seed(w, {TASKS_PATH: tasks})
        result = implement_job(w)
        states = {i["id"]: (i["status"], i["detail"]) for i in result.items}
        assert states["T002"][0] == "done"
        assert states["T001"][0] == "failed"
        assert "limits.protected_paths: `.github/workflows/ci.yml`" in states["T001"][1]
        pushed = git(w.remote, "log", "--format=", "--name-only", f"main..{BRANCH}").split()
        assert ".github/workflows/ci.yml" not in pushed and "greeter/hello.py" in pushed


def test_a_dry_run_records_the_pr_and_writes_nothing(tmp_path: Path) -> None:
    with world(tmp_path, scripted(greeter_agent, 40), files=BASE) as w:
        seed(w, {TASKS_PATH: DEPS})
        head = git(w.remote, "rev-parse", BRANCH).strip()
        result = implement(job(), w.env(dry_run=True, clock=SystemClock()))
        assert result.status == JobStatus.SUCCESS, result.error
        assert w.gh.writes() == []
        assert git(w.remote, "rev-parse", BRANCH).strip() == head
        assert any("open PR 001-greeter" in line for line in w.echoed), w.echoed


def test_the_cli_takes_the_same_selection(tmp_path: Path) -> None:
    config = {".github/agentbot.yml": fast_validation_yaml()}
    with world(
        tmp_path,
        scripted(greeter_agent, 20),
        files={**BASE, **config},
        repo_yaml=config[".github/agentbot.yml"],
    ) as w:
        seed(w)
        checkout = tmp_path / "checkout"
        git(tmp_path, "clone", "--quiet", "--branch", BRANCH, w.remote.as_uri(), str(checkout))
        env = cli_env(tmp_path, w.gh.url, w.llm.base_url)
        proc = agentbot(["implement", TASKS_PATH, "T001", "--dry-run", "--json"], env, checkout)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        printed = json.loads(proc.stdout[proc.stdout.index("\n{") :])  # after the dry-run lines
        assert [i["id"] for i in printed["items"]] == ["T001"]
        assert {task_of(r) for r in w.llm.requests} == {"T001"}
        assert w.gh.writes() == []


def test_implement_on_a_pr_with_nothing_left_says_so_once(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE) as w:
        seed(w, {TASKS_PATH: TASKS.replace("- [ ] T001", "- [x] T001")})
        pr = w.gh.add_pull(REPO, head=BRANCH, user="alice")
        result = implement_job(w, pr_job(pr.number, "phase 1"))
        assert result.status == JobStatus.NEUTRAL
        comments = w.gh.comments_on(REPO, pr.number)
        assert [c.body for c in comments] == [
            f"agentbot: nothing to do: every selected task in `{TASKS_PATH}` is ticked."
        ]
        assert w.gh.calls_to("PATCH", rf"/repos/{REPO}/pulls/\d+") == []
