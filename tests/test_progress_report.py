"""The sticky report comment: a stopped run never shows 🔄, a failed one can put the last back."""

from __future__ import annotations

from bot.clock import FakeClock
from bot.report import Step
from bot.workflows.steps.progress import Progress
from tests.fakes.github import FakeGitHub

REPO = "octo/calc"


def test_a_stopped_run_marks_its_running_step_failed_and_a_failure_can_restore() -> None:
    clock = FakeClock()
    with FakeGitHub(clock=clock) as gh:
        gh.add_repo(REPO)
        pr = gh.add_pull(REPO, head="feature", user="alice")
        client = gh.client(clock=clock)

        def progress() -> Progress:
            p = Progress(client, REPO, pr.number, "agentbot /cover", [Step("Discover", "running")])
            p.start(client.list_issue_comments(REPO, pr.number))
            return p

        first = progress()
        assert first.restore() is False  # nothing to put back on a first run
        first.finish("good report")
        good = gh.comments_on(REPO, pr.number)[-1].body
        assert "🔄" not in good and "❌ Discover — stopped" in good

        second = progress()
        assert second.comment_id == first.comment_id and second.previous == good
        assert "good report" not in gh.comments_on(REPO, pr.number)[-1].body  # in progress
        assert second.restore() is True
        assert [c.body for c in gh.comments_on(REPO, pr.number)] == [good]
