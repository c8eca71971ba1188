"""One agent run: the loop that calls the model, runs its tools and checks its `finish`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from bot.agent.messages import (
    CUT_OFF,
    NO_TOOL_CALL,
    WARN_TURNS,
    WARN_USD_SHARE,
    describe,
    finish_errors,
    refusal,
    rejection,
    text_block,
    tool_result,
    turn_warning,
    usd_warning,
)
from bot.clock import Clock
from bot.cost import BudgetTracker
from bot.errors import AgentError, AgentExecutionError, LimitsExceeded
from bot.llm import LLM, Reply, ToolUseBlock
from bot.models import AgentOutput, AgentResult, AgentStatus, Usage
from bot.roles import Role
from bot.session import AgentTrace, Session
from bot.tools import FINISH_NAME, Toolbox, tool_definitions

FinishCheck = Callable[[AgentOutput], str]
"""What is wrong with an OK answer, judged on the workspace ("" when nothing)."""


class Run:
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
        self.messages.append({"role": "user", "content": [*self.open_results, text_block(text)]})
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
            exc.result = self._end(None, describe(exc))
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
                if refused := refusal(reply):
                    self._log("refused", text=refused)
                    return None, f"the model refused the task: {refused}"
                nudge = CUT_OFF if reply.stop_reason == "max_tokens" else NO_TOOL_CALL
                self.messages.append(
                    {"role": "user", "content": [text_block(nudge), *self._warnings()]}
                )
                continue
            results: list[dict[str, Any]] = []
            for use in uses:
                if use.name == FINISH_NAME:
                    output, problem = self._check_finish(use)
                    if output is not None and (rejected := self._reject(output)):
                        self._log("finish_rejected", id=use.id, errors=rejected)
                        results.append(tool_result(use.id, rejected, is_error=True))
                        continue
                    if output is not None:
                        skipped = uses[len(results) + 1 :]
                        self._log("finish", id=use.id, skipped=len(skipped))
                        self.open_results = [
                            *results,
                            tool_result(use.id, "Result recorded."),
                            *(tool_result(u.id, "Not run: it came after finish.") for u in skipped),
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
                        tool_result(
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
            return [text_block(turn_warning(left))]
        spent = self.budget.max_usd and self.budget.cost_usd / self.budget.max_usd
        if spent >= WARN_USD_SHARE and "usd" not in self.warned:
            self.warned.add("usd")
            self._log("warned", limit="usd", spent=round(spent, 3))
            return [text_block(usd_warning(spent))]
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
            return tool_result(
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
        return tool_result(use.id, outcome.content, is_error=outcome.is_error)

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
        return rejection(problem, left)

    @staticmethod
    def _check_finish(use: ToolUseBlock) -> tuple[AgentOutput | None, str]:
        try:
            output = AgentOutput.model_validate(use.input)
        except PydanticValidationError as exc:
            return None, finish_errors(exc)
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
