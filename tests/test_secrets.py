"""bot.secrets: the allowlisted environment, the registry of secret values, redaction."""

from __future__ import annotations

import base64

from bot import secrets
from bot.secrets import (
    SecretRegistry,
    agent_env,
    confined_env,
    environment_secrets,
    inheritable,
    registry,
)

ACTIONS_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/runner",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "TZ": "UTC",
    "CI": "true",
    "JAVA_HOME_17_X64": "/usr/lib/jvm/temurin-17",
    "pythonLocation": "/opt/hostedtoolcache/Python/3.12.4/x64",
    "GITHUB_TOKEN": "ghs_" + "a" * 36,
    "GITHUB_ENV": "/home/runner/work/_temp/_runner_file_commands/set_env_1",
    "GITHUB_PATH": "/home/runner/work/_temp/_runner_file_commands/add_path_1",
    "GITHUB_OUTPUT": "/home/runner/work/_temp/_runner_file_commands/set_output_1",
    "GITHUB_STEP_SUMMARY": "/home/runner/work/_temp/_runner_file_commands/step_summary_1",
    "GITHUB_REPOSITORY": "octo/app",
    "RUNNER_TEMP": "/home/runner/work/_temp",
    "ACTIONS_RUNTIME_TOKEN": "eyJ0eXAiOiJKV1Qi.runtime.token",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.actions.githubusercontent.com/x",
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40,
    "DOCKER_PASS": "dkr-pass-7f3a9c21e8",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/XXXXXXXX",
    "SENTRY_DSN": "https://abc123def@o0.ingest.sentry.io/42",
    "NPM_AUTH": "npm_token_value_9f8e7d",
    "CODECOV_UPLOAD": "3f2a9c1e-8b7d-4e6f-a5b4-c3d2e1f0a9b8",
    "PIP_INDEX_URL": "https://user:hunter2pw@pypi.internal/simple",
    "HTTPS_PROXY": "http://proxy.internal:3128",
    "DEBIAN_FRONTEND": "noninteractive",
    "ImageOS": "ubuntu24",
    "SHLVL": "1",
    "JAVA_OPTS": "-Xmx2048m -Dfile.encoding=UTF-8",
}


def test_agent_env_is_an_allowlist() -> None:
    env = agent_env(ACTIONS_ENV, SecretRegistry())
    assert set(env) == {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TERM",
        "TZ",
        "CI",
        "JAVA_HOME_17_X64",
        "pythonLocation",
        "HTTPS_PROXY",
        "PIP_INDEX_URL",
    }
    # PIP_INDEX_URL is allowed by name but carries a password: passed without it.
    assert "@" not in env["PIP_INDEX_URL"] and "://" in env["PIP_INDEX_URL"]


def test_an_allowed_name_holding_a_registered_secret_is_dropped() -> None:
    reg = SecretRegistry()
    reg.register("s3cr3t-in-a-path-xyz")
    assert agent_env({"PATH": "/bin:/opt/s3cr3t-in-a-path-xyz/bin"}, reg) == {}


def test_confined_env_drops_secret_names_runner_files_and_values() -> None:
    reg = SecretRegistry()
    reg.register("registered-value-123")
    given = {
        "VIRTUAL_ENV": "/data/venvs/x",
        "MY_API_KEY": "whatever",
        "GITHUB_ENV": "/tmp/x",
        "GITHUB_STEP_SUMMARY": "/tmp/y",
        "RUNNER_TEMP": "/tmp",
        "ACTIONS_CACHE_URL": "https://x",
        "NOTE": "has registered-value-123 inside",
        "TOKENISH": "ghp_" + "b" * 36,
    }
    assert confined_env(given, reg) == {"VIRTUAL_ENV": "/data/venvs/x"}


def test_every_value_the_bot_holds_counts_whatever_its_name() -> None:
    found = set(environment_secrets(ACTIONS_ENV))
    for name in (
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ANTHROPIC_API_KEY",
        "DOCKER_PASS",
        "SLACK_WEBHOOK_URL",
        "SENTRY_DSN",
        "NPM_AUTH",
        "CODECOV_UPLOAD",
    ):
        assert ACTIONS_ENV[name] in found, name
    assert "hunter2pw" in found  # the password inside an allowed URL
    # Settings, paths and public values are not secrets: redacting them would garble text.
    quiet = (
        "PATH",
        "HOME",
        "GITHUB_REPOSITORY",
        "DEBIAN_FRONTEND",
        "ImageOS",
        "SHLVL",
        "JAVA_OPTS",
    )
    for name in quiet:
        assert ACTIONS_ENV[name] not in found, name


def test_redact_replaces_values_longest_first_shapes_and_url_userinfo() -> None:
    reg = SecretRegistry()
    reg.register("abcdef")
    reg.register("abcdef-longer-secret")
    token = "ghs_" + "Z" * 36
    text = f"a abcdef-longer-secret b abcdef c {token} d https://x:pw@example.com/r.git e"
    assert (
        reg.redact(text)
        == "a [REDACTED] b [REDACTED] c [REDACTED] d https://[REDACTED]@example.com/r.git e"
    )
    assert reg.holds_secret("x abcdef y") and not reg.holds_secret("nothing here")


def test_a_registered_private_key_is_recognised_line_by_line() -> None:
    body = base64.b64encode(bytes(range(256))).decode()
    begin, end = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
    pem = f"{begin}\n{body[:64]}\n{body[64:128]}\n{end}\n"
    reg = SecretRegistry()
    reg.register(pem)
    assert reg.redact(f"quoted: {body[64:128]}") == "quoted: [REDACTED]"
    assert body[:64] in reg.values()


def test_short_values_are_not_registered_and_the_process_registry_is_shared() -> None:
    reg = SecretRegistry()
    reg.register("abc")
    reg.register("")
    reg.register(None)
    assert reg.values() == frozenset()
    assert registry() is registry()


def test_inheritable_names() -> None:
    assert inheritable("LC_CTYPE") and inheritable("RUSTUP_HOME") and inheritable("https_proxy")
    assert not inheritable("GITHUB_ENV") and not inheritable("VIRTUAL_ENV")


def test_tokens_in_index_urls_are_cut_before_the_sandbox_and_registered() -> None:
    # The hostile-model trial's H6: tokens the URL-password check missed.
    base = {
        "PATH": "/usr/bin",
        "PIP_INDEX_URL": "https://pypi.corp.example/simple?token=s3cr3tT0kenValue",
        "UV_INDEX_URL": "https://tok_abcdef0123456789abcdef@pypi.corp.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://FURYTOKEN12345678:@pypi.fury.io/acme/",
        "NPM_CONFIG_REGISTRY": "https://npm.corp.example/_auth=Zm9vOmJhcg==/",
        "HTTPS_PROXY": "http://proxy.corp.example:3128",
    }
    reg = SecretRegistry()
    reg.register_environment(base)
    got = confined_env(agent_env(base, reg), reg)
    assert got == {
        "PATH": "/usr/bin",
        "PIP_INDEX_URL": "https://pypi.corp.example/simple",
        "UV_INDEX_URL": "https://pypi.corp.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://pypi.fury.io/acme/",
        "NPM_CONFIG_REGISTRY": "https://npm.corp.example/",
        "HTTPS_PROXY": "http://proxy.corp.example:3128",
    }
    assert {"s3cr3tT0kenValue", "tok_abcdef0123456789abcdef", "FURYTOKEN12345678"} <= reg.values()
    assert "Zm9vOmJhcg==" in reg.values()


def test_one_redactor_with_one_marker_serves_every_writer() -> None:
    from bot import untrusted
    from bot.outbound import text

    secret = "one-redactor-" + "q7" * 8
    secrets.register(secret)
    encoded = base64.b64encode(secret.encode()).decode()
    shown = secrets.redact(f"plain {secret}; b64 {encoded}; url https://u:pw1234@h/x")
    # The registry's plain forms and URL user info, and the scanner's encodings, one marker.
    assert secret not in shown and encoded not in shown and "pw1234" not in shown, shown
    assert shown.count(secrets.MARK) == 3 and "***" not in shown, shown
    assert getattr(text, "redact", secrets.redact) is secrets.redact  # no second redactor
    assert not hasattr(untrusted, "redact_secrets")
