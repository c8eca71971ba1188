"""Files the judge files reach are judge files too (bot.validation.judge_refs)."""

from __future__ import annotations

from bot.validation.judge_refs import referenced


def reach(changed: list[str], judges: dict[str, str]) -> set[str]:
    return referenced(changed, judges, lambda path: [judges[path].encode()])


def test_modules_a_conftest_loads_or_imports() -> None:
    conftest = (
        "from helpers.hooks import *\nimport support\nfrom . import local\n"
        "pytest_plugins = ['tests.plugin', 'pkg.fixtures']\n"
    )
    changed = ["helpers/hooks.py", "support/__init__.py", "tests/local.py",
               "tests/plugin.py", "src/pkg/fixtures.py", "tests/test_x.py", "other.py"]  # fmt: skip
    found = reach(changed, {"tests/conftest.py": conftest})
    assert found == set(changed) - {"tests/test_x.py", "other.py"}


def test_scripts_a_command_runs() -> None:
    judges = {
        "Makefile": "test:\n\tsh scripts/test.sh && ./tools/check\n",
        "web/package.json": '{"scripts": {"test": "node ./run.js"}}',
    }
    changed = ["scripts/test.sh", "tools/check", "web/run.js", "run.js", "scripts/test.sh.bak",
               "a/scripts/test.sh"]  # fmt: skip
    assert reach(changed, judges) == {"scripts/test.sh", "tools/check", "web/run.js"}


def test_nothing_is_reached_from_an_unreadable_conftest() -> None:
    assert reach(["helpers.py"], {"conftest.py": "import (\n"}) == set()
