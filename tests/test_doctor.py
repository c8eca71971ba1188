"""`agentbot doctor`: one line per part of the setup; exit 0 only when every part passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from bot.queue.sqlite import SqliteQueue
from tests.fakes.github import FakeGitHub
from tests.test_cli_bad_input import UNPRIVILEGED
from tests.test_cli_run import AGENTBOT
from tests.test_defaults import clean_env, closed_port


def doctor(tmp: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AGENTBOT, "doctor", *args],
        cwd=tmp,
        env=clean_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def lines(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """{part: 'ok' | 'FAIL'} from the report."""
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        status, _, rest = line.partition(" ")
        if status in ("ok", "FAIL"):
            out[rest.strip().split(":")[0]] = status
    return out


def test_a_fresh_environment_lists_what_is_missing(tmp_path: Path) -> None:
    proc = doctor(tmp_path, {})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert lines(proc)["llm"] == "FAIL" and lines(proc)["github"] == "FAIL"
    assert "ANTHROPIC_API_KEY is not set" in proc.stdout
    assert "no credentials: set GITHUB_TOKEN" in proc.stdout
    data = tmp_path / "home" / ".local" / "share" / "agentbot"
    assert f"ok    data dir: {data} is writable" in proc.stdout
    assert "repo config" not in proc.stdout  # not run in a checkout
    assert proc.stderr == ""


def test_with_the_fakes_configured_every_check_passes(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        proc = doctor(
            tmp_path,
            {
                "GITHUB_TOKEN": "ghs_testtoken123456789",
                "GITHUB_API_URL": gh.url,
                "ANTHROPIC_API_KEY": "sk-ant-test-key-0000",
                "AGENTBOT_DATA_DIR": str(tmp_path / "data"),
                "AGENTBOT_SANDBOX": "none",  # the machine may lack bwrap; the choice is a pass
            },
        )
        assert [c.path for c in gh.calls] == ["/rate_limit"]
    assert proc.returncode == 0, proc.stdout
    assert set(lines(proc)) == {"llm", "github", "data dir", "queue", "sandbox", "job timeout"}
    assert set(lines(proc).values()) == {"ok"}
    assert "as token (4999/5000 requests left this hour)" in proc.stdout


def test_app_auth_is_checked_with_the_apps_own_token(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        pem = gh.install_app("octo", slug="agentbot-test")
        proc = doctor(
            tmp_path,
            {
                "GITHUB_APP_ID": "4242",
                "GITHUB_APP_PRIVATE_KEY": pem,
                "GITHUB_API_URL": gh.url,
                "ANTHROPIC_API_KEY": "sk-ant-test-key-0000",
                "AGENTBOT_SANDBOX": "none",
            },
        )
    assert lines(proc)["github"] == "ok", proc.stdout
    assert "as GitHub App agentbot-test (id 4242)" in proc.stdout


def test_an_unreachable_github_is_named_within_seconds(tmp_path: Path) -> None:
    port = closed_port()
    started = time.monotonic()
    proc = doctor(
        tmp_path,
        {"GITHUB_TOKEN": "ghs_testtoken123456789", "GITHUB_API_URL": f"http://127.0.0.1:{port}"},
    )
    assert time.monotonic() - started < 20
    assert proc.returncode == 1
    assert f"FAIL  github: cannot reach 127.0.0.1:{port}: ConnectError" in proc.stdout


def test_a_broken_repo_config_fails_naming_key_and_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".github" / "agentbot.yml").write_text("budget:\n  max_usd_per_jobb: 2\n")
    proc = doctor(tmp_path, {"AGENTBOT_SANDBOX": "none"}, "--repo", str(repo))
    assert lines(proc)["repo config"] == "FAIL"
    assert "budget.max_usd_per_jobb (line 2): unknown key" in proc.stdout


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgresql://agent:pw-Xq7[z@[bad/db", "pw-Xq7[z"),
        ("postgresql://agent:se%cretXq7@127.0.0.1:5432/test", "se%cretXq7"),
        ("postgresql://agent:sec retXq7@127.0.0.1:5432/test", "sec retXq7"),
        ("postgresql://agent:Xq7pw@127.0.0.1:notaport/test", "Xq7pw"),
    ],
)
def test_a_bad_queue_url_is_one_line_without_its_password(
    tmp_path: Path, url: str, password: str
) -> None:
    proc = doctor(tmp_path, {"AGENTBOT_QUEUE": url})
    out = proc.stdout + proc.stderr
    assert "internal error" not in out
    [line] = [x for x in proc.stdout.splitlines() if "queue:" in x]
    assert line.startswith("FAIL  queue:")
    for part in {password, *password.split(), password.replace("%", "")}:
        assert part not in out, line
    assert "Xq7" not in out, line


def test_a_bad_job_timeout_is_a_failed_check(tmp_path: Path) -> None:
    proc = doctor(tmp_path, {"AGENTBOT_JOB_TIMEOUT": "an hour"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert lines(proc)["job timeout"] == "FAIL"
    assert "AGENTBOT_JOB_TIMEOUT must be a number of seconds" in proc.stdout
    assert lines(doctor(tmp_path, {}))["job timeout"] == "ok"


def test_a_repo_named_with_repo_that_is_no_checkout_fails(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = doctor(tmp_path, {}, "--repo", str(plain))
    assert lines(proc)["repo config"] == "FAIL", proc.stdout
    assert "not a git checkout" in proc.stdout


def test_a_queue_not_made_yet_passes_and_is_not_created(tmp_path: Path) -> None:
    db = tmp_path / "q.db"  # a set queue's folder must exist (serve refuses it otherwise)
    proc = doctor(tmp_path, {"AGENTBOT_QUEUE": f"sqlite:///{db}"})
    [line] = [x for x in proc.stdout.splitlines() if "queue:" in x]
    assert line == f"ok    queue: there is no queue at {db} yet: `agentbot serve` creates it"
    assert not db.exists()


def test_a_queue_serve_could_not_create_fails(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    data = tmp_path / "a-file" / "sub"  # the default queue, whose folder serve would make
    db = data / "agentbot.db"
    proc = doctor(tmp_path, {"AGENTBOT_DATA_DIR": str(data)})
    [line] = [x for x in proc.stdout.splitlines() if "queue:" in x]
    assert line == (
        f"FAIL  queue: there is no queue at {db}, and `agentbot serve` could not create it:"
        f" {tmp_path / 'a-file'} is not a folder"
    )


@pytest.mark.skipif(
    bool(UNPRIVILEGED) and shutil.which("setpriv") is None,
    reason="running as root and util-linux's setpriv is missing",
)
def test_a_queue_that_only_reads_fails_naming_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    SqliteQueue(db).close()
    db.chmod(0o444)
    proc = subprocess.run(
        [*UNPRIVILEGED, AGENTBOT, "doctor"],
        cwd=tmp_path,
        env=clean_env(tmp_path, AGENTBOT_QUEUE=f"sqlite:///{db}"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    [line] = [x for x in proc.stdout.splitlines() if "queue:" in x]
    assert line.startswith(f"FAIL  queue: the queue {db} is not writable by uid"), line
    assert proc.returncode == 1


NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and util-linux's setpriv to run as another user",
)
def test_a_data_dir_this_user_cannot_enter_is_named_by_every_command() -> None:
    """A 0700 folder of root's, the commands run as uid 65534 (nobody)."""
    top = Path(tempfile.mkdtemp(prefix="agentbot-closed-"))  # pytest's tmp is 0700 root
    try:
        top.chmod(0o755)
        data = top / "data"
        data.mkdir(mode=0o700)
        SqliteQueue(data / "agentbot.db").close()
        env = clean_env(top, AGENTBOT_DATA_DIR=str(data))
        said = f"cannot look into the folder {data} as uid 65534"
        for command in ("jobs", "stats", "usage", "doctor"):
            proc = subprocess.run(
                [*NOBODY, AGENTBOT, command],
                cwd=top,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
            if command == "doctor":  # one FAIL line, and the checks after it still run
                [line] = [x for x in proc.stdout.splitlines() if "queue:" in x]
                assert line.startswith(f"FAIL  queue: AGENTBOT_DATA_DIR: {said}"), line
                assert "job timeout:" in proc.stdout and proc.returncode == 1
            else:
                assert proc.returncode == 2, proc.stderr
                assert proc.stderr.startswith(f"error: AGENTBOT_DATA_DIR: {said}"), proc.stderr
                assert len(proc.stderr.splitlines()) == 1
    finally:
        shutil.rmtree(top)
