"""RepoConfig parsing: defaults, overrides, errors naming key path and line; Settings from env."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import RepoConfig, Settings
from bot.errors import ConfigError


def test_empty_text_gives_defaults() -> None:
    cfg = RepoConfig.from_text("")
    assert cfg.labels.fix == "agent-fix"
    assert cfg.budget.max_usd_per_job == 3.0
    assert cfg.validation.test == "default"
    assert cfg.limits.protected_paths == [".github/workflows/**"]


def test_overrides_and_null_stage() -> None:
    cfg = RepoConfig.from_text(
        "labels:\n  fix: please-fix\nvalidation:\n  typecheck: null\n  test: pytest -q\n"
        "roles:\n  fixer: {model: m2, max_turns: 10}\n"
    )
    assert cfg.labels.fix == "please-fix"
    assert cfg.labels.tdd == "agent-tdd"
    assert cfg.validation.typecheck is None
    assert cfg.validation.test == "pytest -q"
    assert cfg.model_for("fixer") == "m2"
    assert cfg.model_for("issue_fixer") == "claude-sonnet-4-6"


def test_unknown_key_names_path_and_line() -> None:
    text = "model: x\nbudget:\n  max_turns: 5\n  max_usd_per_jobb: 2\n"
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text(text)
    assert info.value.path == "budget.max_usd_per_jobb"
    assert info.value.line == 4
    assert "unknown key" in str(info.value)


def test_wrong_type_names_path_and_line() -> None:
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text("limits:\n  max_changed_lines: many\n")
    assert info.value.path == "limits.max_changed_lines"
    assert info.value.line == 2


def test_list_item_error_line() -> None:
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text("allowed_bots:\n  - ok[bot]\n  - {a: 1}\n")
    assert info.value.path == "allowed_bots.1"
    assert info.value.line == 3


def test_invalid_yaml_and_non_mapping() -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        RepoConfig.from_text("labels: [unclosed\n")
    with pytest.raises(ConfigError, match="mapping"):
        RepoConfig.from_text("- a\n- b\n")


def test_from_file_missing_is_defaults(tmp_path: Path) -> None:
    assert RepoConfig.from_file(tmp_path / "nope.yml") == RepoConfig()
    f = tmp_path / "agentbot.yml"
    f.write_text("min_permission: admin\n")
    assert RepoConfig.from_file(f).min_permission == "admin"


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretsecretsecretsecret")
    monkeypatch.setenv("AGENTBOT_QUEUE", "postgresql://x/y")
    monkeypatch.setenv("AGENTBOT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:1")
    s = Settings()
    assert s.github_token is not None
    assert s.github_token.get_secret_value() == "ghp_secretsecretsecretsecret"
    assert "ghp_secret" not in repr(s)
    assert s.queue == "postgresql://x/y"
    assert s.data_dir == tmp_path
    assert s.github_api_url == "http://127.0.0.1:1"


def test_settings_key_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("PEM")
    monkeypatch.delenv("GITHUB_APP_PRIVATE_KEY", raising=False)
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY_PATH", str(key))
    assert Settings().app_private_key() == "PEM"
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY_PATH", str(tmp_path / "missing.pem"))
    with pytest.raises(ConfigError, match="GITHUB_APP_PRIVATE_KEY_PATH"):
        Settings().app_private_key()


def test_plan_section_and_assignee() -> None:
    cfg = RepoConfig.from_text("")
    assert (cfg.plan.required, cfg.plan.on_deviation, cfg.plan.budget_factor) == (
        False,
        "draft",
        1.5,
    )
    assert (cfg.labels.plan, cfg.commands.plan, cfg.commands.approve, cfg.assignee) == (
        "agent-plan",
        "/plan",
        "/approve",
        "",
    )
    cfg = RepoConfig.from_text(
        "plan: {required: true, on_deviation: fail, budget_factor: 2}\nassignee: ' my-bot '\n"
    )
    assert (cfg.plan.required, cfg.plan.on_deviation, cfg.plan.budget_factor) == (True, "fail", 2)
    assert cfg.assignee == "my-bot"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("plan:\n  on_deviation: warn\n", "plan.on_deviation"),
        ("plan:\n  budget_factor: 0\n", "plan.budget_factor"),
        ("plan:\n  budget_factor: .nan\n", "plan.budget_factor"),
        ("plan:\n  approve: yes\n", "plan.approve"),
        ("assignee: 'two words'\n", "assignee"),
        ("commands:\n  approve: approve\n", "commands.approve"),
    ],
)
def test_bad_plan_settings_name_the_field(text: str, path: str) -> None:
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text(text)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("model: m\nprices:\n  m: {inptu: 3}\n", "m.inptu: a price is one of input, output"),
        ("prices:\n  m: {input: -1, output: 2}\n", "m.input: a price is USD per million tokens"),
        ("roles:\n  issue_fixr: {max_turns: 5}\n", "unknown role 'issue_fixr'"),
    ],
)
def test_a_misspelt_price_or_role_is_named_when_the_config_is_read(text: str, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        RepoConfig.from_text(text)
    assert said in str(err.value)
    assert err.value.line == (2 if text.startswith("model") else 1)  # the section's line


def test_the_role_names_are_the_agent_roles() -> None:
    from bot.config.repo import ROLE_NAMES
    from bot.models import AgentRole

    assert set(ROLE_NAMES) == {r.value for r in AgentRole}


def test_the_app_id_is_a_number_or_a_client_id(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import load_settings

    for good in ("12345", "Iv1.8a61f9b3a7aba766", "Iv23liAbCdEf012345"):
        monkeypatch.setenv("GITHUB_APP_ID", good)
        assert load_settings().github_app_id == good
    monkeypatch.setenv("GITHUB_APP_ID", " 123 ")
    assert load_settings().github_app_id == "123"  # what signs the JWT: no stray spaces
    for bad in ("abc", "12 34", "-5", "   ", "ghp_NotAnAppId0123456789"):
        monkeypatch.setenv("GITHUB_APP_ID", bad)
        with pytest.raises(ConfigError) as info:
            load_settings()
        assert info.value.path == "GITHUB_APP_ID", bad
        assert "NotAnAppId" not in str(info.value)  # never echoed: it may be a secret


def test_a_bad_url_is_echoed_without_its_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config import load_settings

    monkeypatch.setenv("GITHUB_API_URL", "ftp://user:S3CRET@ghe.example")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.path == "GITHUB_API_URL"
    assert "S3CRET" not in str(info.value) and "ghe.example" in str(info.value)


@pytest.mark.parametrize(
    ("text", "path", "line", "first"),
    [
        ("budget:\n  max_turns: 5\nmodel: x\nbudget:\n  max_turns: 9\n", "budget", 4, 1),
        ("labels:\n  fix: a\n  tdd: b\n  fix: c\n", "labels.fix", 4, 2),
        ("roles:\n  fixer: {model: a, model: b}\n", "roles.fixer.model", 2, 2),
    ],
)
def test_a_duplicate_key_is_named_with_both_lines(
    text: str, path: str, line: int, first: int
) -> None:
    with pytest.raises(ConfigError) as info:
        RepoConfig.from_text(text)
    assert info.value.path == path and info.value.line == line
    assert "duplicate key" in str(info.value) and f"line {first}" in str(info.value)


def test_max_turns_has_an_upper_bound() -> None:
    for text, path, line in (
        ("budget:\n  max_turns: 1000000000\n", "budget.max_turns", 2),
        ("roles:\n  fixer:\n    max_turns: 1001\n", "roles.fixer.max_turns", 3),
    ):
        with pytest.raises(ConfigError) as info:
            RepoConfig.from_text(text)
        assert info.value.path == path and info.value.line == line
        assert "1000" in str(info.value)
    cfg = RepoConfig.from_text("budget: {max_turns: 1000}\nroles: {fixer: {max_turns: 1000}}\n")
    assert cfg.budget.max_turns == 1000
    for value in ("true", '"500"', "5.0"):  # YAML's true is not one turn, a string not a number
        with pytest.raises(ConfigError) as info:
            RepoConfig.from_text(f"budget:\n  max_turns: {value}\n")
        assert info.value.path == "budget.max_turns" and info.value.line == 2, value
