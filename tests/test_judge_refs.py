"""Files the judge files reach are judge files too (bot.validation.judge_refs)."""

from __future__ import annotations

from bot.validation.judge_refs import referenced


def reach(changed: list[str], judges: dict[str, str]) -> set[str]:
    return referenced(changed, judges, lambda path: [judges[path].encode()])


def test_modules_a_conftest_loads_or_takes_hooks_from() -> None:
    conftest = (
        "from helpers.hooks import *\nfrom .local import pytest_runtest_makereport\n"
        "import mypkg\nfrom mypkg.core import thing\n"
        "pytest_plugins = ['tests.plugin', 'pkg.fixtures']\n"
    )
    changed = ["helpers/hooks.py", "tests/local.py", "tests/plugin.py", "src/pkg/fixtures.py",
               "mypkg/__init__.py", "mypkg/core.py", "tests/test_x.py"]  # fmt: skip
    found = reach(changed, {"tests/conftest.py": conftest})
    # The package under test, imported plainly, is no judge: a fix to it is the change.
    assert found == {"helpers/hooks.py", "tests/local.py", "tests/plugin.py", "src/pkg/fixtures.py"}


def test_scripts_a_command_runs() -> None:
    judges = {
        "Makefile": "test:\n\tsh scripts/test.sh && ./tools/check\n",
        "web/package.json": '{"main": "index.js", "scripts": {"test": "node ./run.js"}}',
    }
    changed = ["scripts/test.sh", "tools/check", "web/run.js", "run.js", "scripts/test.sh.bak",
               "a/scripts/test.sh", "web/index.js"]  # fmt: skip
    # The package's entry point (`main`) is the code under test, not a command of the judge.
    assert reach(changed, judges) == {"scripts/test.sh", "tools/check", "web/run.js"}


def test_a_test_module_a_command_runs_is_the_tests_not_the_judge() -> None:
    judges = {"tox.ini": "[testenv]\ncommands = python test_parse.py\n",
              "Makefile": "test:\n\tnode t/add.test.js && sh scripts/test.sh\n"}  # fmt: skip
    changed = ["test_parse.py", "t/add.test.js", "scripts/test.sh"]
    assert reach(changed, judges) == {"scripts/test.sh"}


def test_nothing_is_reached_from_an_unreadable_conftest() -> None:
    assert reach(["helpers.py"], {"conftest.py": "import (\n"}) == set()
