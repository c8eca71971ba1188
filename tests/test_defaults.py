"""Production defaults: configs from an empty environment, absolute paths, bounded failures."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.config import Settings
from bot.errors import ConfigError, GitHubError, LLMError
from bot.github import AppAuth, GitHub, TokenAuth
from bot.llm import AnthropicLLM, OpenAICompatLLM, make_llm
from bot.models import LLMProviderConfig
from bot.models.llm import PROVIDER_URLS
from bot.wiring import llm_factory
from tests.e2e import BUGGY_FILES, REPO, fast_validation_yaml, world
from tests.fakes.github.keys import app_key
from tests.fakes.gitrepo import branch_sha, clone_branch, server_url
from tests.test_cli_run import actions_env, labeled_payload

AGENTBOT = str(Path(sys.executable).with_name("agentbot"))
PROVIDERS = ["anthropic", "openai", "perplexity", "deepseek", "iflow"]


def closed_port() -> int:
    """A local port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any agentbot, GitHub, LLM or proxy variable."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_", "XDG_"))
        and k.lower() not in ("https_proxy", "http_proxy", "all_proxy", "no_proxy")
    }
    env.update(HOME=str(tmp / "home"), **extra)
    return env


@pytest.fixture
def empty_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in list(os.environ):
        if name.startswith(("GITHUB_", "AGENTBOT_", "ANTHROPIC_", "XDG_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_builds_with_its_default_url(provider: str) -> None:
    cfg = LLMProviderConfig(provider=provider, model="m", api_key="k")
    assert cfg.base_url == PROVIDER_URLS[provider]
    llm = make_llm(cfg)
    assert isinstance(llm, AnthropicLLM if provider == "anthropic" else OpenAICompatLLM)


def test_settings_from_an_empty_environment_build_a_real_client(empty_env: Path) -> None:
    settings = Settings()
    llm = llm_factory(settings)("claude-sonnet-4-6")
    assert isinstance(llm, AnthropicLLM) and llm.host == "api.anthropic.com"
    assert settings.data_dir == empty_env / ".local" / "share" / "agentbot"
    assert settings.queue == f"sqlite:///{settings.data_dir}/agentbot.db"
    assert settings.connect_retry_seconds <= 30


def test_defaults_are_absolute_wherever_started(
    empty_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTBOT_DATA_DIR", "rel/data")
    settings = Settings()
    assert settings.data_dir == tmp_path / "rel" / "data"
    assert settings.queue == f"sqlite:///{tmp_path}/rel/data/agentbot.db"
    monkeypatch.delenv("AGENTBOT_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Settings().data_dir == tmp_path / "xdg" / "agentbot"


def test_openai_compatible_without_a_url_names_the_variable(
    empty_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTBOT_PROVIDER", "openai-compatible")
    with pytest.raises(ConfigError) as info:
        llm_factory(Settings())("m")
    assert info.value.path == "AGENTBOT_LLM_BASE_URL"


def test_an_unreachable_llm_is_retried_briefly_then_named() -> None:
    clock = FakeClock()
    llm = AnthropicLLM(
        model="m",
        api_key="k",
        base_url=f"http://127.0.0.1:{closed_port()}",
        clock=clock,
        max_retries=50,
        connect_retry_seconds=5,
    )
    with pytest.raises(LLMError, match=r"cannot reach 127\.0\.0\.1: ConnectError"):
        llm.complete(system="", messages=[{"role": "user", "content": "x"}], tools=[])
    assert clock.sleeps == [1.0, 2.0]  # 3 s slept; one more (4 s) would pass the 5 s bound


def test_an_unreachable_github_is_retried_briefly_then_named() -> None:
    clock = FakeClock()
    port = closed_port()
    client = GitHub(
        auth=TokenAuth("ghs_x"), api_url=f"http://127.0.0.1:{port}", clock=clock
    )  # the long 600 s bound stays for rate limits and 5xx
    with pytest.raises(GitHubError) as info:
        client.get_issue(REPO, 1)
    assert sum(clock.sleeps) <= 20
    assert f"cannot reach 127.0.0.1:{port}: ConnectError" in str(info.value)
    assert "installed" not in str(info.value)


def test_an_unreachable_github_is_not_blamed_on_the_app_install() -> None:
    clock = FakeClock()
    port = closed_port()
    pem = app_key("unreachable").private_pem
    app = GitHub(auth=AppAuth("4242", pem), api_url=f"http://127.0.0.1:{port}", clock=clock)
    with pytest.raises(GitHubError) as info:
        app.for_installation(777).get_issue(REPO, 1)  # the token request cannot connect
    assert f"cannot reach 127.0.0.1:{port}" in str(info.value)
    assert "installed" not in str(info.value) and sum(clock.sleeps) <= 20


def test_fix_with_the_llm_unreachable_fails_in_bounded_time(tmp_path: Path) -> None:
    """No base URL, the real Anthropic host behind a dead proxy: named, exit 1, bounded."""
    with world(tmp_path, [], repo_yaml=fast_validation_yaml()) as w:
        w.gh.add_issue(REPO, title="add is wrong", body="add(2, 3) returns -1")
        env = clean_env(
            tmp_path,
            GITHUB_TOKEN="ghs_testtoken123456789",
            GITHUB_API_URL=w.gh.url,
            GITHUB_SERVER_URL=server_url(tmp_path / "server"),
            ANTHROPIC_API_KEY="sk-ant-test-key-0000",
            AGENTBOT_DATA_DIR=str(tmp_path / "data"),
            HTTPS_PROXY=f"http://127.0.0.1:{closed_port()}",
            NO_PROXY="127.0.0.1,localhost",
        )
        started = time.monotonic()
        proc = subprocess.run(
            [AGENTBOT, "fix", f"{REPO}#1"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        elapsed = time.monotonic() - started
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "cannot reach api.anthropic.com" in out
    assert "RecursionError" not in out and "Traceback" not in out
    assert elapsed <= 40, elapsed


def test_a_cli_command_with_github_unresolvable_fails_in_bounded_time(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path,
        GITHUB_TOKEN="ghs_testtoken123456789",
        GITHUB_API_URL="https://api.github.invalid",
        ANTHROPIC_API_KEY="sk-ant-test-key-0000",
        AGENTBOT_DATA_DIR=str(tmp_path / "data"),
    )
    started = time.monotonic()
    proc = subprocess.run(
        [AGENTBOT, "fix", f"{REPO}#1"], env=env, capture_output=True, text=True, timeout=90
    )
    elapsed = time.monotonic() - started
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "cannot reach api.github.invalid" in out
    assert "Traceback" not in out and "installed" not in out
    assert elapsed <= 40, elapsed


def _labelled_run(
    tmp: Path, label: str, *, sha: bool
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    files = {**BUGGY_FILES, ".github/agentbot.yml": "labels:\n  fix: please-fix\n"}
    with world(tmp, [], files=files) as w:
        checkout = clone_branch(w.remote, "main", tmp / "checkout")
        env = actions_env(tmp, w.gh.url, w.llm.base_url, "issues", labeled_payload(label))
        env["GITHUB_REF"] = "refs/heads/main"
        if sha:
            env["GITHUB_SHA"] = str(branch_sha(w.remote, "main"))
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
        )
        return proc, [f"{c.method} {c.path}" for c in w.gh.calls]


def test_run_on_a_label_that_starts_nothing_asks_github_nothing(tmp_path: Path) -> None:
    """The config is read at GITHUB_SHA from the checkout: its renamed label is honoured."""
    proc, calls = _labelled_run(tmp_path, "agent-fix", sha=True)
    assert proc.returncode == 78, proc.stdout + proc.stderr
    assert "'please-fix' fixes" in proc.stdout
    assert calls == []


def test_without_the_runners_commit_the_config_comes_from_github(tmp_path: Path) -> None:
    proc, calls = _labelled_run(tmp_path, "agent-fix", sha=False)
    assert proc.returncode == 78 and "'please-fix' fixes" in proc.stdout
    assert calls == ["GET /repos/octo/calc/contents/.github/agentbot.yml"]


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_data_dir_or_queue_is_unset_not_the_current_folder(
    empty_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, blank: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTBOT_DATA_DIR", blank)
    monkeypatch.setenv("AGENTBOT_QUEUE", blank)
    settings = Settings()
    assert settings.data_dir == empty_env / ".local" / "share" / "agentbot"
    assert settings.queue == f"sqlite:///{settings.data_dir}/agentbot.db"


def test_serve_with_a_blank_data_dir_leaves_the_current_folder_alone(tmp_path: Path) -> None:
    from tests.test_app_secrets import _serve_briefly

    err = _serve_briefly(tmp_path, AGENTBOT_DATA_DIR="", AGENTBOT_QUEUE="")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"], err
    assert (tmp_path / "home" / ".local" / "share" / "agentbot" / "webhook-secret").exists()
