"""The job sandbox (DESIGN §13): bubblewrap around everything the repository or model runs.

    policy = SandboxPolicy(root=data_dir / "sandbox", hidden=(data_dir, key_path), app=True)
    with policy.open(config.sandbox.network) as sandbox:    # one per job; killed at the end
        proc = sandbox.popen(["bash", "-c", cmd], cwd=ws, env=env, writable=[ws])

`sandbox_status()` says which sandbox this machine gives and why (for `agentbot doctor`).
"""

from bot.sandbox.job import NetworkMode, Sandbox
from bot.sandbox.policy import SandboxPolicy
from bot.sandbox.status import SandboxKind, SandboxStatus, sandbox_status

__all__ = [
    "NetworkMode",
    "Sandbox",
    "SandboxKind",
    "SandboxPolicy",
    "SandboxStatus",
    "sandbox_status",
]
