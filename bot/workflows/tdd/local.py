"""`agentbot tdd` on a local directory: the same cycles, committed locally, nothing pushed.

An empty directory (or one that is not a repository yet) becomes a git repository with the
language's project skeleton as its first commit. Earlier sessions' cycles on the checked-out
branch are read back from its history, so a re-run goes on where the last one stopped.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.git import Workspace
from bot.models import KataDescription
from bot.ports import JobEnv
from bot.tdd.skeleton import is_empty, package_name, write_skeleton
from bot.tdd.state import TddState
from bot.tdd.suite import open_suite
from bot.workflows.steps.agents import job_budget, open_session
from bot.workflows.tdd.cycle import Engine


def run_local(
    env: JobEnv, root: Path, kata: KataDescription, *, language: str, max_cycles: int
) -> TddState:
    """Run a session on `root` (made a repository with a skeleton when empty)."""
    root.mkdir(parents=True, exist_ok=True)
    fresh = is_empty(root)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    ws = Workspace(root)
    if fresh:
        write_skeleton(root, language, kata.title)
        ws.commit(f"chore: {language} project skeleton for TDD")
    suite = open_suite(
        root, env.config.validation, data_dir=env.data_dir, clock=env.clock, sandbox=env.sandbox
    )
    engine = Engine(
        env=env,
        ws=ws,
        kata=kata,
        language=language,
        scope=package_name(kata.title).replace("_", "-"),
        base_sha=ws.head_sha(),
        resume_from="",
        suite=suite,
        budget=job_budget(env, "tester"),
        session=open_session(env, "local", f"tdd-{package_name(kata.title)}"),
        max_cycles=max_cycles,
    )
    return engine.run()
