"""The agent step of a workflow: one budget per job, the session folder, the seed 004 gates.

Every workflow runs its agents through `run_role`, so what an agent gets (its model, the
job's shared budget, the repository's limits as prompt context, the session to write) is
decided here once. `unmet` and `concerns` read the hard gates of the seed 004 contract;
`commit_session` puts the session folder on the PR branch when the repository asks for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot import treefs
from bot.agent import Conversation, FinishCheck
from bot.config import RepoConfig
from bot.cost import BudgetTracker
from bot.errors import GitError
from bot.git import Workspace
from bot.instructions import DEFAULT_REF, load_instructions
from bot.models import AgentOutput, AgentResult
from bot.ports import JobEnv
from bot.report import session_commit_message
from bot.roles import Role
from bot.roles import repo_context as _role_context
from bot.roles.base import INSTRUCTIONS_KEY
from bot.session import Session
from bot.tools import Toolbox
from bot.workflows.steps.head_guard import guarded
from bot.workflows.steps.limits import AGENTS_WORK
from bot.workflows.steps.workenv import WorkEnv

log = logging.getLogger("agentbot.job")


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
        meter=env.meter,
    )


def repo_context(cfg: RepoConfig, workenv: WorkEnv | None = None) -> dict[str, str]:
    """Prompt placeholders from the repository's config (limits, the commands it set) and,
    once prepared, the agent's environment with the commands validation resolved."""
    v = cfg.validation
    commands = [c for c in (v.format, v.lint, v.typecheck, v.test) if c and c != "default"]
    if workenv is not None and workenv.commands:
        commands = list(dict.fromkeys(c for k, c in workenv.commands.items() if "<" not in c))
    return _role_context(
        protected_paths=cfg.limits.protected_paths,
        max_changed_lines=cfg.limits.max_changed_lines,
        validation_commands=commands,
        environment=workenv.describe() if workenv is not None else "",
    )


def open_session(env: JobEnv, repo: str, what: str) -> Session:
    """A new session folder for this job under the data dir."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{repo}-{what}").strip("-")
    return Session.create(env.data_dir, slug, env.clock)


def run_role(
    env: JobEnv,
    role: Role,
    task: str,
    workspace: Path,
    *,
    budget: BudgetTracker,
    session: Session,
    workenv: WorkEnv | None = None,
    finish_check: FinishCheck | None = None,
) -> AgentResult:
    """Run one agent of the job in `workspace` (its shell in `workenv` when prepared); its
    spending lands in the job's budget."""
    return role_conversation(
        env, role, task, workspace, budget=budget, session=session, workenv=workenv,
        finish_check=finish_check,
    ).start()  # fmt: skip


def role_conversation(
    env: JobEnv,
    role: Role,
    task: str,
    workspace: Path,
    *,
    budget: BudgetTracker,
    session: Session,
    workenv: WorkEnv | None = None,
    finish_check: FinishCheck | None = None,
) -> Conversation:
    """The conversation `run_role` runs, for a workflow that continues it after `finish`."""
    context = {**repo_context(env.config, workenv), **repo_instructions(env, workspace)}
    shell = workenv.shell if workenv is not None else None
    return GuardedConversation(
        role=role,
        task=task,
        workspace=workspace,
        llm=env.llm_factory(env.config.model_for(role.name.value)),
        budget=budget,
        clock=env.clock,
        session=session,
        context=context,
        toolbox=Toolbox(workspace, sandbox=env.sandbox, shell=shell, read_only=role.read_only),
        finish_check=finish_check,
    )


class GuardedConversation(Conversation):
    """A conversation whose agent cannot commit: each run's moves of HEAD are undone
    (`head_guard`), the changes left for the workflow's own commit."""

    def __init__(self, *, role: Role, workspace: Path, **kwargs: Any) -> None:
        super().__init__(role=role, workspace=workspace, **kwargs)
        self._guard = Workspace(workspace)
        self._what = f"the {role.name.value} agent"

    def start(self) -> AgentResult:
        return guarded(self._guard, self._what, super().start)

    def resume(self, text: str) -> AgentResult:
        parent = super().resume
        return guarded(self._guard, self._what, lambda: parent(text))


def repo_instructions(env: JobEnv, workspace: Path) -> dict[str, str]:
    """The repository's agent instructions from the default branch, as prompt context.

    Nested `AGENTS.md` files are chosen by the paths changed so far; the files used are
    recorded on the job for the pull request body.
    """
    ws = Workspace(workspace)
    try:
        changed = ws.changed_files(DEFAULT_REF) if ws.succeeds("rev-parse", DEFAULT_REF) else []
    except GitError:
        changed = []
    found = load_instructions(ws, changed)
    env.instructions_used.extend(p for p in found.paths if p not in env.instructions_used)
    return {INSTRUCTIONS_KEY: found.prompt()} if found.files else {}


def unmet(output: AgentOutput) -> str:
    """Why an OK answer is not done (seed 004 `meets_definition_of_done: false`), or ""."""
    if output.gates.meets_definition_of_done:
        return ""
    return f"the agent reported its definition of done unmet: {output.summary}"


def concerns(outputs: Iterable[AgentOutput | None]) -> list[str]:
    """Every security concern the agents raised (seed 004 `gates.security_concerns`), once."""
    seen: dict[str, None] = {}
    for output in outputs:
        for concern in output.gates.security_concerns if output is not None else []:
            if concern.strip():
                seen[concern.strip()] = None
    return list(seen)


def wants_review(outputs: Iterable[AgentOutput | None]) -> bool:
    """True when an agent asked for a human review (seed 004 `gates.needs_review`)."""
    return any(output is not None and output.gates.needs_review for output in outputs)


def commit_session(ws: Workspace, session: Session) -> None:
    """Commit the session folder as `.agents-work/<session>/` (seed 004) on the current branch.

    The artifacts are a record, not part of the change: a failure to commit them (the
    folder is git-ignored, say) is logged and the job goes on.
    """
    target = f"{AGENTS_WORK}{session.name}"
    # Never through a link the agent planted (`.agents-work` -> another workspace).
    for source in sorted(session.path.rglob("*")):
        if source.is_file() and not source.is_symlink():
            rel = f"{target}/{source.relative_to(session.path).as_posix()}"
            treefs.write_bytes(ws.path, rel, source.read_bytes())
    try:
        ws.commit(session_commit_message(session.name), paths=[target])
    except GitError as exc:
        log.warning("session artifacts not committed: %s", exc)
