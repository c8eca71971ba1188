"""The App's webhook secret and jobs password: from a variable, else kept in the data dir."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from pydantic import SecretStr

from bot.config import Settings
from bot.errors import ConfigError
from bot.input_files import NotAFile, TooLarge, read_input

SECRET_FILE = "webhook-secret"  # noqa: S105 (a file name, not a secret)
PASSWORD_FILE = "jobs-password"  # noqa: S105 (a file name, not a secret)
MIN_SECRET_LENGTH = 16
"""A webhook secret's fewest characters: anyone who guesses it can post deliveries."""
MIN_PASSWORD_LENGTH = 12
"""The jobs password's fewest characters: the page shows every installation's jobs and logs."""
MAX_SECRET_FILE = 4096
"""The most bytes read from a secret file: a link to /dev/zero must not fill the memory."""
_MAKE_ONE = "python -c 'import secrets; print(secrets.token_hex(32))'"


def webhook_secret(settings: Settings) -> tuple[str, Path | None, bool]:
    """(secret, file it lives in or None for the variable, True if just created).

    Without GITHUB_WEBHOOK_SECRET a random secret is created once in
    AGENTBOT_DATA_DIR/webhook-secret (mode 0600, never overwritten) so `serve` works out of
    the box; the App's settings page must then be given that value. Either one must be
    MIN_SECRET_LENGTH characters at least (ConfigError naming the variable or the file).
    """
    check_webhook_secret(settings)
    value, path, created = _stored(settings, settings.github_webhook_secret, SECRET_FILE)
    if path is not None:
        _check_webhook_file(value, path)
    return value, path, created


def _check_webhook_file(value: str, path: Path) -> None:
    """ConfigError naming `path` when the secret it holds is too short."""
    if len(value) < MIN_SECRET_LENGTH:
        raise ConfigError(
            f"holds a webhook secret of {_characters(value)}, too short"
            f" ({MIN_SECRET_LENGTH} at least): put one made with `{_MAKE_ONE}` in it and in"
            " the App's webhook settings, or delete it to get a new one",
            path=str(path),
        )


def check_webhook_secret(settings: Settings) -> None:
    """ConfigError if GITHUB_WEBHOOK_SECRET is set but blank, padded or too short."""
    _check_variable(
        settings.github_webhook_secret,
        "GITHUB_WEBHOOK_SECRET",
        f"a webhook secret ({MIN_SECRET_LENGTH} at least)",
        MIN_SECRET_LENGTH,
        "in the App's webhook settings too",
    )


def check_jobs_password(settings: Settings) -> None:
    """ConfigError if AGENTBOT_JOBS_PASSWORD is set but blank, padded or too short."""
    _check_variable(
        settings.jobs_password,
        "AGENTBOT_JOBS_PASSWORD",
        f"the jobs password ({MIN_PASSWORD_LENGTH} at least)",
        MIN_PASSWORD_LENGTH,
        "or unset it to get one in the data dir",
    )


def _check_variable(given: SecretStr | None, name: str, what: str, minimum: int, also: str) -> None:
    """ConfigError naming the variable `name` if it is set but blank, padded or too short."""
    value = given.get_secret_value() if given is not None else ""
    _check_padding(value, name, also)
    if value and len(value) < minimum:
        raise ConfigError(
            f"{_characters(value)} is too short for {what}: set it to one made with"
            f" `{_MAKE_ONE}`, {also}",
            path=name,
        )


def _check_padding(value: str, name: str, also: str) -> None:
    """Refuse a value of only spaces, or with spaces around it, as its file would be."""
    # The file's value is stripped, so a padded variable would be a different secret.
    if value and value != value.strip():
        what = "only white space" if not value.strip() else "white space around it"
        raise ConfigError(f"holds {what}: set it to one made with `{_MAKE_ONE}`, {also}", path=name)


def check_secret_files(settings: Settings) -> None:
    """Read the secret files serve would use that exist now, refusing a bad one (none is made)."""
    check_webhook_secret(settings)
    check_jobs_password(settings)
    for given, name in (
        (settings.github_webhook_secret, SECRET_FILE),
        (settings.jobs_password, PASSWORD_FILE),
    ):
        path = settings.data_dir / name
        if _given(given) is None and os.path.lexists(path):
            value = _read(path)
            if name == SECRET_FILE:
                _check_webhook_file(value, path)


def _characters(value: str) -> str:
    return f"{len(value)} character{'' if len(value) == 1 else 's'}"


def jobs_password(settings: Settings) -> tuple[str, Path | None, bool]:
    """The jobs page's password: AGENTBOT_JOBS_PASSWORD, else one kept in the data dir.

    The page lists every installation's jobs and logs, and repository code run with the
    network (the setup stage) can reach this port on loopback: it is never open.
    """
    check_jobs_password(settings)
    return _stored(settings, settings.jobs_password, PASSWORD_FILE)


def _given(given: SecretStr | None) -> str | None:
    """The variable's value, None when unset or empty (the file is used then)."""
    return given.get_secret_value() if given is not None and given.get_secret_value() else None


def file_mode(path: Path) -> int:
    """The permission bits of the file `path` leads to (through a link)."""
    return stat.S_IMODE(path.stat().st_mode)


def _stored(
    settings: Settings, given: SecretStr | None, name: str
) -> tuple[str, Path | None, bool]:
    """The variable's value, else the data dir's file `name`, made once when missing.

    A link at that path is read through: an operator may provide the file that way
    (Kubernetes mounts a secret as a link to the mounted file). It is never written
    through: the file is made with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, so a link planted
    there cannot make serve, as root perhaps, write a file wherever it points; a link to
    nothing is named as such (exit 2) rather than followed.
    """
    value = _given(given)
    if value is not None:
        return value, None, False
    path = settings.data_dir / name
    created = False
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass  # the file, or a link: read below
    except OSError as exc:
        raise ConfigError(
            f"cannot create {path} ({exc.strerror or exc}): name a folder you can write",
            path="AGENTBOT_DATA_DIR",
        ) from None
    else:
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
        except OSError as exc:
            path.unlink(missing_ok=True)  # a part of a secret would be taken at the next start
            raise ConfigError(
                f"cannot write it ({exc.strerror or exc}): check the disk, or name another"
                " folder with AGENTBOT_DATA_DIR",
                path=str(path),
            ) from None
        created = True
    return _read(path), path, created


def _read(path: Path) -> str:
    """The secret in the regular file at `path` (a link followed), or ConfigError naming it.

    Read as every named file is (`bot.input_files`: without blocking, up to a cap), with a
    cap of MAX_SECRET_FILE bytes: a FIFO would hang serve and /dev/zero would fill its
    memory. A file others can write is refused (they could change the key); one they can
    only read is taken, Kubernetes mounts secrets 0644.
    """
    try:
        data = read_input(path, limit=MAX_SECRET_FILE)
    except (NotAFile, IsADirectoryError):
        raise ConfigError(
            "is not a regular file: put the secret in a file there, or delete it to get a new one",
            path=str(path),
        ) from None
    except TooLarge:
        raise ConfigError(
            f"is longer than {MAX_SECRET_FILE} bytes, no secret: put one made with"
            f" `{_MAKE_ONE}` in it, or delete it to get a new one",
            path=str(path),
        ) from None
    except OSError as exc:
        if path.is_symlink() and not path.exists():
            raise ConfigError(
                f"is a link to {path.readlink()}, which does not exist: point it at the"
                " file that holds the secret, or delete the link to get a new one",
                path=str(path),
            ) from None
        raise ConfigError(
            f"cannot read it ({exc.strerror or exc}): delete it to get a new one", path=str(path)
        ) from None
    if (mode := file_mode(path)) & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(
            f"has mode {mode:04o}: others can change it; run `chmod 600 {path}`", path=str(path)
        )
    try:
        value = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(
            "cannot read it (not UTF-8 text): delete it to get a new one", path=str(path)
        ) from None
    if not value:
        raise ConfigError("is empty: delete it to get a new one", path=str(path))
    return value
