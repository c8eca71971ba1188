"""Settings from the environment (DESIGN §2) and RepoConfig from `.github/agentbot.yml` (§4)."""

from bot.config.repo import REPO_CONFIG_PATH, RepoConfig
from bot.config.sections import (
    COMMAND_SIGILS,
    LOGIN,
    PERMISSION_RANK,
    Budget,
    Commands,
    Execution,
    FollowUpConfig,
    Labels,
    Limits,
    Permission,
    PlanConfig,
    PullRequestConfig,
    RoleConfig,
    SandboxConfig,
    ValidationConfig,
)
from bot.config.settings import CONNECT_RETRY_SECONDS, Settings, default_data_dir, load_settings

__all__ = [
    "COMMAND_SIGILS",
    "CONNECT_RETRY_SECONDS",
    "LOGIN",
    "PERMISSION_RANK",
    "REPO_CONFIG_PATH",
    "Budget",
    "Commands",
    "Execution",
    "FollowUpConfig",
    "Labels",
    "Limits",
    "Permission",
    "PlanConfig",
    "PullRequestConfig",
    "RepoConfig",
    "RoleConfig",
    "SandboxConfig",
    "Settings",
    "ValidationConfig",
    "default_data_dir",
    "load_settings",
]
