"""Settings from the environment (DESIGN §2) and RepoConfig from `.github/agentbot.yml` (§4)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import ConfigError

REPO_CONFIG_PATH = ".github/agentbot.yml"

Permission = Literal["read", "triage", "write", "maintain", "admin"]
PERMISSION_RANK: dict[str, int] = {
    "none": 0,
    "read": 1,
    "triage": 2,
    "write": 3,
    "maintain": 4,
    "admin": 5,
}


CONNECT_RETRY_SECONDS = 20.0
"""How long (seconds, in all) a host that cannot be reached is retried before the job fails;
a connection attempt itself times out after 5 s, so a failure is named within ~25 s."""


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/agentbot`, else `~/.local/share/agentbot`: the same wherever started."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "agentbot"


def _env(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class Settings(BaseSettings):
    """Process settings, read from the environment by the entry point only."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    github_token: SecretStr | None = _env("GITHUB_TOKEN")
    github_app_id: str | None = _env("GITHUB_APP_ID")
    github_app_private_key: SecretStr | None = _env("GITHUB_APP_PRIVATE_KEY")
    github_app_private_key_path: Path | None = _env("GITHUB_APP_PRIVATE_KEY_PATH")
    github_webhook_secret: SecretStr | None = _env("GITHUB_WEBHOOK_SECRET")
    jobs_password: SecretStr | None = _env("AGENTBOT_JOBS_PASSWORD")
    github_api_url: str = Field(
        default="https://api.github.com", validation_alias=AliasChoices("GITHUB_API_URL")
    )
    github_server_url: str = Field(
        default="https://github.com", validation_alias=AliasChoices("GITHUB_SERVER_URL")
    )
    anthropic_api_key: SecretStr | None = _env("ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = _env("ANTHROPIC_BASE_URL")
    provider: Literal["anthropic", "openai-compatible"] = Field(
        default="anthropic", validation_alias=AliasChoices("AGENTBOT_PROVIDER")
    )
    llm_base_url: str | None = _env("AGENTBOT_LLM_BASE_URL")
    llm_api_key: SecretStr | None = _env("AGENTBOT_LLM_API_KEY")
    model: str | None = _env("AGENTBOT_MODEL")
    queue: str = Field(default="", validation_alias=AliasChoices("AGENTBOT_QUEUE"))
    """A queue URL; unset means `sqlite:///<data dir>/agentbot.db`."""
    data_dir: Path = Field(
        default_factory=default_data_dir, validation_alias=AliasChoices("AGENTBOT_DATA_DIR")
    )
    """Where the queue, the webhook secret and job data live; absolute, whatever the cwd."""
    connect_retry_seconds: float = Field(
        default=CONNECT_RETRY_SECONDS,
        gt=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("AGENTBOT_CONNECT_RETRY_SECONDS"),
    )
    sandbox: Literal["auto", "none"] = Field(
        default="auto", validation_alias=AliasChoices("AGENTBOT_SANDBOX")
    )
    """`auto`: bubblewrap where it works; `none`: jobs run unsandboxed (unsafe)."""
    max_usd_per_day: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("AGENTBOT_MAX_USD_PER_DAY"),
    )
    """The installation's spend per UTC day, every repository together (`agentbot serve`)."""
    max_usd_per_month: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("AGENTBOT_MAX_USD_PER_MONTH"),
    )
    """The installation's spend per UTC calendar month, every repository together."""

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        path = value.expanduser().resolve()
        if path.exists() and not path.is_dir():
            raise ValueError(f"{path} is not a folder: name a folder (it is created if missing)")
        return path

    @field_validator("github_api_url", "anthropic_base_url", "llm_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value

    @field_validator("github_server_url")
    @classmethod
    def _clone_url(cls, value: str) -> str:
        # file:// serves clones from a folder of bare repositories (a mirror, the tests).
        if not value.startswith(("http://", "https://", "file://")):
            raise ValueError(f"{value!r} is not an http(s) or file URL")
        return value

    @model_validator(mode="after")
    def _queue_in_data_dir(self) -> Settings:
        if not self.queue:
            self.queue = f"sqlite:///{self.data_dir / 'agentbot.db'}"
        return self

    def app_private_key(self) -> str | None:
        """The App's PEM key, from the variable or the file it names."""
        if self.github_app_private_key is not None:
            return self.github_app_private_key.get_secret_value()
        if self.github_app_private_key_path is not None:
            try:
                return self.github_app_private_key_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(
                    f"cannot read the App key: {exc.strerror}",
                    path="GITHUB_APP_PRIVATE_KEY_PATH",
                ) from exc
            except UnicodeDecodeError:
                raise ConfigError(
                    f"{self.github_app_private_key_path} is not UTF-8 text: name the .pem file"
                    " downloaded from the App's settings page",
                    path="GITHUB_APP_PRIVATE_KEY_PATH",
                ) from None
        return None


def load_settings() -> Settings:
    """Settings from the environment; a bad value is a ConfigError naming its variable."""
    try:
        return Settings()
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err["loc"] else ""
        field = Settings.model_fields.get(name)
        alias = field.validation_alias if field is not None else None
        if isinstance(alias, AliasChoices):
            name = str(alias.choices[0])
        got = err.get("input")
        shown = f" (got {got!r})" if isinstance(got, str | int | float) else ""
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{msg}{shown}; fix or unset it", path=name) from None


# --- .github/agentbot.yml ------------------------------------------------------------------


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Labels(_Section):
    """Label names the bot reacts to and sets."""

    fix: str = "agent-fix"
    tdd: str = "agent-tdd"
    plan: str = "agent-plan"
    """Plan first (issue #28): the Planner proposes, a `/approve` runs the fix."""
    failed: str = "agent-failed"
    needs_info: str = "agent-needs-info"
    security_review: str = "agent-security-review"
    """Set on a pull request whose agent raised a security concern (seed 004 gate)."""
    unverified: str = "agent-unverified"
    """Set on a draft whose gate could not be trusted: a stage could not run, or the change
    edits how it is judged."""


LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?")
"""A GitHub login (an App's account ends in `[bot]`)."""

COMMAND_SIGILS = ("/", "@")
"""How every comment command starts, so a comment without one is dismissed unread."""


class Commands(_Section):
    """Comment commands (a comment whose body starts with one triggers the job).

    Each starts with `/` or `@` (`/fix`, `@agentbot fix`): prose never starts a job, and a
    plain comment costs no request to GitHub. An empty command is switched off.
    """

    fix: str = "/fix"
    implement: str = "/implement"
    cover: str = "/cover"
    plan: str = "/plan"
    approve: str = "/approve"

    @field_validator("fix", "implement", "cover", "plan", "approve")
    @classmethod
    def _sigil(cls, value: str) -> str:
        if value.strip() and not value.startswith(COMMAND_SIGILS):
            raise ValueError(f"a command starts with / or @ (like /fix), got {value!r}")
        return value


class RoleConfig(_Section):
    """Per-role overrides."""

    model: str | None = None
    max_turns: int | None = Field(default=None, gt=0)


class Budget(_Section):
    """Spending limits; a job stops when one runs out."""

    max_usd_per_job: float = Field(default=3.0, gt=0)
    max_turns: int = Field(default=60, gt=0)
    max_minutes: float = Field(default=30, gt=0)
    max_usd_per_refuel: float = Field(default=20.0, gt=0)
    max_usd_per_day: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """This repository's spend per UTC day (App only: counted in the queue's database)."""
    max_usd_per_month: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """This repository's spend per UTC calendar month (App only)."""


class ValidationConfig(_Section):
    """Stage commands; an absent stage uses the language default, null skips it."""

    setup: str | None = "default"
    format: str | None = "default"
    lint: str | None = "default"
    typecheck: str | None = "default"
    test: str | None = "default"
    timeout_seconds: int = Field(default=900, gt=0)
    fix_rounds: int = Field(default=3, ge=0)


class Limits(_Section):
    """What a change may touch, judged on the commits to be pushed (bot.outbound.limits)."""

    max_changed_lines: int = Field(default=200, gt=0)
    """Changed lines outside tests and docs (added + deleted; a long line counts per 200
    characters, a file the diff cannot show per 80 bytes)."""
    max_changed_test_lines: int = Field(default=1000, gt=0)
    """Changed lines in tests and docs, counted the same way."""
    max_file_bytes: int = Field(default=1024 * 1024, gt=0)
    """No file may be added, or grow, past this many bytes."""
    protected_paths: list[str] = Field(default_factory=lambda: [".github/workflows/**"])
    """Globs no change may add, edit, delete or rename (`**` any depth, `*` one segment)."""
    allow_test_deletion: bool = False


class PullRequestConfig(_Section):
    """How pull requests are opened."""

    draft: bool = False
    draft_on_failure: bool = False
    reviewers: Literal["initiator", "none"] = "initiator"
    branch_prefix: str = "agentbot/"


class FollowUpConfig(_Section):
    """Follow-ups on agentbot's own pull requests (reviews, failed CI)."""

    reviews: bool = True
    """Answer changes requested, inline review comments and `/fix <instructions>`."""
    max_ci_fix_attempts: int = Field(default=2, ge=0)
    """Fix commits per pull request for failed CI before agentbot stops and says so."""


class PlanConfig(_Section):
    """Plan first, then approve (docs/plan.md)."""

    required: bool = False
    """`agent-fix`, `/fix` and assignment post a plan first instead of fixing at once."""
    on_deviation: Literal["draft", "fail"] = "draft"
    """A change still beyond the approved plan's files after one send-back: a draft pull
    request naming each file, or a failed job."""
    budget_factor: float = Field(default=1.5, gt=0, allow_inf_nan=False)
    """The approved job's budget is the plan's estimate times this, within `budget`."""


class Execution(_Section):
    """Where jobs run and how many tasks run at once."""

    mode: Literal["local", "actions"] = "local"
    workflow: str = "agentbot.yml"
    max_parallel_tasks: int = Field(default=4, gt=0)


class SandboxConfig(_Section):
    """What sandboxed commands may reach (DESIGN §13)."""

    network: Literal["none", "setup", "all"] = "setup"
    """`none`: no network for any command; `setup`: only the validation setup stage
    (installing dependencies); `all`: the agent's tools and every stage too."""


class RepoConfig(_Section):
    """A repository's `.github/agentbot.yml`; every key optional, unknown keys are errors."""

    labels: Labels = Field(default_factory=Labels)
    commands: Commands = Field(default_factory=Commands)
    min_permission: Permission = "write"
    allowed_bots: list[str] = Field(default_factory=list)
    model: str = "claude-sonnet-4-6"
    """Default model; claude-sonnet-4-5 (DESIGN §4) reaches end of life on 2026-11-30."""
    roles: dict[str, RoleConfig] = Field(default_factory=dict)
    budget: Budget = Field(default_factory=Budget)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    limits: Limits = Field(default_factory=Limits)
    pull_request: PullRequestConfig = Field(default_factory=PullRequestConfig)
    execution: Execution = Field(default_factory=Execution)
    followup: FollowUpConfig = Field(default_factory=FollowUpConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per-model USD per million tokens: {model: {input, output, cache_write, cache_read}}."""
    commit_session_artifacts: bool = False
    plan: PlanConfig = Field(default_factory=PlanConfig)
    assignee: str = ""
    """A login whose assignment to an issue starts a fix (the App's own account always does)."""

    @field_validator("assignee")
    @classmethod
    def _login(cls, value: str) -> str:
        if value.strip() and not LOGIN.fullmatch(value.strip()):
            raise ValueError(f"a GitHub login (letters, digits, -), got {value!r}")
        return value.strip()

    @classmethod
    def from_text(cls, text: str, *, source: str = REPO_CONFIG_PATH) -> RepoConfig:
        """Parse YAML text; errors name the key path and line."""
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            # PyYAML's own text names the input `"<unicode string>"`: say it in our words.
            problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
            context = getattr(exc, "context", None)
            where = f"{source}:{line}:{mark.column + 1}" if mark is not None else source
            detail = f"{problem} ({context})" if context else problem
            error = ConfigError(f"{where}: not valid YAML: {detail}")
            error.line = line
            raise error from None
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping of keys", line=1)
        # A key written with no value (`validation:`) means "defaults", as a user expects.
        try:
            return cls.model_validate(data)
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            path = ".".join(loc)
            what = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ConfigError(
                f"{what} in {source}; see the configuration reference in the README",
                path=path,
                line=_line_of(node, list(err["loc"])),
            ) from exc

    @classmethod
    def from_file(cls, path: Path) -> RepoConfig:
        """Load a file; a missing file means all defaults."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=str(path)) from None
        except OSError as exc:
            raise ConfigError(f"cannot read it: {exc.strerror}", path=str(path)) from None
        return cls.from_text(text, source=str(path))

    def model_for(self, role: str) -> str:
        """The model a role uses: its override, else the repo's model."""
        override = self.roles.get(role)
        return override.model if override and override.model else self.model


def _line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """Follow `loc` through the composed YAML tree; return the 1-based line of the deepest hit."""
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    line = key.start_mark.line + 1
                    node = value
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line
