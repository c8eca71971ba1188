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

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from bot.clock import Clock
from bot.cost import BudgetTracker
from bot.errors import AgentError, AgentExecutionError, LimitsExceeded, LLMError
from bot.llm import LLM, Reply, ToolUseBlock
from bot.models import AgentOutput, AgentResult, AgentStatus, Usage
from bot.roles import Role
from bot.sandbox import Sandbox
from bot.session import AgentTrace, Session
from bot.tools import FINISH_NAME, Toolbox, tool_definitions

NO_TOOL_CALL = (
    "You replied without calling a tool. Continue the work with the tools, and when you are"
    " done call `finish` with your result; a reply without a tool call is not a result."
)
CUT_OFF = (
    "Your reply was cut off at the output token limit. Continue in smaller steps (write"
    " large files in parts), and call `finish` when you are done."
)
FINISH_ACCEPTED = "Result recorded. Your work is over."
WARN_TURNS = 3
"""Turns left when the model is warned that its turns run out."""
WARN_USD_SHARE = 0.8
_REFUSAL = re.compile(
    r"\bI(?:'m| am)? (?:can(?:'|no)t|cannot|won't|will not|am not able to|am unable to|"
    r"not able to|unable to) (?:help|assist|comply|do that|continue|work on|complete)",
    re.IGNORECASE,
)

FinishCheck = Callable[[AgentOutput], str]
"""What is wrong with an OK answer, judged on the workspace ("" when nothing)."""


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
        self._run = _Run(
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


def _finish_errors(exc: PydanticValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, LLMError):
        status = f", HTTP {exc.status}" if exc.status is not None else ""
        return f"LLM provider {exc.provider} failed{status}: {exc}"
    if isinstance(exc, LimitsExceeded):
        return f"limit {exc.limit} reached: {exc}"
    return str(exc)


class _Run:
    """The state of one run; `execute` drives it."""

    def __init__(
        self,
        *,
        role: Role,
        task: str,
        llm: LLM,
        budget: BudgetTracker,
        clock: Clock,
        session: Session | None,
        toolbox: Toolbox,
        max_invalid_finish: int,
        system: str,
        finish_check: FinishCheck | None = None,
        max_rejected_finish: int = 2,
    ) -> None:
        self.role = role
        self.llm = llm
        self.budget = budget
        self.clock = clock
        self.trace = AgentTrace(session, role.name.value, clock)
        self.toolbox = toolbox
        self.max_invalid_finish = max_invalid_finish
        self.system = system
        self.tools = tool_definitions(role.tools)
        self.messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": task}]}
        ]
        self.sent = 0  # messages already logged as sent
        self.turns = 0
        self.usage = Usage()
        self.invalid_finish = 0
        self.finish_check = finish_check
        self.max_rejected_finish = max_rejected_finish
        self.rejected_finish = 0
        self.cost_at_start = budget.cost_usd
        self.started = clock.monotonic()
        self.warned: set[str] = set()
        self.resumed = False
        self.open_results: list[dict[str, Any]] | None = None
        """The tool results owed for the reply that called finish (None: not resumable)."""

    # --- the loop ---------------------------------------------------------------------------

    def reopen(self, text: str) -> None:
        """The next user message after a finished run; this run's counters start again."""
        assert self.open_results is not None
        self.messages.append({"role": "user", "content": [*self.open_results, _text(text)]})
        self.open_results = None
        self.turns = 0
        self.usage = Usage()
        self.invalid_finish = self.rejected_finish = 0
        self.cost_at_start = self.budget.cost_usd
        self.started = self.clock.monotonic()
        self.resumed = True
        self._log("resumed", chars=len(text))

    def execute(self) -> AgentResult:
        if not self.resumed:
            self._start()
        try:
            output, failure = self._loop()
        except AgentError as exc:
            exc.result = self._end(None, _describe(exc))
            raise
        except Exception as exc:
            error = AgentExecutionError(
                f"{self.role.name.value} agent crashed: {type(exc).__name__}: {exc}"
            )
            error.result = self._end(None, str(error))
            raise error from exc
        return self._end(output, failure)

    def _loop(self) -> tuple[AgentOutput | None, str]:
        while True:
            reply = self._call()
            uses = reply.tool_uses
            if not uses:
                if refusal := _refusal(reply):
                    self._log("refused", text=refusal)
                    return None, f"the model refused the task: {refusal}"
                nudge = CUT_OFF if reply.stop_reason == "max_tokens" else NO_TOOL_CALL
                self.messages.append({"role": "user", "content": [_text(nudge), *self._warnings()]})
                continue
            results: list[dict[str, Any]] = []
            for use in uses:
                if use.name == FINISH_NAME:
                    output, problem = self._check_finish(use)
                    if output is not None and (rejected := self._reject(output)):
                        self._log("finish_rejected", id=use.id, errors=rejected)
                        results.append(_result(use.id, rejected, is_error=True))
                        continue
                    if output is not None:
                        skipped = uses[len(results) + 1 :]
                        self._log("finish", id=use.id, skipped=len(skipped))
                        self.open_results = [
                            *results,
                            _result(use.id, "Result recorded."),
                            *(_result(u.id, "Not run: it came after finish.") for u in skipped),
                        ]
                        return output, ""
                    self.invalid_finish += 1
                    self._log("finish_rejected", id=use.id, errors=problem)
                    if self.invalid_finish > self.max_invalid_finish:
                        return None, (
                            f"finish input invalid {self.invalid_finish} times; last: {problem}"
                        )
                    left = self.max_invalid_finish - self.invalid_finish + 1
                    results.append(
                        _result(
                            use.id,
                            f"finish input rejected: {problem}. Correct it and call finish"
                            f" again ({left} attempt(s) left).",
                            is_error=True,
                        )
                    )
                else:
                    results.append(self._run_tool(use))
            self.messages.append({"role": "user", "content": [*results, *self._warnings()]})

    def _warnings(self) -> list[dict[str, Any]]:
        """A one-time warning block when the turns or the USD budget are nearly used up."""
        left = min(self.role.max_turns - self.turns, self.budget.max_turns - self.budget.turns)
        if left <= WARN_TURNS and "turns" not in self.warned:
            self.warned.add("turns")
            self._log("warned", limit="turns", left=left)
            return [
                _text(
                    f"[agentbot] {left} turn(s) left before your turn limit. Wrap up now:"
                    " finish the change you have, run the targeted test, and call `finish`."
                    " If the limit is reached first, your change so far is validated and"
                    " opened as a draft pull request."
                )
            ]
        spent = self.budget.max_usd and self.budget.cost_usd / self.budget.max_usd
        if spent >= WARN_USD_SHARE and "usd" not in self.warned:
            self.warned.add("usd")
            self._log("warned", limit="usd", spent=round(spent, 3))
            return [
                _text(
                    f"[agentbot] {spent:.0%} of this job's USD budget is spent. Wrap up now"
                    " and call `finish` with what you have."
                )
            ]
        return []

    def _call(self) -> Reply:
        if self.turns >= self.role.max_turns:
            raise LimitsExceeded(
                f"{self.role.name.value} used all {self.role.max_turns} of its turns without"
                " calling finish; raise roles.<name>.max_turns or split the task",
                limit="turns",
                used=self.turns,
                allowed=self.role.max_turns,
            )
        self.budget.check()
        self._log("request", turn=self.turns + 1, messages=self.messages[self.sent :])
        self.sent = len(self.messages)
        reply = self.llm.complete(
            system=self.system,
            messages=self.messages,
            tools=self.tools,
            max_tokens=self.role.max_tokens,
        )
        self.turns += 1
        self.usage = self.usage + reply.usage
        self.budget.record(reply.usage)
        content = [block.model_dump() for block in reply.content]
        self._log(
            "reply",
            turn=self.turns,
            stop_reason=reply.stop_reason,
            content=content,
            usage=reply.usage,
            model=reply.model,
        )
        # The API refuses an empty assistant message in the history.
        self.messages.append(
            {"role": "assistant", "content": content or [{"type": "text", "text": "(empty)"}]}
        )
        self.sent = len(self.messages)
        return reply

    def _run_tool(self, use: ToolUseBlock) -> dict[str, Any]:
        if use.name not in self.role.tools:
            available = ", ".join([*self.role.tools, FINISH_NAME])
            return _result(
                use.id, f"tool {use.name!r} is not available; use {available}", is_error=True
            )
        began = self.clock.monotonic()
        outcome = self.toolbox.run(use.name, use.input)
        self._log(
            "tool",
            id=use.id,
            name=use.name,
            is_error=outcome.is_error,
            chars=len(outcome.content),
            seconds=round(self.clock.monotonic() - began, 3),
        )
        return _result(use.id, outcome.content, is_error=outcome.is_error)

    def _reject(self, output: AgentOutput) -> str:
        """Why the workspace does not bear out an OK answer, while rejections are left."""
        if (
            self.finish_check is None
            or output.status is not AgentStatus.OK
            or self.rejected_finish >= self.max_rejected_finish
        ):
            return ""
        problem = self.finish_check(output)
        if not problem:
            return ""
        self.rejected_finish += 1
        left = self.max_rejected_finish - self.rejected_finish
        after = (
            f"{left} more rejection(s) possible"
            if left
            else "the next finish is accepted as it is and judged by validation"
        )
        return f"finish not accepted: {problem}\nFix this and call finish again ({after})."

    @staticmethod
    def _check_finish(use: ToolUseBlock) -> tuple[AgentOutput | None, str]:
        try:
            output = AgentOutput.model_validate(use.input)
        except PydanticValidationError as exc:
            return None, _finish_errors(exc)
        if output.status is AgentStatus.NEEDS_INFO and not output.question.strip():
            return None, "question: NEEDS_INFO needs the question to ask in `question`"
        return output, ""

    # --- the end -------------------------------------------------------------------------------

    def _log(self, event: str, **fields: Any) -> None:
        self.trace.event(event, **fields)

    def _start(self) -> None:
        self.trace.started(
            provider=self.llm.provider,
            model=self.llm.model,
            max_turns=self.role.max_turns,
            tools=[t["name"] for t in self.tools],
            system=self.system,
        )

    def _end(self, output: AgentOutput | None, failure: str) -> AgentResult:
        status = output.status if output is not None else AgentStatus.FAIL
        error = failure or None
        if output is not None and status in (AgentStatus.BLOCKED, AgentStatus.FAIL):
            error = f"agent reported {status.value}: {output.summary}"
        result = AgentResult(
            role=self.role.name,
            success=status is AgentStatus.OK,
            message=output.summary if output is not None else failure,
            output=output,
            files_modified=sorted(self.toolbox.files_modified),
            error_details=error,
            duration_seconds=self.clock.monotonic() - self.started,
            usage=self.usage,
            cost_usd=self.budget.cost_usd - self.cost_at_start,
            turns=self.turns,
        )
        self.trace.ended(result, status)
        return result


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _refusal(reply: Reply) -> str:
    """The refusal in a reply without tool calls, or ""."""
    text = " ".join(b.text for b in reply.content if b.type == "text").strip()
    if reply.stop_reason == "refusal":
        return text[:300] or "(stop reason: refusal)"
    return text[:300] if _REFUSAL.search(text) else ""


def _result(tool_use_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": is_error,
    }
