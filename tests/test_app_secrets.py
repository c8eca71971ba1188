"""Where `serve` gets the App's webhook secret and jobs password, and what it refuses."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.cli._app_secrets import MIN_SECRET_LENGTH, jobs_password, webhook_secret
from bot.config import load_settings
from tests.test_cli_bad_input import _free_port, _one_clear_line
from tests.test_cli_errors import run

MAKE_ONE = "python -c 'import secrets; print(secrets.token_hex(32))'"


@pytest.mark.parametrize("value", ["x", "Sh0rt-secret-15"])
def test_a_short_webhook_secret_variable_stops_serve_before_any_file(
    tmp_path: Path, value: str
) -> None:
    proc = run(tmp_path, "serve", "--port", _free_port(), GITHUB_WEBHOOK_SECRET=value)
    _one_clear_line(proc, "GITHUB_WEBHOOK_SECRET", f"{len(value)} character", "16", MAKE_ONE)
    assert "Sh0rt" not in proc.stderr  # the secret itself is never printed
    assert not (tmp_path / "data").exists()


def test_a_short_webhook_secret_file_stops_serve_naming_the_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    secret = data / "webhook-secret"
    secret.write_text("Sh0rt-secret-15\n")
    proc = run(tmp_path, "serve", "--port", _free_port())
    _one_clear_line(proc, str(secret), "15 characters", "16", MAKE_ONE, "delete it")
    assert "Sh0rt" not in proc.stderr
    assert secret.read_text() == "Sh0rt-secret-15\n"  # the operator's file is left as it was


def test_a_secret_of_16_characters_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "a" * MIN_SECRET_LENGTH)
    assert webhook_secret(load_settings()) == ("a" * MIN_SECRET_LENGTH, None, False)
    assert MIN_SECRET_LENGTH == 16


def test_a_generated_secret_is_long_and_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    value, path, created = webhook_secret(load_settings())
    assert created and path == tmp_path / "data" / "webhook-secret"
    assert len(value) >= 64 and path.read_text() == value + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert webhook_secret(load_settings()) == (value, path, False)  # kept, never made again


@pytest.mark.parametrize("name", ["webhook-secret", "jobs-password"])
def test_a_secret_file_reached_through_a_link_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Kubernetes mounts a secret as a link to the mounted file: an operator's choice."""
    mounted = tmp_path / "mounted" / "..data" / name
    mounted.parent.mkdir(parents=True)
    mounted.write_text("k8s-mounted-secret-0123456789abcdef\n")
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / name).symlink_to(mounted)
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(data))
    for variable in ("GITHUB_WEBHOOK_SECRET", "AGENTBOT_JOBS_PASSWORD"):
        monkeypatch.delenv(variable, raising=False)
    read = webhook_secret if name == "webhook-secret" else jobs_password
    value, path, created = read(load_settings())
    assert (value, path, created) == ("k8s-mounted-secret-0123456789abcdef", data / name, False)
    assert mounted.read_text() == "k8s-mounted-secret-0123456789abcdef\n"


@pytest.mark.parametrize("name", ["webhook-secret", "jobs-password"])
def test_serve_never_writes_a_secret_through_a_dangling_link(tmp_path: Path, name: str) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (data / name).symlink_to(elsewhere / "planted")
    # the jobs password is read after the webhook secret: that one comes from its variable
    env = {"GITHUB_WEBHOOK_SECRET": "w" * MIN_SECRET_LENGTH} if name == "jobs-password" else {}
    proc = run(tmp_path, "serve", "--port", _free_port(), **env)
    _one_clear_line(proc, f"{data / name}: is a link to {elsewhere / 'planted'}", "does not exist")
    assert list(elsewhere.iterdir()) == []  # nothing was made where the link points
    assert (data / name).is_symlink()


def test_a_secret_that_cannot_be_written_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import secrets

    from bot.errors import ConfigError

    def disk_full(_: int) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(secrets, "token_hex", disk_full)  # made, then the write fails
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    with pytest.raises(ConfigError, match="No space left on device"):
        webhook_secret(load_settings())
    assert not (tmp_path / "data" / "webhook-secret").exists()  # no empty secret taken next time


@pytest.mark.parametrize("name", ["webhook-secret", "jobs-password"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "too-long"])
def test_a_secret_file_that_is_no_small_regular_file_is_refused(
    tmp_path: Path, name: str, kind: str
) -> None:
    """A FIFO would hang serve and /dev/zero would fill its memory: refused, named."""
    import os

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    path = data / name
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_text("a" * 5000)
        path.chmod(0o600)
    env = {"GITHUB_WEBHOOK_SECRET": "w" * MIN_SECRET_LENGTH} if name == "jobs-password" else {}
    proc = run(tmp_path, "serve", "--port", _free_port(), **env)
    _one_clear_line(proc, str(path), "longer than 4096" if kind == "too-long" else "regular file")
    assert not (data / "agentbot.db").exists()


def _serve_briefly(tmp: Path, **env: str) -> str:
    """serve's stderr after it started and was stopped (SIGINT)."""
    import os
    import signal
    import subprocess
    import time

    from tests.test_cli_errors import AGENTBOT

    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "GITHUB_"))}
    base.update({"HOME": str(tmp / "home"), "AGENTBOT_DATA_DIR": str(tmp / "data"), **env})
    cmd = [AGENTBOT, "serve", "--port", _free_port(), "--workers", "0"]
    with subprocess.Popen(cmd, cwd=tmp, env=base, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # started once it says where it serves
            line = proc.stderr.readline()
            lines.append(line)
            if not line or "serving on" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    return "".join(lines) + err


def test_serve_prints_the_secret_files_real_mode_and_warns_when_others_can_read_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    secret = data / "webhook-secret"
    secret.write_text("k8s-mounted-secret-0123456789abcdef\n")
    secret.chmod(0o644)  # Kubernetes' default: taken, with a warning
    err = _serve_briefly(tmp_path)
    assert f"using the webhook secret in {secret} (mode 0644)" in err, err
    assert f"warning: {secret} has mode 0644: others can read it" in err, err
    assert "(mode 0600)" in err  # the jobs password just made


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_a_secret_file_others_can_write_stops_serve(tmp_path: Path, mode: int) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    secret = data / "webhook-secret"
    secret.write_text("k8s-mounted-secret-0123456789abcdef\n")
    secret.chmod(mode)
    proc = run(tmp_path, "serve", "--port", _free_port())
    _one_clear_line(proc, str(secret), f"mode {mode:04o}", "chmod 600")
    assert not (data / "agentbot.db").exists()
    assert not (data / "jobs-password").exists()


@pytest.mark.parametrize("variable", ["GITHUB_WEBHOOK_SECRET", "AGENTBOT_JOBS_PASSWORD"])
@pytest.mark.parametrize(
    "value", [" " * 20, " padded-secret-0123456789", "padded-secret-0123456789\n"]
)
def test_a_blank_or_padded_secret_variable_stops_serve(
    tmp_path: Path, variable: str, value: str
) -> None:
    proc = run(tmp_path, "serve", "--port", _free_port(), **{variable: value})
    _one_clear_line(proc, variable, "white space", MAKE_ONE)
    assert "padded-secret" not in proc.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("value", ["x", "eleven-char"])
def test_a_short_jobs_password_stops_serve(tmp_path: Path, value: str) -> None:
    proc = run(tmp_path, "serve", "--port", _free_port(), AGENTBOT_JOBS_PASSWORD=value)
    _one_clear_line(proc, "AGENTBOT_JOBS_PASSWORD", f"{len(value)} character", "12", MAKE_ONE)
    assert "eleven" not in proc.stderr
    assert not (tmp_path / "data").exists()


def test_a_jobs_password_of_12_characters_and_the_generated_one_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.cli._app_secrets import MIN_PASSWORD_LENGTH

    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENTBOT_JOBS_PASSWORD", "p" * 12)
    assert jobs_password(load_settings()) == ("p" * 12, None, False)
    monkeypatch.delenv("AGENTBOT_JOBS_PASSWORD")
    value, _, created = jobs_password(load_settings())
    assert created and len(value) >= MIN_PASSWORD_LENGTH == 12


@pytest.mark.parametrize("bad", ["empty", "dangling", "short-secret"])
def test_a_bad_secret_file_stops_serve_before_anything_is_made(tmp_path: Path, bad: str) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    if bad == "empty":
        (data / "jobs-password").write_text("\n")
    elif bad == "dangling":
        (data / "jobs-password").symlink_to(tmp_path / "nowhere")
    else:
        (data / "webhook-secret").write_text("Sh0rt-secret-15\n")
    before = sorted(p.name for p in data.iterdir())
    proc = run(tmp_path, "serve", "--port", _free_port())
    assert proc.returncode == 2, proc.stderr
    assert sorted(p.name for p in data.iterdir()) == before  # no queue, no new secret


def test_a_bad_app_key_file_is_named_before_anything_is_made(tmp_path: Path) -> None:
    key = tmp_path / "bad.pem"
    key.write_text("x\n")
    proc = run(
        tmp_path,
        "serve",
        "--port",
        _free_port(),
        GITHUB_APP_ID="123",
        GITHUB_APP_PRIVATE_KEY_PATH=str(key),
    )
    _one_clear_line(proc, f"GITHUB_APP_PRIVATE_KEY_PATH: {key}: not a PEM private key")
    assert not (tmp_path / "data").exists()
