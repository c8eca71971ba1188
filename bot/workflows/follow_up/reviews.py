"""Which review feedback a follow-up answers: open threads as people who may ask see them,
and whether a review's body is a request (DESIGN §13). Reads only."""

from __future__ import annotations

from bot.followup.markers import is_ours
from bot.followup.threads import Thread, is_bot_login, is_reply, open_threads, threads_of
from bot.guards import check_permission
from bot.models.github import PullRequest, ReviewComment
from bot.workflows.steps.flow import Flow


class ReviewReading(Flow):
    """The follow-up's reads of its pull request's reviews (the story sets the fields)."""

    repo: str
    number: int
    pr: PullRequest
    thread_ids: dict[int, str]
    permitted: dict[str, bool]
    review_has_comments: bool

    def pending(self) -> tuple[list[Thread], str] | str:
        """(the threads to answer, the review body to carry out), or why there is nothing."""
        self.pr = self.gh.get_pull(self.repo, self.number)
        # A fork's pull request, when someone with the permission asked (never for CI).
        fork = self.pr.from_fork(self.repo) and self.job.params.get("trigger") != "ci"
        if not (is_ours(self.pr, self.repo, self.cfg) or fork) or self.pr.state != "open":
            return f"#{self.number} is not an open pull request of agentbot's"
        threads: list[Thread] = []
        asked = str(self.job.params.get("review_body") or "")
        if self.job.params.get("trigger") in ("review", "review_comment"):
            threads = self.threads_to_answer()
            # A review with inline comments of its own only introduces them in its body ("see
            # the comments"): a redelivery after they were answered has nothing to carry out.
            if not threads and asked and (self.review_has_comments or self.review_answered()):
                asked = ""
            if not threads and not asked:
                return "every review thread is answered"
        return threads, asked

    def threads_to_answer(self) -> list[Thread]:
        """Open threads as people who may ask for work see them: a thread is started by one
        (read-only users' are not), only their replies are kept (read-only users' and hidden
        comments are dropped) and only theirs re-open a thread agentbot answered; a thread
        someone resolved is closed (without GraphQL, none counts as resolved or hidden)."""
        comments = self.gh.list_review_comments(self.repo, self.number)
        review = self.job.params.get("review_id")
        self.review_has_comments = review is not None and any(
            c.review_id == review for c in comments
        )
        if not open_threads(comments, self.mine):
            return []
        known = self.gh.review_threads(self.repo, self.number) or {}
        self.thread_ids = {root: t.id for root, t in known.items()}
        hidden = {c for t in known.values() for c in t.minimized}
        closed = hidden | {root for root, t in known.items() if t.resolved}
        threads = []
        fork_ask = self.cfg.commands.fix.casefold() if self.pr.from_fork(self.repo) else ""
        for thread in threads_of(comments):
            if thread.root.id in closed:
                continue
            if fork_ask and not thread.root.body.lstrip().casefold().startswith(fork_ask):
                continue  # on a fork, a thread is for the contributor unless it asks agentbot
            heard = tuple(c for c in thread.comments if c.id not in hidden and self.heard(c))
            if heard and heard[0] is thread.root and not Thread(heard).answered(self.mine):
                threads.append(Thread(heard))
        return threads

    def mine(self, login: str) -> bool:
        """True for agentbot's account, or the pull request's author (the token that opened
        it: a person's token in the Action, whose replies must close threads too; whoever
        opens a pull request from a branch of this repository can write to it anyway)."""
        author = self.pr.user.strip().casefold()
        # A fork's author is a contributor, not the token that opened the pull request.
        if author and login.strip().casefold() == author and not self.pr.from_fork(self.repo):
            return True
        return is_bot_login(login, self.env.bot_login)

    def heard(self, comment: ReviewComment) -> bool:
        """Agentbot's own reply, or a comment by someone who may ask for work (asked once
        per login)."""
        if is_reply(comment, self.mine):
            return True
        login = comment.user
        if login not in self.permitted:
            refusal = check_permission(self.gh, self.repo, login, self.cfg, what="a follow-up")
            self.permitted[login] = bool(login) and refusal is None
        return self.permitted[login]

    def review_marker(self) -> str:
        """Marks the comment that answered this review's body (so it is answered once)."""
        return f"<!-- agentbot:review {self.job.params.get('review_id', '')} -->"

    def review_answered(self) -> bool:
        """True when a comment of ours (by its author: anyone can type the marker) already
        answered this review's body."""
        comments = self.gh.list_issue_comments(self.repo, self.number)
        return any(self.mine(c.user) and self.review_marker() in c.body for c in comments)
