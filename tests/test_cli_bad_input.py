"""A newcomer's bad input: one line naming the variable or file and the fix, exit 2."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import typer

from bot.queue.sqlite import SqliteQueue
from tests.test_cli_errors import AGENTBOT, run


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def _one_clear_line(proc: subprocess.CompletedProcess[str], *names: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    for name in names:
        assert name in proc.stderr, proc.stderr


def test_an_app_key_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_bytes(b"\xff\xfe\x00 not a key\n")
    proc = run(
        tmp_path,
        "stats",
        "--backfill",
        "--repo",
        "octo/app",
        GITHUB_APP_ID="1",
        GITHUB_APP_PRIVATE_KEY_PATH=str(key),
    )
    _one_clear_line(proc, "GITHUB_APP_PRIVATE_KEY_PATH", "UTF-8")


def test_implement_names_a_tasks_md_that_is_not_utf8(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.md"
    tasks.write_bytes(b"# Tasks\n\n- [ ] T001 \xff\xfe\n")
    proc = run(tmp_path, "implement", str(tasks), "--repo", str(tmp_path))
    _one_clear_line(proc, f"{tasks}:3", "UTF-8")


def test_refuel_refuses_an_infinite_budget(tmp_path: Path) -> None:
    proc = run(
        tmp_path, "refuel", "octo/app", "--max-usd", "inf", ANTHROPIC_API_KEY="k", GITHUB_TOKEN="t"
    )
    assert proc.returncode == 2, proc.stderr
    assert "--max-usd" in proc.stderr and "Traceback" not in proc.stderr


def test_a_data_dir_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    for command in ("usage", "stats", "jobs", "serve"):
        proc = run(tmp_path, command, AGENTBOT_DATA_DIR="/proc/x")
        _one_clear_line(proc, "/proc/x")


def test_a_queue_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("these are my notes, not a database\n" * 100)
    proc = run(tmp_path, "jobs", AGENTBOT_QUEUE=f"sqlite:///{bogus}")
    _one_clear_line(proc, "AGENTBOT_QUEUE", str(bogus))


def test_serve_with_a_bad_queue_writes_nothing(tmp_path: Path) -> None:
    proc = run(tmp_path, "serve", "--port", _free_port(), AGENTBOT_QUEUE="garbage")
    _one_clear_line(proc, "AGENTBOT_QUEUE")
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())


def test_a_postgres_password_that_is_not_percent_encoded_is_not_printed(tmp_path: Path) -> None:
    for password in ("s3cr%t", "pa ss word"):
        url = f"postgresql://bot:{password}@127.0.0.1:1/agentbot"
        proc = run(tmp_path, "jobs", AGENTBOT_QUEUE=url)
        _one_clear_line(proc, "AGENTBOT_QUEUE", "percent-encode")
        assert password not in proc.stderr + proc.stdout, proc.stderr


def test_a_refused_postgres_connection_is_one_line_without_the_password(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    url = f"postgresql://bot:hunter2secret@127.0.0.1:{port}/agentbot"
    proc = run(tmp_path, "jobs", AGENTBOT_QUEUE=url)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "cannot open the PostgreSQL queue" in proc.stderr and "refused" in proc.stderr
    assert "hunter2secret" not in proc.stderr and "Traceback" not in proc.stderr


def test_serve_and_worker_refuse_infinite_times(tmp_path: Path) -> None:
    for args in (
        ("serve", "--lease-seconds", "inf"),
        ("serve", "--poll-seconds", "inf"),
        ("serve", "--header-timeout", "inf"),
        ("serve", "--body-timeout", "1e999"),
        ("worker", "--lease-seconds", "inf"),
    ):
        proc = run(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert args[1] in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert not (tmp_path / "data").exists(), args


def test_serve_names_a_stored_secret_it_cannot_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for shape in ("not text", "a folder", "empty"):
        secret = data / "webhook-secret"
        if secret.is_dir():
            secret.rmdir()
        elif secret.exists():
            secret.unlink()
        if shape == "not text":
            secret.write_bytes(b"\xff\xfe\n")
        elif shape == "a folder":
            secret.mkdir()
        else:
            secret.write_text("")
        proc = run(tmp_path, "serve", "--port", _free_port())
        _one_clear_line(proc, str(secret), "delete it")
        assert proc.stderr.count(str(secret)) == 1, proc.stderr


def test_a_queue_url_is_shown_without_its_password_wherever_it_is() -> None:
    from bot.db_url import safe_url

    for url in (
        "postgresql://bot:hunter2@db.example/agentbot",
        "postgresql://bot@db.example/agentbot?password=hunter2&schema=jobs",
        "postgresql://bot@db.example/agentbot?sslmode=require&PASSWORD=hunter2",
    ):
        shown = safe_url(url)
        assert "hunter2" not in shown and "[REDACTED]" in shown, shown
        assert shown.startswith("postgresql://bot") and "db.example/agentbot" in shown, shown
    assert "schema=jobs" in safe_url("postgresql://bot@h/db?password=x&schema=jobs")
    for url in ("sqlite:////srv/agentbot.db", "sqlite:///agentbot.db", "postgresql://bot@h/db"):
        assert safe_url(url) == url


def test_a_payload_nested_past_the_parser_is_bad_input(tmp_path: Path) -> None:
    payload = tmp_path / "deep.json"
    payload.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    proc = run(tmp_path, "route", "--event-name", "issues", "--payload", str(payload))
    _one_clear_line(proc, str(payload), "nested")
    proc = run(
        tmp_path,
        "run",
        "--repo",
        str(tmp_path),
        GITHUB_EVENT_NAME="issues",
        GITHUB_EVENT_PATH=str(payload),
    )
    _one_clear_line(proc, str(payload), "nested")


def test_a_checkout_without_a_remote_is_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    proc = run(tmp_path, "cover", "--repo", str(repo), "--base", "main")
    _one_clear_line(proc, str(repo), "origin")


def test_a_short_postgres_password_does_not_mangle_the_message(tmp_path: Path) -> None:
    """ "ion" hidden inside "connection" would read `connect[REDACTED]`: garbled, and telling."""
    proc = run(tmp_path, "jobs", AGENTBOT_QUEUE="postgresql://u:ion@127.0.0.1:1/db")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "connection" in proc.stderr and "[REDACTED]" not in proc.stderr, proc.stderr


def test_a_github_app_id_that_is_no_id_is_named(tmp_path: Path) -> None:
    for args in (("doctor",), ("serve", "--port", _free_port())):
        for value in ("abc", "   ", "ghp_" + "S3CRET" * 6):
            proc = run(tmp_path, *args, GITHUB_APP_ID=value)
            _one_clear_line(proc, "GITHUB_APP_ID", f"{len(value)} characters")
            # a token pasted into the wrong variable is not echoed to a log
            assert "S3CRET" not in proc.stderr
            data = tmp_path / "data"
            assert not data.exists() or not any(data.iterdir()), (args, value)


def test_implement_refuses_a_pr_number_below_1(tmp_path: Path) -> None:
    (tmp_path / "tasks.md").write_text("## Phase 1\n- [ ] T001 Create a\n")
    for number in ("-1", "0"):
        proc = run(tmp_path, "implement", "tasks.md", "--pr", number, "--repo", str(tmp_path))
        assert proc.returncode == 2, proc.stderr
        assert "--pr" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_refuel_refuses_an_empty_label(tmp_path: Path) -> None:
    for label in ("", "  "):
        proc = run(
            tmp_path,
            "refuel",
            "octo/app",
            "--label",
            label,
            ANTHROPIC_API_KEY="k",
            GITHUB_TOKEN="t",
            GITHUB_API_URL="http://127.0.0.1:9",
            AGENTBOT_CONNECT_RETRY_SECONDS="0.1",
        )
        _one_clear_line(proc, "--label")


def _pushed_checkout(tmp_path: Path, origin: str) -> Path:
    """A clean checkout whose branch is pushed to a local bare remote, then given `origin`."""
    bare, repo = tmp_path / "bare.git", tmp_path / "repo"
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@example.com"]
    subprocess.run([*git, "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    subprocess.run([*git, "-C", str(repo), "remote", "add", "origin", str(bare)], check=True)
    subprocess.run([*git, "-C", str(repo), "push", "-q", "origin", "main"], check=True)
    subprocess.run([*git, "-C", str(repo), "remote", "set-url", "origin", origin], check=True)
    return repo


def _cover_dry_run(work: Path, repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`agentbot cover --dry-run` on `repo`, with GitHub on a closed port."""
    return run(
        work,
        "cover",
        "--repo",
        str(repo),
        "--dry-run",
        ANTHROPIC_API_KEY="k",
        GITHUB_TOKEN="t",
        GITHUB_API_URL="http://127.0.0.1:9",
        AGENTBOT_CONNECT_RETRY_SECONDS="0.1",
        **env,
    )


def test_an_origin_that_is_not_on_github_is_named(tmp_path: Path) -> None:
    for i, where in enumerate(("https://gitlab.com/a/b.git", "bare.git")):
        work = tmp_path / str(i)
        work.mkdir()
        origin = where if "://" in where else str(work / where)  # the local remote itself
        proc = _cover_dry_run(work, _pushed_checkout(work, origin))
        _one_clear_line(proc, origin, "not on GitHub", "--github-repo", "GITHUB_SERVER_URL")


@pytest.mark.parametrize(
    ("url", "servers", "said"),
    [
        ("https://github.com.evil.com/a/b", ["https://github.com"], "not on GitHub"),
        ("https://evil.com/github.com/a/b", ["https://github.com"], "not on GitHub"),
        ("git@gitlab.com:a/b.git", ["https://github.com"], "not on GitHub"),
        ("https://github.com/a", ["https://github.com"], "cannot tell OWNER/REPO"),
        ("https://github.com/a/b/c", ["https://github.com"], "cannot tell OWNER/REPO"),
        ("https://github.com/", ["https://github.com"], "cannot tell OWNER/REPO"),
    ],
)
def test_an_origin_elsewhere_or_without_owner_and_name_is_refused(
    tmp_path: Path, url: str, servers: list[str], said: str
) -> None:
    from bot.cli._common import repo_from_origin

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", url], check=True)
    with pytest.raises(typer.Exit):
        repo_from_origin(repo, servers)


def test_credentials_in_an_origin_or_server_url_stay_out_of_the_message(tmp_path: Path) -> None:
    from bot.secrets import without_credentials

    assert without_credentials("https://user:p@SECRET1@gitlab.com/a/b.git") == (
        "https://gitlab.com/a/b.git"
    )
    assert without_credentials("https://u:SECRET2@ghe.example") == "https://ghe.example"
    work = tmp_path / "w"
    work.mkdir()
    origin = "https://user:p@SECRET1@gitlab.com/a/b.git"
    repo = _pushed_checkout(work, origin)
    proc = _cover_dry_run(work, repo, GITHUB_SERVER_URL="https://u:SECRET2@ghe.example")
    _one_clear_line(proc, "not on GitHub")
    assert "SECRET" not in proc.stderr


def test_an_origin_on_github_names_its_repository(tmp_path: Path) -> None:
    from bot.cli._common import repo_from_origin

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "x"], check=True)
    for url, server in (
        ("https://github.com/octo/app.git", "https://github.com"),
        ("git@github.com:octo/app.git", "https://github.com"),
        ("ssh://git@github.com/octo/app", "https://github.com"),
        ("https://ghe.example/octo/app", "https://ghe.example/"),
        ("https://www.github.com/octo/app/", "https://github.com"),
        ("ssh://git@ssh.github.com:443/octo/app.git", "https://github.com"),
        ("https://GitHub.com/octo/app", "https://github.com"),
        (f"{(tmp_path / 'srv').as_uri()}/octo/app.git", (tmp_path / "srv").as_uri()),
    ):
        subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin", url], check=True)
        assert repo_from_origin(repo, [server]) == "octo/app", url


def test_a_ghes_api_url_alone_is_enough_to_know_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bot.cli._common import github_servers
    from bot.config import load_settings

    for name in ("GITHUB_SERVER_URL", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    assert github_servers(load_settings()) == ["https://github.com"]
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example.com/api/v3")
    assert github_servers(load_settings()) == ["https://github.com", "https://ghe.example.com"]


# Root writes whatever the modes say: drop every capability (a service user has none).
UNPRIVILEGED = (
    ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all"] if os.geteuid() == 0 else []
)


@pytest.mark.skipif(
    bool(UNPRIVILEGED) and shutil.which("setpriv") is None,
    reason="running as root and util-linux's setpriv is missing",
)
@pytest.mark.parametrize(
    ("locked", "command"),
    [
        ("file", ("serve", "--port")),
        ("file", ("worker",)),
        ("folder", ("serve", "--port")),
        ("folder", ("worker",)),
        ("folder", ("jobs",)),
        ("payload file", ("worker",)),
    ],
)
def test_a_queue_that_is_not_writable_is_named_with_what_to_do(
    tmp_path: Path, locked: str, command: tuple[str, ...]
) -> None:
    folder = tmp_path / "queue"
    db = folder / "q.db"
    queue = SqliteQueue(db)
    queue.enqueue("d-1", "ping", b"{}")
    queue.close()
    modes = {"file": (db, 0o444), "folder": (folder, 0o555)}
    path, mode = modes.get(locked, (folder / "q.db.payloads", 0o444))
    path.chmod(mode)
    args = [*command, _free_port()] if command[-1] == "--port" else list(command)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        AGENTBOT_DATA_DIR=str(tmp_path / "data"),
        AGENTBOT_QUEUE=f"sqlite:///{db}",
    )
    proc = subprocess.run(
        [*UNPRIVILEGED, AGENTBOT, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    _one_clear_line(proc, f"the queue {db} is not writable by uid {os.geteuid()}", "AGENTBOT_QUEUE")
    assert "give that user write access" in proc.stderr, proc.stderr


@pytest.mark.skipif(
    bool(UNPRIVILEGED) and shutil.which("setpriv") is None,
    reason="running as root and util-linux's setpriv is missing",
)
def test_a_read_only_queue_file_still_lists_its_jobs(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    queue = SqliteQueue(db)
    queue.enqueue("d-1", "ping", b"{}")
    queue.close()
    db.chmod(0o444)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    env.update(HOME=str(tmp_path / "home"), AGENTBOT_QUEUE=f"sqlite:///{db}")
    proc = subprocess.run(
        [*UNPRIVILEGED, AGENTBOT, "jobs", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"id": "d-1"' in proc.stdout


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_set_queue_in_a_missing_folder_is_named_not_made(tmp_path: Path, command: str) -> None:
    """A typo in AGENTBOT_QUEUE's path must not quietly become a new, empty queue."""
    db = tmp_path / "typo" / "dir" / "q.db"
    args = ["--port", _free_port()] if command == "serve" else []
    proc = run(tmp_path, command, *args, AGENTBOT_QUEUE=f"sqlite:///{db}")
    _one_clear_line(
        proc,
        f"AGENTBOT_QUEUE: the folder {db.parent} of AGENTBOT_QUEUE does not exist",
        "create it or fix the path",
    )
    assert not (tmp_path / "typo").exists() and not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://u:hunter2secret@127.0.0.1:notaport/x", "the port 'notaport'"),
        ("postgresql://u:hunter2secret@127.0.0.1:99999/x", "the port '99999'"),
        ("postgresql://u:hunter2secret@127.0.0.1/x?schema=bad;drop", "the schema 'bad;drop'"),
        ("postgresql://u:hunter2secret@[::1/x", "does not parse"),
    ],
)
def test_a_malformed_postgres_queue_url_is_named_with_exit_2(
    tmp_path: Path, url: str, says: str
) -> None:
    for command in ("jobs", "serve"):
        args = ["--port", _free_port()] if command == "serve" else []
        proc = run(tmp_path, command, *args, AGENTBOT_QUEUE=url)
        _one_clear_line(proc, "AGENTBOT_QUEUE", says)
        assert "hunter2secret" not in proc.stderr


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_bad_app_key_file_stops_serve_and_worker_before_any_queue(
    tmp_path: Path, command: str
) -> None:
    args = ["--port", _free_port()] if command == "serve" else []
    proc = run(
        tmp_path,
        command,
        *args,
        GITHUB_APP_ID="1",
        GITHUB_APP_PRIVATE_KEY_PATH=str(tmp_path / "missing.pem"),
    )
    _one_clear_line(proc, "GITHUB_APP_PRIVATE_KEY_PATH", "missing.pem")
    assert not (tmp_path / "data").exists()


def test_doctor_fails_a_set_queue_in_a_missing_folder_as_serve_refuses_it(tmp_path: Path) -> None:
    db = tmp_path / "typo" / "dir" / "q.db"
    proc = run(tmp_path, "doctor", AGENTBOT_QUEUE=f"sqlite:///{db}")
    line = next(x for x in proc.stdout.splitlines() if "queue" in x and str(db.parent) in x)
    assert line.split()[0] == "FAIL" and "does not exist" in line, proc.stdout
    assert not (tmp_path / "typo").exists()
