"""The runner's side of an approved plan (issue #28): its budget, and the files beyond it.

A job started by `/approve` carries the plan in `job.params["plan"]`. `PlanGuard.of` reads
it back (None for any other job, so the IssueFixer is unchanged without a plan); `beyond`
names the changed files the plan does not list, new test files excepted, judged on the
workspace against the base the job started from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.config import RepoConfig
from bot.cost import BudgetTracker
from bot.git import Workspace
from bot.models import Job
from bot.plans import PlanData, beyond_plan, deviation_note, plan_budget
from bot.workflows.steps.flow import Flow, Stop

log = logging.getLogger("agentbot.job")

PLAN_PARAM = "plan"
"""The job param that holds the approved plan (a dict of `PlanData`)."""


@dataclass(frozen=True)
class PlanGuard:
    """An approved plan and what the repository does when a change leaves it."""

    plan: PlanData
    on_deviation: str
    """`draft` or `fail` (`plan.on_deviation`)."""

    @classmethod
    def of(cls, job: Job, config: RepoConfig) -> PlanGuard | None:
        """The plan a job carries, or None (a job that was not approved from a plan)."""
        raw = job.params.get(PLAN_PARAM)
        if not isinstance(raw, dict):
            return None
        return cls(PlanData.model_validate(raw), config.plan.on_deviation)

    def limit(self, budget: BudgetTracker, config: RepoConfig) -> None:
        """Cap the job's budget at the plan's estimate times `plan.budget_factor`."""
        usd, turns = plan_budget(
            self.plan, config.plan.budget_factor, budget.max_usd, budget.max_turns
        )
        budget.max_usd, budget.max_turns = usd, turns

    def beyond(self, ws: Workspace, base: str) -> list[str]:
        """The changed files the plan does not cover (a test file the change adds is)."""
        changed = ws.changed_files(base)
        added = {p for p in changed if not ws.succeeds("cat-file", "-e", f"{base}:{p}")}
        return beyond_plan(self.plan, changed, added)


def keep_to_plan(flow: Flow, guard: PlanGuard) -> list[str]:
    """After the agent's answer: a change beyond the plan goes back to it once, with the
    list; what is still beyond fails the job (`on_deviation: fail`) or is returned, for
    the pull request to open as a draft naming each file."""
    extra = guard.beyond(flow.ws, flow.base_sha)
    talk = flow.conversation
    if extra and talk is not None and talk.resumable and not flow.ran_out:
        log.info("change beyond the approved plan (%s): sent back once", ", ".join(extra))
        flow.follow_up(deviation_note(guard.plan, extra))
        extra = guard.beyond(flow.ws, flow.base_sha)
        if not flow.ws.changed_files(flow.base_sha):
            raise Stop(flow.fail("the agent undid its whole change when sent back to the plan"))
    if extra and guard.on_deviation == "fail":
        named = ", ".join(f"`{p}`" for p in extra)
        raise Stop(flow.fail(f"the change touches files beyond the approved plan: {named}"))
    return extra
