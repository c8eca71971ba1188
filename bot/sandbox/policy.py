"""How this process confines its jobs: which paths are hidden, App or Action mode, the mode.

Built once by the entry point (`SandboxPolicy.for_settings`); `open()` gives each job its
`Sandbox`, or refuses in App mode when this machine has none (unless AGENTBOT_SANDBOX=none).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import SandboxUnavailable
from bot.sandbox.job import NetworkMode, Sandbox
from bot.sandbox.status import SandboxStatus, sandbox_status

if TYPE_CHECKING:
    from bot.config import Settings

SQLITE = "sqlite:///"


@dataclass(frozen=True)
class SandboxPolicy:
    """How this process confines the jobs it runs; built once by the entry point."""

    root: Path
    """Where each job's HOME and /tmp are made (inside the data dir, which is hidden)."""
    hidden: tuple[Path, ...] = ()
    """Never visible inside: the data dir, the App key, the webhook secret, the queue..."""
    mode: str = "auto"
    """AGENTBOT_SANDBOX: `auto` (bubblewrap where it works) or `none` (unsafe)."""
    app: bool = False
    """App mode: a job is refused without a working sandbox, unless `mode` is `none`."""
    path: str | None = None
    """Where to look for bwrap (default: PATH)."""
    host_home: Path | None = None
    """The bot's own HOME: never shown; toolchains kept under it (~/.rustup) are."""

    def status(self) -> SandboxStatus:
        """Which sandbox jobs get, and why."""
        return sandbox_status(self.mode, self.path)

    def open(self, network: NetworkMode = "setup") -> Sandbox:
        """A job's sandbox; SandboxUnavailable in App mode when there is none."""
        status = self.status()
        if not status.ok and self.app and self.mode != "none":
            raise SandboxUnavailable(
                f"agentbot refuses to run a job without a sandbox in App mode: {status.reason}."
                " Install bubblewrap where the workers run (the README's Security model says"
                " how), or set AGENTBOT_SANDBOX=none to run jobs unsandboxed (unsafe: the agent"
                " can then read the App key, the queue and other workspaces)",
                reason=status.reason,
            )
        return Sandbox(status, policy=self, network=network)

    @classmethod
    def for_settings(
        cls, settings: Settings, *, app: bool, runner_temp: str | None = None
    ) -> SandboxPolicy:
        """The policy for this process's settings: the data dir, the App key, the webhook
        secret and the SQLite queue hidden, and in Actions the runner's temp folder (its
        file commands, the event payload, actions/checkout's credentials)."""
        data = settings.data_dir.resolve()
        hidden = [data, data / "webhook-secret", data / "jobs-password"]
        if settings.github_app_private_key_path is not None:
            hidden.append(settings.github_app_private_key_path.resolve())
        if settings.queue.startswith(SQLITE):
            db = Path(settings.queue.removeprefix(SQLITE)).resolve()
            hidden += [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))]
        if runner_temp:
            hidden.append(Path(runner_temp).resolve())
        return cls(
            root=data / "sandbox",
            hidden=tuple(hidden),
            mode=settings.sandbox,
            app=app,
            host_home=Path.home(),
        )
