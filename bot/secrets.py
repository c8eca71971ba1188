"""The one secrets module: what a sandboxed command may inherit, the secrets we hold, redaction.

- `agent_env(base)`: what sandboxed commands start from, an allowlist; secret values dropped.
- The registry (`register`, `values`, `register_environment`): every secret value we hold.
- `redact`: the one redactor of every writer (logs, git errors, stdout, GitHub), one MARK.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, urlsplit, urlunsplit

INHERITED = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "CI"})
"""Names every sandboxed command inherits (HOME is then pointed at the job's own home)."""

TOOLCHAIN = frozenset(
    {
        # Version managers whose shims are on PATH, and toolchain roots.
        "PYENV_ROOT", "PYENV_VERSION", "RBENV_ROOT", "RBENV_VERSION", "NVM_DIR", "NVM_BIN",
        "NVM_INC", "GOROOT", "GOTOOLCHAIN", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GONOPROXY",
        "GOPRIVATE", "GOSUMDB", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME", "DOTNET_ROOT",
        # What actions/setup-python exports for the interpreter it installs.
        "pythonLocation", "Python_ROOT_DIR", "Python2_ROOT_DIR", "Python3_ROOT_DIR",
        "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
        # Certificates, package indexes and proxies, so `setup` works behind a proxy.
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS", "PIP_CERT", "GIT_SSL_CAINFO", "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_TRUSTED_HOST", "UV_INDEX_URL",
        "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "NPM_CONFIG_REGISTRY",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    }
)  # fmt: skip
"""Toolchain variables a language profile needs; matched case-insensitively."""

_TOOLCHAIN_UPPER = frozenset(name.upper() for name in TOOLCHAIN)
_INHERITED_PREFIXES = ("LC_", "JAVA_HOME_")

# Names that say "secret": their values are registered even when short or plain.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|_PASS$|^PASS|KEY|AUTH|CREDENTIAL|PRIVATE|DSN|WEBHOOK|COOKIE",
    re.IGNORECASE,
)
# Public variables of Actions, the runner, and our own settings: names, URLs and paths.
_PUBLIC_PREFIXES = ("GITHUB_", "RUNNER_", "ACTIONS_", "AGENTBOT_", "ANTHROPIC_", "OPENAI_")
# Values this plain are settings, not secrets: numbers, switches, (unnamed) single words.
_SETTING = re.compile(r"[\d.:,+-]*|true|false|yes|no|on|off", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")
_MIN_SECRET = 4
_MIN_NAMED_SECRET = 6
_MIN_UNNAMED_SECRET = 16

CREDENTIAL_SHAPES = re.compile(
    r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bsk-ant-[A-Za-z0-9_-]{10,}"
    r"|\bsk-[A-Za-z0-9_-]{20,}|\bv1\.[0-9a-f]{40}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
"""Credentials GitHub and the LLM providers issue, and private key blocks."""

# What lets a step talk to the runner: later steps read these files (GITHUB_ENV...).
_RUNNER_CONTROL = re.compile(
    r"GITHUB_(?:ENV|PATH|OUTPUT|STATE|STEP_SUMMARY|EVENT_PATH)|RUNNER_TEMP|ACTIONS_\w+"
)

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@")
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s,;'\"]+")
MARK = "[REDACTED]"  # not `***`: in Markdown that is emphasis or a rule


def agent_env(base: Mapping[str, str], registry: SecretRegistry | None = None) -> dict[str, str]:
    """The variables of `base` a sandboxed command may inherit (see the module doc)."""
    reg = registry or _REGISTRY
    # An index URL may carry a token: the sandbox gets the URL without it (private indexes
    # need a pre-authenticated proxy or mirror; documented in the Security model).
    return {
        name: without_credentials(value) if "://" in value else value
        for name, value in base.items()
        if inheritable(name) and not reg.holds_secret(without_credentials(value))
    }


def confined_env(env: Mapping[str, str], registry: SecretRegistry | None = None) -> dict[str, str]:
    """The last check on a sandboxed command's environment, whoever built it: no variable
    named like a secret, none of the runner's file commands, no value holding a secret."""
    reg = registry or _REGISTRY
    return {
        name: value
        for name, value in env.items()
        if not secret_named(name)
        and not _RUNNER_CONTROL.fullmatch(name.upper())
        and not reg.holds_secret(value)
    }


def inheritable(name: str) -> bool:
    """Whether a variable of this name is on the allowlist."""
    upper = name.upper()
    return name in INHERITED or upper in _TOOLCHAIN_UPPER or upper.startswith(_INHERITED_PREFIXES)


def secret_named(name: str) -> bool:
    """Whether a variable's name says it holds a secret (TOKEN, KEY, PASSWORD, DSN...)."""
    return _SECRET_NAME.search(name) is not None


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """The values in `env` that count as secrets: every value the process holds, whatever
    its name, except allowlisted and public names (paths, URLs, settings) and plain values."""
    found = []
    for name, value in env.items():
        found += url_credentials(value)
        if secret_named(name):
            if len(value) >= _MIN_NAMED_SECRET and not _setting(value):
                found.append(value)
            continue
        if inheritable(name) or name.upper().startswith(_PUBLIC_PREFIXES):
            continue
        if len(value) >= _MIN_UNNAMED_SECRET and not _setting(value) and not _WORD.fullmatch(value):
            found.append(value)
    return found


def _setting(value: str) -> bool:
    """A number, a switch, command-line options, or a list of absolute paths."""
    if _SETTING.fullmatch(value):
        return True
    words = value.split()
    if len(words) > 1 and all(w.startswith("-") for w in words):
        return True  # JAVA_OPTS, MAKEFLAGS...
    parts = value.split(":")
    return all(p.startswith("/") and not any(c.isspace() for c in p) for p in parts)


def url_credentials(value: str) -> list[str]:
    """What a URL in `value` carries as a credential: user and password, query values and
    `name=value` path segments (`?token=…`, `https://TOKEN:@host`, `/_auth=…/`)."""
    found = []
    for match in _URL.finditer(value):
        try:
            url = urlsplit(match.group(0))
            parts = [url.username or "", url.password or ""]
        except ValueError:
            continue
        parts += [v for _, v in parse_qsl(url.query, keep_blank_values=True)]
        parts += [seg.partition("=")[2] for seg in url.path.split("/") if "=" in seg]
        found += [p for p in parts if len(p) >= _MIN_SECRET and not _setting(p)]
    return found


def without_credentials(value: str) -> str:
    """`value` with every URL's user, password, query and `name=value` path segments cut."""

    def clean(match: re.Match[str]) -> str:
        try:
            url = urlsplit(match.group(0))
            host = url.hostname or ""
            port = f":{url.port}" if url.port else ""
        except ValueError:
            return ""
        path = "/".join(seg for seg in url.path.split("/") if "=" not in seg)
        return urlunsplit((url.scheme, host + port, path, "", ""))

    return _URL.sub(clean, value)


class SecretRegistry:
    """Every secret value the process holds; thread-safe, append-only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}
        self._pattern: re.Pattern[str] | None = None

    def register(self, value: str | None) -> None:
        """Remember one secret value (a token, a key, a password) from now on."""
        if not value or len(value) < _MIN_SECRET:
            return
        with self._lock:
            if value not in self._values:
                self._values[value] = None
                self._pattern = None
            # A PEM key is also recognisable line by line, as it may be quoted in pieces.
            for line in value.splitlines():
                line = line.strip()
                if len(line) >= _MIN_UNNAMED_SECRET and not line.startswith("-----"):
                    self._values.setdefault(line, None)

    def register_environment(self, env: Mapping[str, str]) -> None:
        """Register the secret values of an environment (see `environment_secrets`)."""
        for value in environment_secrets(env):
            self.register(value)

    def values(self) -> frozenset[str]:
        """Every registered value."""
        with self._lock:
            return frozenset(self._values)

    def _compiled(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None and self._values:
                # Longest first, so a value containing another is replaced whole.
                ordered = sorted(self._values, key=len, reverse=True)
                self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
            return self._pattern

    def holds_secret(self, text: str) -> bool:
        """Whether `text` contains a registered value or a credential-shaped string."""
        pattern = self._compiled()
        return bool(
            (pattern is not None and pattern.search(text))
            or CREDENTIAL_SHAPES.search(text)
            or _URL_PASSWORD.search(text)
        )

    def redact(self, text: str) -> str:
        """`text` with registered values, credential shapes and URL user info replaced."""
        pattern = self._compiled()
        if pattern is not None:
            text = pattern.sub(MARK, text)
        text = CREDENTIAL_SHAPES.sub(MARK, text)
        return _URL_USERINFO.sub(rf"\1{MARK}@", text)


_REGISTRY = SecretRegistry()


def registry() -> SecretRegistry:
    """The process-wide registry."""
    return _REGISTRY


def register(value: str | None) -> None:
    """Register a secret value in the process-wide registry."""
    _REGISTRY.register(value)


def register_environment(env: Mapping[str, str]) -> None:
    """Register the secret values of an environment in the process-wide registry."""
    _REGISTRY.register_environment(env)


def values() -> frozenset[str]:
    """Every secret value registered in this process."""
    return _REGISTRY.values()


def redact(text: str, scan: Callable[[str], str] | None = None) -> str:
    """`text` with held secrets (also encoded) and credential shapes as MARK; `scan` overrides."""
    # Every git command and log line comes here: the scanner is cached per set of secrets.
    return (scan or _scanner(values()))(_REGISTRY.redact(text))


@functools.lru_cache(maxsize=4)
def _scanner(held: frozenset[str]) -> Callable[[str], str]:
    """The scanner's redact over `held`, built once per set (building costs ten times a scan)."""
    from bot.outbound.scan import Scanner  # here: it loads detect-secrets

    return Scanner(held).redact


def holds_secret(text: str) -> bool:
    """Whether `text` holds a registered secret or a credential-shaped string."""
    return _REGISTRY.holds_secret(text)
