"""The proof drives mocha with the repository's own interface (a qunit suite, jshttp/cookie)."""

from __future__ import annotations

import json
from pathlib import Path

from bot.workflows.steps.proof.trees import direct
from bot.workflows.steps.proof.trees import test_script as script_of


def test_mocha_keeps_the_interface_and_requires_of_the_package_test_script(tmp_path: Path) -> None:
    script = "mocha --reporter spec --bail --check-leaks --ui qunit -r ./test/setup.js test/"
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}}))
    command = direct("mocha", ["test/serialize.js"], script_of("npm test", tmp_path))
    assert command == "node_modules/.bin/mocha --ui qunit -r ./test/setup.js test/serialize.js"


def test_mocha_without_options_and_other_commands_are_unchanged(tmp_path: Path) -> None:
    assert (
        direct("mocha", ["t.js"], script_of("npm test", tmp_path)) == "node_modules/.bin/mocha t.js"
    )
    assert script_of("pytest -q", tmp_path) == "pytest -q"
