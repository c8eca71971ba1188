"""The App's webhook secret and jobs password: from a variable, else kept in the data dir."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import SecretStr

from bot.config import Settings
from bot.errors import ConfigError

SECRET_FILE = "webhook-secret"  # noqa: S105 (a file name, not a secret)
PASSWORD_FILE = "jobs-password"  # noqa: S105 (a file name, not a secret)
MIN_SECRET_LENGTH = 16
"""A webhook secret's fewest characters: anyone who guesses it can post deliveries."""
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
    if path is not None and len(value) < MIN_SECRET_LENGTH:
        raise ConfigError(
            f"holds a webhook secret of {_characters(value)}, too short"
            f" ({MIN_SECRET_LENGTH} at least): put one made with `{_MAKE_ONE}` in it and in"
            " the App's webhook settings, or delete it to get a new one",
            path=str(path),
        )
    return value, path, created


def check_webhook_secret(settings: Settings) -> None:
    """ConfigError if GITHUB_WEBHOOK_SECRET is set but too short (no file is read or made)."""
    given = settings.github_webhook_secret
    value = given.get_secret_value() if given is not None else ""
    if value and len(value) < MIN_SECRET_LENGTH:
        raise ConfigError(
            f"{_characters(value)} is too short for a webhook secret ({MIN_SECRET_LENGTH} at"
            f" least): set it to one made with `{_MAKE_ONE}`, in the App's webhook settings"
            " too",
            path="GITHUB_WEBHOOK_SECRET",
        )


def _characters(value: str) -> str:
    return f"{len(value)} character{'' if len(value) == 1 else 's'}"


def jobs_password(settings: Settings) -> tuple[str, Path | None, bool]:
    """The jobs page's password: AGENTBOT_JOBS_PASSWORD, else one kept in the data dir.

    The page lists every installation's jobs and logs, and repository code run with the
    network (the setup stage) can reach this port on loopback: it is never open.
    """
    return _stored(settings, settings.jobs_password, PASSWORD_FILE)


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
    if given is not None and given.get_secret_value():
        return given.get_secret_value(), None, False
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
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        if path.is_symlink() and not path.exists():
            raise ConfigError(
                f"is a link to {path.readlink()}, which does not exist: point it at the"
                " file that holds the secret, or delete the link to get a new one",
                path=str(path),
            ) from None
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(
            f"cannot read it ({why}): delete it to get a new one", path=str(path)
        ) from None
    if not value:
        raise ConfigError("is empty: delete it to get a new one", path=str(path))
    return value, path, created
