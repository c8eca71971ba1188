"""Where `serve` gets the App's webhook secret and jobs password, and what it refuses."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.cli._app_secrets import MIN_SECRET_LENGTH, webhook_secret
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
