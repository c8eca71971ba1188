"""Settings to clients: the one place that builds GitHub and LLM clients and a job's ports.

Commands and the worker ask this module; nothing else constructs a client. The heavy
libraries (githubkit, the LLM SDKs, the queue backends) are imported when a client is
built, so importing this module (as every CLI command does) stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import RepoConfig, Settings
from bot.errors import ConfigError, NoCredentials
from bot.ports import GitHubFor, GitHubPort, Handler, JobEnv, push_branch
from bot.ports.recording import RecordingGitHub, RecordingPush

if TYPE_CHECKING:
    from bot.github import AppAuth, GitHub
    from bot.llm import LLM
    from bot.models import JobKind
    from bot.queue import JobQueue
    from bot.sandbox import Sandbox
    from bot.worker import WorkerDeps


def github_root(settings: Settings) -> GitHub | None:
    """The configured client: App auth (JWT), else token auth, else None (no credentials)."""
    from bot.github import GitHub, TokenAuth

    app = app_auth(settings)
    if app is not None:
        auth: AppAuth | TokenAuth = app
    elif settings.github_token is not None and settings.github_token.get_secret_value():
        auth = TokenAuth(settings.github_token.get_secret_value())
    else:
        return None
    return GitHub(
        auth=auth,
        api_url=settings.github_api_url,
        connect_retry_seconds=settings.connect_retry_seconds,
    )


def app_auth(settings: Settings) -> AppAuth | None:
    """The App's signer when GITHUB_APP_ID and a key are set; a bad key names its variable."""
    from bot.github import AppAuth

    key = settings.app_private_key()
    if not (settings.github_app_id and key):
        return None
    try:
        return AppAuth(settings.github_app_id, key)
    except ConfigError as exc:
        file = settings.github_app_private_key_path
        if settings.github_app_private_key is not None or file is None or not exc.path:
            raise
        # The key came from a file: the operator set GITHUB_APP_PRIVATE_KEY_PATH, not the key.
        why = str(exc).removeprefix(f"{exc.path}: ")
        raise ConfigError(f"{file}: {why}", path="GITHUB_APP_PRIVATE_KEY_PATH") from None


def github_for(settings: Settings) -> GitHubFor | None:
    """How a delivery gets its client: App auth, else token auth, else None (no credentials)."""
    from bot.github import AppAuth

    root = github_root(settings)
    if root is None:
        return None
    if isinstance(root.auth, AppAuth):
        app = root

        def for_app(installation: int | None, repo: str) -> GitHubPort:
            return app.for_installation(
                installation if installation is not None else app.installation_for_repo(repo)
            )

        return for_app
    return lambda installation, repo: root


def github_client(settings: Settings, repo: str) -> GitHubPort:
    """A client acting for `repo` (the CLI's); NoCredentials when none are configured."""
    make = github_for(settings)
    if make is None:
        raise NoCredentials()
    return make(None, repo)


def missing_credentials(settings: Settings) -> str | None:
    """What the configured LLM provider lacks to be called (a key, a URL), or None."""
    if settings.provider == "anthropic":
        key = settings.anthropic_api_key
        if key is None or not key.get_secret_value():
            return "ANTHROPIC_API_KEY is not set (the Anthropic provider needs it)"
        return None
    if not settings.llm_base_url:
        return "AGENTBOT_LLM_BASE_URL is not set (the openai-compatible provider needs it)"
    key = settings.llm_api_key
    if key is None or not key.get_secret_value():
        return (
            "AGENTBOT_LLM_API_KEY is not set (the openai-compatible provider needs it; any"
            " value for a server that checks none)"
        )
    return None


def llm_factory(settings: Settings) -> Callable[[str], LLM]:
    """Model name -> LLM adapter, from the provider settings (AGENTBOT_MODEL overrides)."""

    def make(model: str) -> LLM:
        from bot.llm import make_llm
        from bot.models import LLMProviderConfig

        chosen = settings.model or model
        if settings.provider == "anthropic":
            key = settings.anthropic_api_key
            cfg = LLMProviderConfig(
                provider="anthropic",
                model=chosen,
                api_key=key.get_secret_value() if key else "",
                base_url=settings.anthropic_base_url,
                connect_retry_seconds=settings.connect_retry_seconds,
            )
        else:
            if not settings.llm_base_url:
                raise ConfigError(
                    "the openai-compatible provider needs its API's URL: set"
                    " AGENTBOT_LLM_BASE_URL (e.g. https://api.openai.com/v1)",
                    path="AGENTBOT_LLM_BASE_URL",
                )
            key = settings.llm_api_key
            cfg = LLMProviderConfig(
                provider="custom",
                model=chosen,
                api_key=key.get_secret_value() if key else "",
                base_url=settings.llm_base_url,
                connect_retry_seconds=settings.connect_retry_seconds,
            )
        return make_llm(cfg)

    return make


def dress(github: GitHubPort, *, dry_run: bool, echo: Callable[[str], None]) -> GitHubPort:
    """The client a command writes through: one that records instead of sending in a dry run."""
    return RecordingGitHub(github, echo) if dry_run else github


def job_env(
    settings: Settings,
    github: GitHubPort,
    config: RepoConfig,
    *,
    checkout: Path | None = None,
    dry_run: bool = False,
    echo: Callable[[str], None] = print,
    sandbox: Sandbox | None = None,
) -> JobEnv:
    """The ports of one job run here, around `github` (`dress` it for a dry run first).

    In a dry run pushes are recorded too: the commits stay in the workspace. `sandbox` is
    the job's (`SandboxPolicy.open`); whoever runs the job closes it.
    """
    return JobEnv(
        github=github,
        config=config,
        llm_factory=llm_factory(settings),
        data_dir=settings.data_dir.resolve(),
        server_url=settings.github_server_url,
        checkout=checkout.resolve() if checkout else None,
        push=RecordingPush(echo) if dry_run else push_branch,
        echo=echo,
        sandbox=sandbox,
    )


def worker_deps(
    settings: Settings, queue: JobQueue, handlers: Mapping[JobKind, Handler]
) -> WorkerDeps:
    """What the App's workers need, from the settings (App mode: no sandbox, no job)."""
    from bot.sandbox import SandboxPolicy
    from bot.worker import WorkerDeps

    return WorkerDeps(
        queue=queue,
        github_for=github_for(settings),
        handlers=handlers,
        llm_factory=llm_factory(settings),
        data_dir=settings.data_dir,
        server_url=settings.github_server_url,
        sandbox=SandboxPolicy.for_settings(settings, app=True),
        missing_credentials=lambda: missing_credentials(settings),
        max_usd_per_day=settings.max_usd_per_day,
        max_usd_per_month=settings.max_usd_per_month,
    )
