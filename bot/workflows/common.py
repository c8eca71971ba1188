"""Pieces every workflow shares: the sticky progress comment, workspaces, limits, commit types."""

from __future__ import annotations

import fnmatch
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.config import Limits, RepoConfig
from bot.cost import BudgetTracker
from bot.git import Workspace, clone
from bot.ports import JobEnv
from bot.report import PROGRESS_MARKER, Step, StepState, progress_comment
from bot.roles import repo_context as _role_context

TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|\.(test|spec)\.[jt]sx?$|_spec\.rb$"
)


@dataclass
class Progress:
    """A job's one progress comment: created once, edited as steps finish, reused on re-runs."""

    env: JobEnv
    repo: str
    number: int
    title: str
    steps: list[Step]
    comment_id: int | None = None
    footer: str = ""

    def start(self, existing_comments: Sequence[tuple[int, str, str]], bot_login: str = "") -> None:
        """Reuse our earlier progress comment (a re-run) or create a new one.

        Only a bot's comment is reused (or `bot_login`'s): anyone can post the marker, and
        the bot must never write its progress into a comment someone else owns.
        """
        for cid, body, user in existing_comments:
            mine = user.endswith("[bot]") or (bot_login and user == bot_login)
            if body.startswith(PROGRESS_MARKER) and mine:
                self.comment_id = cid
        self._publish()

    def set(self, title: str, state: StepState, detail: str = "", *, publish: bool = True) -> None:
        """Change one step's state; publish now, or with the next change (fewer API writes)."""
        self.steps = [
            replace(s, state=state, detail=detail) if s.title == title else s for s in self.steps
        ]
        if publish:
            self._publish()

    def finish(self, footer: str) -> None:
        """Write the final state: remaining pending steps are marked skipped."""
        self.steps = [
            replace(s, state="skipped") if s.state == "pending" else s for s in self.steps
        ]
        self.footer = footer
        self._publish()

    def _publish(self) -> None:
        body = progress_comment(self.title, self.steps, footer=self.footer)
        if self.env.dry_run:
            return
        gh = self.env.github
        if self.comment_id is None:
            self.comment_id = gh.create_comment(self.repo, self.number, body).id
        else:
            gh.update_comment(self.repo, self.comment_id, body)


def open_workspace(env: JobEnv, repo: str, name: str) -> Workspace:
    """The checkout to work in: the Action's own, or a fresh clone under the data dir."""
    if env.checkout is not None:
        return Workspace(env.checkout, token=None if env.dry_run else env.github.token())
    dest = env.data_dir / "workspaces" / f"{repo.replace('/', '__')}-{name}"
    if dest.exists():
        # A stale workspace from an earlier attempt: start clean so re-runs are idempotent.
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = f"{env.server_url.rstrip('/')}/{repo}.git"
    return clone(url, dest, token=env.github.token())


def commit_type(labels: Sequence[str]) -> str:
    """Conventional commit type from the issue's labels."""
    names = {label.lower() for label in labels}
    if "bug" in names:
        return "fix"
    if names & {"enhancement", "feature"}:
        return "feat"
    if names & {"docs", "documentation"}:
        return "docs"
    return "fix"


def commit_scope(files: Sequence[str]) -> str:
    """A scope when every non-test file shares one top-level folder, else none."""
    tops = {f.split("/", 1)[0] for f in files if "/" in f and not TEST_PATH.search(f)}
    loose = [f for f in files if "/" not in f and not TEST_PATH.search(f)]
    return tops.pop() if len(tops) == 1 and not loose else ""


def subject_line(text: str, limit: int = 72) -> str:
    """First line of `text`, trimmed to `limit` characters for a commit subject."""
    line = text.strip().splitlines()[0] if text.strip() else "update"
    line = line.rstrip(".")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def limit_violations(ws: Workspace, base: str, limits: Limits) -> list[str]:
    """Why the change may not be proposed: too large, protected paths, deleted tests."""
    problems: list[str] = []
    changes = ws.numstat(base)
    total = sum(c.added + c.deleted for c in changes)
    if total > limits.max_changed_lines:
        problems.append(
            f"the change touches {total} lines, over the limit of {limits.max_changed_lines}"
            " (limits.max_changed_lines)"
        )
    for c in changes:
        for pattern in limits.protected_paths:
            if _glob_match(c.path, pattern):
                problems.append(f"`{c.path}` is a protected path ({pattern})")
                break
    if not limits.allow_test_deletion:
        for path in ws.deleted_files(base):
            if TEST_PATH.search(path):
                problems.append(f"the change deletes the test file `{path}`")
    return problems


def _glob_match(path: str, pattern: str) -> bool:
    """`**` matches any depth, `*` within one segment."""
    regex = (
        re.escape(pattern)
        .replace(r"\*\*/", "(.*/)?")
        .replace(r"\*\*", ".*")
        .replace(r"\*", "[^/]*")
    )
    return re.fullmatch(regex, path) is not None or fnmatch.fnmatch(path, pattern)


def session_slug(repo: str, what: str) -> str:
    """A filesystem-safe slug for a session folder."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{repo}-{what}").strip("-")


def repo_context(cfg: RepoConfig) -> dict[str, str]:
    """Prompt placeholders from the repository's config: limits and the commands it set."""
    v = cfg.validation
    commands = [c for c in (v.format, v.lint, v.typecheck, v.test) if c and c != "default"]
    return _role_context(
        protected_paths=cfg.limits.protected_paths,
        max_changed_lines=cfg.limits.max_changed_lines,
        validation_commands=commands,
    )


def job_budget(env: JobEnv, role: str) -> BudgetTracker:
    """The one budget every agent of a job spends from (turns, USD, minutes of the config)."""
    cfg = env.config
    return BudgetTracker(
        model=cfg.model_for(role),
        max_turns=cfg.budget.max_turns,
        max_usd=cfg.budget.max_usd_per_job,
        max_minutes=cfg.budget.max_minutes,
        clock=env.clock,
        prices=cfg.prices,
    )
