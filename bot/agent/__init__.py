"""The one agent loop (DESIGN §7): call the model, run its tool calls, stop on `finish`.

Every role runs here: the role gives the system prompt, the tool set and the turn limit;
the caller gives the task (the first user message), the workspace, the LLM for the role's
model, the job's budget and, optionally, the session whose artifacts to write.

How a run ends:
- a valid `finish` call: an AgentResult whose `success` is `status == OK` and whose
  `output` is the contract the model handed in (NEEDS_INFO, BLOCKED and FAIL are results,
  not exceptions);
- `finish` input that does not validate: the errors go back to the model as an error
  tool result, at most `max_invalid_finish` times; the next invalid one ends the run with
  a FAIL result (returned, `output` None, `error_details` naming the errors);
- a valid OK `finish` the caller's `finish_check` finds wanting (an empty diff, a scratch
  file, a broken limit): the problem goes back as an error tool result the model can fix,
  at most `max_rejected_finish` times; after that the answer is accepted as it is and the
  workflow judges it;
- a budget or the role's turn limit runs out (LimitsExceeded), the provider fails past its
  retries (LLMError), or anything else breaks (wrapped in AgentExecutionError): status.json
  says FAIL and the error is raised with the partial AgentResult (usage, cost, turns so
  far) attached as `exc.result`. Never a silent success.

A few turns before the role's or the job's turn limit (and at 80 % of the USD budget) the
model is warned once, in the user message of that turn, so it can finish what it has. A
reply that refuses (stop reason `refusal`, or a text-only "I can't help with that") ends
the run at once with a FAIL result instead of being nudged until the limit.

Usage, cost and turns in the result are this run's own, even when the budget is shared
by several runs of one job. A reply without a tool call gets a reminder to call `finish`
(and costs a turn). Tool calls after a valid `finish` in the same reply are not run.
Prompt caching is the adapter's business: the loop sends the same system, tools and
growing message list every turn, which is what a cache wants.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bot.agent.messages import FINISH_ACCEPTED, NO_TOOL_CALL
from bot.agent.run import FinishCheck, Run
from bot.clock import Clock
from bot.cost import BudgetTracker
from bot.errors import AgentError
from bot.llm import LLM
from bot.models import AgentResult
from bot.roles import Role
from bot.sandbox import Sandbox
from bot.session import Session
from bot.tools import Toolbox

__all__ = ["FINISH_ACCEPTED", "NO_TOOL_CALL", "Conversation", "FinishCheck", "run_agent"]


def run_agent(
    *,
    role: Role,
    task: str,
    workspace: Path,
    llm: LLM,
    budget: BudgetTracker,
    clock: Clock,
    session: Session | None = None,
    toolbox: Toolbox | None = None,
    max_invalid_finish: int = 2,
    context: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
    finish_check: FinishCheck | None = None,
    max_rejected_finish: int = 2,
) -> AgentResult:
    """Run `role` on `task` in `workspace` until it calls `finish` (see the module doc).

    `context` fills the role's prompt placeholders (`bot.roles.repo_context`); `sandbox` is
    the job's, where the tools run (bot.sandbox); `finish_check` says what is wrong with an
    OK answer given the workspace ("" when nothing). Raises
    LimitsExceeded, LLMError or AgentExecutionError with `exc.result` set.
    """
    return Conversation(
        role=role, task=task, workspace=workspace, llm=llm, budget=budget, clock=clock,
        session=session, toolbox=toolbox, max_invalid_finish=max_invalid_finish,
        context=context, sandbox=sandbox, finish_check=finish_check,
        max_rejected_finish=max_rejected_finish,
    ).start()  # fmt: skip


class Conversation:
    """One agent's conversation: `start` runs it to `finish`; `resume` continues it after.

    Resuming sends the next user message (validation's verdict, say) after the whole
    history, so the provider's cached prefix stays valid and the model keeps what it
    learnt; each `start`/`resume` is a run of its own for turns, usage and cost.
    """

    def __init__(
        self,
        *,
        role: Role,
        task: str,
        workspace: Path,
        llm: LLM,
        budget: BudgetTracker,
        clock: Clock,
        session: Session | None = None,
        toolbox: Toolbox | None = None,
        max_invalid_finish: int = 2,
        context: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        finish_check: FinishCheck | None = None,
        max_rejected_finish: int = 2,
    ) -> None:
        self._run = Run(
            role=role,
            task=task,
            llm=llm,
            budget=budget,
            clock=clock,
            session=session,
            toolbox=toolbox or Toolbox(workspace, sandbox=sandbox),
            max_invalid_finish=max_invalid_finish,
            system=role.system_prompt(**(context or {})),
            finish_check=finish_check,
            max_rejected_finish=max_rejected_finish,
        )

    def start(self) -> AgentResult:
        """Run until `finish` (see `run_agent`)."""
        return self._run.execute()

    @property
    def resumable(self) -> bool:
        """Whether the last run ended with a `finish` the conversation can continue from."""
        return self._run.open_results is not None

    def resume(self, text: str) -> AgentResult:
        """Send `text` as the next user message and run until `finish` again."""
        if not self.resumable:
            raise AgentError("the conversation did not end with finish; it cannot go on")
        self._run.reopen(text)
        return self._run.execute()
