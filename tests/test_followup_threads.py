"""The pure parts of a follow-up: threads, replies, the PR body's section, the task text."""

from __future__ import annotations

from bot.followup.markers import ci_marker
from bot.followup.tasks import MAX_DIFF_CHARS, thread_task
from bot.followup.threads import (
    REPLY_MARKER,
    SUMMARY_MARKER,
    Outcome,
    open_threads,
    reply_text,
    threads_of,
    with_summary,
)
from bot.models.github import PullRequest, ReviewComment


def rc(id: int, body: str, user: str = "rev", reply_to: int | None = None) -> ReviewComment:
    return ReviewComment(id=id, body=body, user=user, path="a.py", line=3, in_reply_to=reply_to)


def test_threads_group_replies_and_know_who_spoke_last() -> None:
    comments = [
        rc(5, "reply", reply_to=1),
        rc(1, "first"),
        rc(2, "second"),
        rc(6, f"{REPLY_MARKER}\nDone", user="bot", reply_to=2),
    ]
    threads = threads_of(comments)
    assert [[c.id for c in t.comments] for t in threads] == [[1, 5], [2, 6]]
    assert [t.root.id for t in open_threads(comments)] == [1]


def test_replies_name_the_commit_and_the_gate_or_why_not() -> None:
    done = reply_text(Outcome("t", commit="a" * 40, gate="passed"), resolved=True)
    assert done.startswith(REPLY_MARKER) and f"Addressed in {'a' * 40}" in done
    assert "not resolved" not in done
    assert "not resolved automatically" in reply_text(
        Outcome("t", commit="a" * 40, gate="passed"), resolved=False
    )
    assert "No commit" in reply_text(Outcome("t", note="I disagree: x is used by y"))


def test_the_summary_section_is_replaced_keeping_rows_and_the_ci_marker() -> None:
    body = "Fixes #7.\n\n" + with_summary("", [Outcome("first", commit="c1", gate="passed")])
    body += "\n" + ci_marker(1, ["s1"])
    again = with_summary(body, [Outcome("second", gate="failed at lint", note="a | b")])
    assert again.startswith("Fixes #7.")
    assert again.count(SUMMARY_MARKER) == 1 and again.count("### Follow-ups") == 1
    assert (
        "| first | c1 | passed |" in again and "| second | — | failed at lint | a \\| b |" in again
    )
    assert again.index("| first |") < again.index("| second |")
    assert ci_marker(1, ["s1"]) in again


def test_the_task_fences_what_people_wrote_and_cuts_a_long_diff() -> None:
    pr = PullRequest(number=1, title="fix: x", body="<!-- steer -->Fixes #7", head_ref="agentbot/x")
    (thread,) = threads_of([rc(1, "please rename")])
    task = thread_task("o/r", pr, "d" * (MAX_DIFF_CHARS * 2), "b" * 40, thread)
    assert task.count("<untrusted-data") == 3  # the PR, the diff, the one comment (no hunk)
    assert "steer" not in task and "please rename" in task
    assert "characters cut" in task and len(task) < MAX_DIFF_CHARS + 5000


def test_the_ci_marker_is_replaced_whatever_its_spacing_of_shas() -> None:
    from bot.followup.markers import ci_attempts, with_ci_marker

    body = "Fixes #7.\n<!-- agentbot:ci-fix attempts=1 shas=aa, -->\nmore"
    again = with_ci_marker(body, 2, ["aa", "bb"])
    assert ci_attempts(again) == (2, ["aa", "bb"]) and again.count("agentbot:ci-fix") == 1
    assert again.endswith("more")
    assert ci_attempts(with_ci_marker("", 1, ["cc"])) == (1, ["cc"])
