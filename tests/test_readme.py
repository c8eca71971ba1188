"""What the README tells a newcomer matches the App manifest and the configuration model."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.config import RepoConfig

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_app_steps_name_every_event_the_manifest_subscribes_to() -> None:
    manifest = yaml.safe_load((ROOT / "app.yml").read_text(encoding="utf-8"))
    step = README.split("## Run it as a GitHub App", 1)[1].split("\n2. ", 1)[0]
    for event in manifest["default_events"]:
        assert f"`{event}`" in step, event


def test_the_config_example_names_every_label_and_command() -> None:
    example = README.split("### `.github/agentbot.yml`", 1)[1].split("```yaml", 1)[1]
    config = yaml.safe_load(example.split("```", 1)[0])
    defaults = RepoConfig().model_dump()
    for section in ("labels", "commands"):
        assert set(config[section]) == set(defaults[section]), section


def test_every_relative_link_in_the_docs_resolves() -> None:
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)}: {target}"
