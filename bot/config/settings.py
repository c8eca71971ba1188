"""Settings from the environment (DESIGN §2): read by the entry point only."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.db_url import SQLITE_PREFIX, sqlite_file
from bot.errors import ConfigError
from bot.secrets import without_credentials

CONNECT_RETRY_SECONDS = 20.0
"""How long (seconds, in all) a host that cannot be reached is retried before the job fails;
a connection attempt itself times out after 5 s, so a failure is named within ~25 s."""


_APP_ID = re.compile(r"[0-9]+|Iv[A-Za-z0-9.]+")
"""An App ID or a Client ID, either of which signs the App's JWT."""


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

    @field_validator("data_dir", "queue", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        # `AGENTBOT_DATA_DIR=` would be the current folder, where secrets must not land.
        if isinstance(value, str) and not value.strip():
            return default_data_dir() if info.field_name == "data_dir" else ""
        return value

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        path = value.expanduser().resolve()
        if path.exists() and not path.is_dir():
            raise ValueError(f"{path} is not a folder: name a folder (it is created if missing)")
        return path

    @field_validator("github_app_id")
    @classmethod
    def _app_id(cls, value: str | None) -> str | None:
        # The JWT's `iss` is the App ID (digits) or its Client ID (`Iv…`), GitHub's
        # "Generating a JSON Web Token (JWT) for a GitHub App".
        if value and not _APP_ID.fullmatch(value.strip()):
            raise ValueError(
                "not a GitHub App ID: give the App ID (digits) or its Client ID (Iv…),"
                " both on the App's settings page"
            )
        return value.strip() if value else value

    @field_validator("github_api_url", "anthropic_base_url", "llm_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("not an http(s) URL")
        return value

    @field_validator("github_server_url")
    @classmethod
    def _clone_url(cls, value: str) -> str:
        # file:// serves clones from a folder of bare repositories (a mirror, the tests).
        if not value.startswith(("http://", "https://", "file://")):
            raise ValueError("not an http(s) or file URL")
        return value

    @model_validator(mode="after")
    def _queue_in_data_dir(self) -> Settings:
        if not self.queue:
            self.queue = self._default_queue()
        return self

    def check_queue_folder(self) -> None:
        """ConfigError when a SQLite AGENTBOT_QUEUE that was set names a missing folder.

        The default queue's folder (the data dir) is made; a set one's is not, so a typo in
        the path is named rather than silently made a new, empty queue somewhere else.
        """
        path = sqlite_file(self.queue)
        if path is None or self.queue == self._default_queue():
            return
        folder = path.absolute().parent
        if not folder.is_dir():
            raise ConfigError(
                f"the folder {folder} of AGENTBOT_QUEUE does not exist: create it or fix the path",
                path="AGENTBOT_QUEUE",
            )

    def _default_queue(self) -> str:
        return f"{SQLITE_PREFIX}{self.data_dir / 'agentbot.db'}"

    def app_private_key(self) -> str | None:
        """The App's PEM key, from the variable or the file it names."""
        if self.github_app_private_key is not None:
            return self.github_app_private_key.get_secret_value()
        if self.github_app_private_key_path is not None:
            try:
                return self.github_app_private_key_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(
                    f"cannot read the App key {self.github_app_private_key_path}:"
                    f" {exc.strerror or exc}",
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
        if name == "GITHUB_APP_ID" and isinstance(got, str):
            # A token or key pasted into the wrong variable must not reach a log.
            shown = f" (got {len(got)} characters)"
        elif isinstance(got, str):
            shown = f" (got {without_credentials(got)!r})"
        else:
            shown = f" (got {got!r})" if isinstance(got, int | float) else ""
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{msg}{shown}; fix or unset it", path=name) from None
