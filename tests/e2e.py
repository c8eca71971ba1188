"""A whole world for end-to-end tests: fake GitHub, scripted Anthropic, a real bare remote."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.clock import Clock, FakeClock
from bot.config import RepoConfig
from bot.llm import AnthropicLLM
from bot.ports import JobEnv
from bot.ports.recording import dry_run as recording
from tests.fakes.anthropic import FakeAnthropic, Step
from tests.fakes.github import FakeGitHub
from tests.fakes.gitrepo import make_github_remote, server_url

REPO = "octo/calc"

BUGGY_FILES: dict[str, str] = {
    "calc.py": 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a - b\n',
    "tests/test_calc.py": (
        "from calc import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
    ),
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "tests/__init__.py": "",
}

FIX_EDIT = {
    "command": "str_replace",
    "path": "calc.py",
    "old_str": "return a - b",
    "new_str": "return a + b",
}

TEST_EDIT = {
    "command": "str_replace",
    "path": "tests/test_calc.py",
    "old_str": "assert add(2, 3) == 5",
    "new_str": "assert add(2, 3) == 5\n    assert add(-1, 1) == 0",
}
"""The regression test that goes with FIX_EDIT (an OK finish needs one for a code change)."""


def fast_validation_yaml(extra: str = "") -> str:
    """Repo config with explicit stage commands on this interpreter (no per-repo venv setup)."""
    py = sys.executable
    return (
        "validation:\n"
        "  setup: null\n"
        f"  format: {py} -m ruff format --check .\n"
        f"  lint: {py} -m ruff check .\n"
        "  typecheck: null\n"
        f"  test: {py} -m pytest -q -p no:cacheprovider\n"
        "  fix_rounds: 1\n" + extra
    )


@dataclass
class World:
    """Everything an end-to-end test touches, wired together."""

    tmp: Path
    clock: FakeClock
    gh: FakeGitHub
    llm: FakeAnthropic
    remote: Path
    echoed: list[str] = field(default_factory=list)

    def env(
        self, config: RepoConfig | None = None, *, dry_run: bool = False, clock: Clock | None = None
    ) -> JobEnv:
        """A JobEnv wired to the fakes; `clock` (default the fake one) drives budgets and logs."""
        cfg = config or RepoConfig.from_text(fast_validation_yaml())
        env = JobEnv(
            github=self.gh.client(clock=self.clock),
            config=cfg,
            llm_factory=lambda model: AnthropicLLM(
                model=model, api_key="sk-test", base_url=self.llm.base_url, clock=self.clock
            ),
            data_dir=self.tmp / "data",
            server_url=server_url(self.tmp / "server"),
            clock=clock or self.clock,
            echo=self.echoed.append,
        )
        return recording(env) if dry_run else env

    def llm_requests_text(self) -> str:
        """Every request body the fake LLM received, as one string."""
        return "\n".join(r.body.decode("utf-8", "replace") for r in self.llm.requests)


@contextmanager
def world(
    tmp: Path,
    script: Sequence[Step],
    *,
    files: Mapping[str, str] = BUGGY_FILES,
    repo_yaml: str | None = None,
) -> Iterator[World]:
    """Start the fakes with `script` and a remote holding `files`."""
    clock = FakeClock()
    remote = make_github_remote(tmp / "server", REPO, files)
    with FakeGitHub(clock=clock) as gh, FakeAnthropic(list(script)) as llm:
        gh.add_repo(REPO, clone_url=remote.as_uri())
        if repo_yaml is not None:
            gh.set_file(REPO, ".github/agentbot.yml", repo_yaml)
        yield World(tmp=tmp, clock=clock, gh=gh, llm=llm, remote=remote)


def body_of(call: Any) -> dict[str, Any]:
    """A recorded call's JSON body as a dict."""
    return dict(call.json or {})
