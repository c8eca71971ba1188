"""One error tree for agentbot: every error carries data and says what to do next."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.models import AgentResult


class AgentbotError(Exception):
    """Base of every error agentbot raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(AgentbotError):
    """A setting or `.github/agentbot.yml` key is missing, unknown or of the wrong type."""

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        if path:
            where = path + (f" (line {line})" if line is not None else "")
        else:
            where = f"line {line}" if line is not None else ""
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line


class GitHubError(AgentbotError):
    """A GitHub REST call failed (after the retries the call is allowed)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        method: str = "",
        url: str = "",
        issue_number: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.method = method
        self.url = url
        self.issue_number = issue_number
        self.retry_after = retry_after


class GitError(AgentbotError):
    """A git operation failed; `recoverable` says whether a retry could help."""

    def __init__(self, message: str, *, operation: str = "", recoverable: bool = True) -> None:
        super().__init__(message)
        self.operation = operation
        self.recoverable = recoverable


class AgentError(AgentbotError):
    """An agent could not do its work."""

    result: AgentResult | None = None
    """The partial result (usage, cost, turns so far) when an agent run ended in this error."""


class AgentExecutionError(AgentError):
    """The agent failed unrecoverably (provider error, invalid output, tool crash)."""


class AgentTimeoutError(AgentError):
    """The agent ran past its wall-clock budget."""


class LimitsExceeded(AgentError):
    """A budget (turns, USD, minutes) ran out before the agent finished."""

    def __init__(self, message: str, *, limit: str, used: float, allowed: float) -> None:
        super().__init__(message)
        self.limit = limit
        self.used = used
        self.allowed = allowed


class LLMError(AgentError):
    """The LLM provider failed after the retries the adapter is allowed."""

    def __init__(self, message: str, *, provider: str, status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class ToolError(AgentError):
    """A tool call was refused (outside the workspace, bad arguments); the model sees it."""


class QualityGateFailure(AgentError):
    """A quality gate (format, lint, typecheck, test) failed."""


class ValidationError(AgentbotError):
    """Validation still fails after the fix rounds."""

    def __init__(self, message: str, *, step: str = "", output: str = "") -> None:
        super().__init__(message)
        self.step = step
        self.output = output


class TaskParseError(AgentbotError):
    """A tasks.md file does not parse; `line_number` says where."""

    def __init__(self, message: str, *, line_number: int | None = None) -> None:
        prefix = f"line {line_number}: " if line_number is not None else ""
        super().__init__(prefix + message)
        self.line_number = line_number


class KataParseError(AgentbotError):
    """A kata markdown file lacks a required section."""


class QueueError(AgentbotError):
    """The job queue could not store or hand out a job."""


class GuardRefused(AgentbotError):
    """A guard (permission, bot, closed issue, running job) refused the job."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class NoCredentials(ConfigError):
    """A job needs GitHub and no credentials are configured."""

    def __init__(self) -> None:
        super().__init__(
            "no GitHub credentials configured: set GITHUB_TOKEN, or GITHUB_APP_ID and"
            " GITHUB_APP_PRIVATE_KEY (or GITHUB_APP_PRIVATE_KEY_PATH), and restart"
        )


class SandboxUnavailable(ConfigError):
    """A job cannot be confined here (no working bubblewrap); App mode refuses to run it."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class OutboundRefused(AgentbotError):
    """What a job would push breaks a limit or holds a secret; nothing was pushed."""

    def __init__(self, violations: list[str]) -> None:
        message = "nothing was pushed: " + "; ".join(violations)
        if any(v.startswith("limits.") for v in violations):
            message += " (the limits are set in .github/agentbot.yml)"
        super().__init__(message)
        self.violations = violations


class CoverStageError(AgentbotError):
    """A /cover stage failed for one method; the pipeline stops there (seed 002 fail-fast)."""

    def __init__(self, stage: str, method: str, reason: str) -> None:
        super().__init__(
            f"{stage} failed for {method}: {reason}. Fix the cause and comment /cover again:"
            " finished stages are cached"
        )
        self.stage = stage
        self.method = method
        self.reason = reason
