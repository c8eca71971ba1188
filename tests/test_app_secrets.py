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
