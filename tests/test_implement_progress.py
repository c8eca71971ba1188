"""The Implementer's progress comment: one per tasks file, edited in place, others left alone."""

from __future__ import annotations

from bot.clock import FakeClock
from bot.report import PROGRESS_MARKER
from bot.tasks_md import parse_tasks
from bot.workflows.steps.progress import TaskBoard
from tests.fakes.github import FakeGitHub

REPO = "octo/calc"
PLAN = parse_tasks("## Phase 1\n- [ ] T001 [P] Make a\n- [ ] T002 [P] Make b\n- [ ] T003 Join\n")


def test_the_board_is_one_comment_per_tasks_file_and_leaves_other_commands_alone() -> None:
    clock = FakeClock()
    with FakeGitHub(clock=clock) as gh:
        gh.add_repo(REPO)
        pr = gh.add_pull(REPO, head="feature", user="alice")
        cover = gh.add_comment(
            REPO,
            pr.number,
            f"{PROGRESS_MARKER}\n### agentbot /cover\n\n- ✅ x\n",
            user="agentbot[bot]",
        )
        client = gh.client(clock=clock)

        def board() -> TaskBoard:
            existing = client.list_issue_comments(REPO, pr.number)
            return TaskBoard.open(
                client,
                REPO,
                pr.number,
                tasks_path="specs/1/tasks.md",
                tasks=PLAN.tasks,
                existing=existing,
            )

        first = board()
        assert gh.calls_to("POST", rf"/repos/{REPO}/issues/{pr.number}/comments") == []  # not yet
        first.batch(1, 2, ["T001", "T002"], 0.01)
        first.settle(
            {"T001": ("done", ""), "T002": ("failed", "conflict in a.py\nwith T001")}, 0.02
        )
        first.finish("1 tasks done, 1 failed, 0 skipped.")
        assert len(gh.calls_to("POST", rf"/repos/{REPO}/issues/{pr.number}/comments")) == 1
        assert len(gh.calls_to("PATCH", rf"/repos/{REPO}/issues/comments/\d+")) == 2

        comments = {c.id: c.body for c in gh.comments_on(REPO, pr.number)}
        assert comments[cover.id] == cover.body
        ours = next(b for i, b in comments.items() if i != cover.id)
        assert ours.startswith(f"{PROGRESS_MARKER}\n### agentbot /implement specs/1/tasks.md\n")
        assert "- ✅ T001 Make a" in ours
        assert "- ❌ T002 Make b — conflict in a.py with T001" in ours
        assert "- ⏭️ T003 Join" in ours  # never ran
        assert ours.rstrip().endswith("1 tasks done, 1 failed, 0 skipped.")

        again = board()  # a re-run takes the same comment over
        again.batch(1, 1, ["T003"], 0.0)
        assert len(gh.comments_on(REPO, pr.number)) == 2
        assert (
            "🔄 T003 Join"
            in {c.id: c.body for c in gh.comments_on(REPO, pr.number)}[
                again.progress.comment_id or 0
            ]
        )
