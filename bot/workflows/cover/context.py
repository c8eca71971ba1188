"""What a /cover run's stages share: the workspace, agents, runners, metadata and warnings."""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot import treefs
from bot.cost import BudgetTracker
from bot.cover.metadata import MetadataStore
from bot.cover.runners import PytestRunner, SuiteRunner, runner_for
from bot.errors import AgentbotError
from bot.git import Workspace
from bot.git.changes import changed_paths
from bot.models import AgentResult
from bot.outbound.paths import TEST_PATH
from bot.ports import JobEnv
from bot.roles import Role
from bot.session import Session
from bot.validation.commands import how_to_declare
from bot.validation.repo_env import ensure_coverage_py, prepare
from bot.validation.runner import missing_program
from bot.workflows.steps.agents import open_session, run_role


class TestsUnverified(AgentbotError):
    """The repository's test command cannot run here: no test /cover writes could be verified."""

    __test__ = False  # not a pytest test class


@dataclass
class CoverContext:
    """One run's shared state; the stages of several methods may use it from threads."""

    env: JobEnv
    ws: Workspace
    store: MetadataStore
    budget: BudgetTracker
    session: Session
    runners: dict[str, SuiteRunner]
    test_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def ws_path(self) -> Path:
        """The workspace root."""
        return self.ws.path

    def agent(self, role: Role, task: str) -> AgentResult:
        """Run `role` on `task` in the workspace, on the job's one budget."""
        return run_role(
            self.env, role, task, self.ws.path, budget=self.budget, session=self.session
        )

    def warn(self, text: str) -> None:
        """Note something the report must say."""
        with self.lock:
            self.warnings.append(text)
            self.env.log.warning(text)

    def changed_paths(self) -> list[str]:
        """Files that differ from HEAD: modified, added, deleted, untracked (one per path)."""
        return changed_paths(self.ws)

    def untracked(self) -> list[str]:
        """Untracked files (not ignored)."""
        out = self.ws.git("ls-files", "--others", "--exclude-standard", "-z")
        return [p for p in out.split("\0") if p]

    def tracked(self, path: str) -> bool:
        """Whether HEAD has `path`."""
        return self.ws.succeeds("cat-file", "-e", f"HEAD:{path}")

    def discard_changes(
        self, paths: Sequence[str] | None = None, *, created: Collection[str] = ()
    ) -> None:
        """Put `paths` (all tracked changes when None) back as HEAD has them; delete `created`."""
        tracked = [p for p in (paths or self.changed_paths()) if self.tracked(p)]
        if tracked:
            self.ws.git("checkout", "HEAD", "--", *tracked)
        for rel in created:
            treefs.remove(self.ws.path, rel, prune=False)

    def checkpoint(self, files: Sequence[str], name: str) -> None:
        """Commit one method's test files (squashed into the one commit at the end)."""
        if files and self.ws.git("status", "--porcelain", "--", *files).strip():
            self.ws.commit(f"wip(cover): {name}", paths=list(files))


def open_context(
    env: JobEnv,
    ws: Workspace,
    repo: str,
    branch: str,
    languages: Collection[str],
    budget: BudgetTracker,
) -> CoverContext:
    """Set the repository up, pick a test runner per language, and open the run's session."""
    cfg = env.config
    senv, test_cmd = prepare(
        ws.path, cfg.validation, data_dir=env.data_dir, clock=env.clock, sandbox=env.sandbox
    )
    if test_cmd and (tool := missing_program(test_cmd, cwd=ws.path, env=senv.env)):
        raise TestsUnverified(
            f"the test command `{test_cmd}` cannot run: "
            + how_to_declare(tool, senv.profile.name).removeprefix("unverified: ")
        )
    timeout = float(cfg.validation.timeout_seconds)
    runners: dict[str, SuiteRunner] = {}
    for lang in sorted(languages):
        made = runner_for(
            lang, ws.path, senv, test_command=test_cmd, timeout=timeout, clock=env.clock
        )
        if made is not None:
            runners[lang] = made
    ctx = CoverContext(
        env=env,
        ws=ws,
        store=MetadataStore(env.data_dir, repo),
        budget=budget,
        session=open_session(env, repo, f"cover-{branch}"),
        runners=runners,
        test_files=[p for p in ws.tracked_files() if TEST_PATH.search(p)],
    )
    for runner in runners.values():
        if isinstance(runner, PytestRunner):
            why = ensure_coverage_py(senv, runner.python, timeout=timeout, clock=env.clock)
            if why:
                ctx.warn(why)
    return ctx
