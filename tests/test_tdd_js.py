"""TDD end to end on JavaScript with node:test: the runner judges RED and GREEN from its TAP."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.workflows.tdd.story import tdd
from tests.e2e import REPO, world
from tests.fakes.gitrepo import commits
from tests.tdd_script import Cycle, team
from tests.test_tdd_python import BRANCH, KATA

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]

FILES = {
    "package.json": (
        '{\n  "name": "roman-numerals",\n  "version": "0.1.0",\n  "private": true,\n'
        '  "scripts": {\n    "test": "node --test"\n  }\n}\n'
    ),
    "src/roman.js": "// Roman numerals.\nmodule.exports = {};\n",
    ".gitignore": "node_modules/\n",
}
YAML = (
    "validation:\n  setup: null\n  format: null\n  lint: null\n  typecheck: null\n"
    "  test: node --test\n"
)
TESTS = "test/roman.test.js"
CODE = "src/roman.js"
HEAD = (
    'const { test } = require("node:test");\nconst assert = require("node:assert/strict");\n'
    'const { toRoman } = require("../src/roman.js");\n'
)


def case(name: str, number: int, numeral: str) -> str:
    return f'\ntest("{name}", () => {{\n  assert.equal(toRoman({number}), "{numeral}");\n}});\n'


ONE, TWO = case("1 is I", 1, "I"), case("2 is II", 2, "II")
FIVE, FOUR = case("5 is V", 5, "V"), case("4 is IV", 4, "IV")
THREE = case("3 is III", 3, "III")


def code(body: str) -> str:
    return f"// Roman numerals.\n{body}\nmodule.exports = {{ toRoman }};\n"


def table(pairs: str) -> str:
    return code(
        f'const NUMERALS = [{pairs}];\n\nfunction toRoman(number) {{\n  let out = "";\n'
        "  for (const [value, letters] of NUMERALS) {\n"
        "    while (number >= value) {\n      out += letters;\n      number -= value;\n    }\n"
        "  }\n  return out;\n}\n"
    )


def cycles() -> dict[int, Cycle]:
    two = HEAD + ONE + TWO
    return {
        1: Cycle(1, TESTS, [HEAD + ONE], "1 is I",
                 [(CODE, code('function toRoman(number) {\n  return "I";\n}\n'))]),
        2: Cycle(
            2, TESTS, [HEAD + ONE + TWO.replace("() => {", "() => {{"), two], "2 is II",
            [(CODE, code('function toRoman(number) {\n  return "I".repeat(number);\n}\n'))],
            refactor=[(CODE, table('[1, "I"]'))],
        ),
        3: Cycle(
            3, TESTS, [two.replace("../src/roman.js", "./helpers.js") + FIVE, two + FIVE],
            "5 is V", [(CODE, table('[5, "V"], [1, "I"]'))],
        ),
        4: Cycle(
            4, TESTS, [two + FIVE + THREE, two + FIVE + FOUR], "4 is IV",
            [(CODE, table('[5, "V"], [4, "IV"], [1, "I"]'))],
        ),
    }  # fmt: skip


def test_node_test_cycles_judged_by_the_runner(tmp_path: Path) -> None:
    t, script = team(cycles())
    with world(tmp_path, script, files=FILES, repo_yaml=YAML) as w:
        number = w.gh.add_issue(REPO, title="Roman", body=KATA, labels=["agent-tdd"]).number
        job = Job(kind=JobKind.TDD, repo=REPO, number=number, actor="alice")
        result = tdd(job, w.env(RepoConfig.from_text(YAML)))
        assert result.status == JobStatus.SUCCESS, result.error

        history = list(reversed(commits(w.remote, BRANCH, base="main")))
        assert [c.subject.split(":")[0] for c in history] == [
            "feat(roman-numerals)",
            "feat(roman-numerals)",
            "refactor(roman-numerals)",
            "feat(roman-numerals)",
            "feat(roman-numerals)",
        ]
        clone = tmp_path / "replay"
        subprocess.run(["git", "clone", "-q", str(w.remote), str(clone)], check=True)
        for c in history:  # every commit green under node --test
            subprocess.run(["git", "checkout", "-q", c.sha], cwd=clone, check=True)
            got = subprocess.run(["node", "--test"], cwd=clone, capture_output=True, text=True)
            assert got.returncode == 0, (c.subject, got.stdout[-2000:])

        body = w.gh.pulls(REPO)[0].body or ""
        assert "| 1 | 1 is I | `1 is I` | missing name | 1/1/1 | none |" in body
        assert (
            "| 2 | 2 is II: repeat I | `2 is II` | assertion (rejected first: syntax error in"
            " the test) | 2/1/1 |"
        ) in body
        assert "cycle 2: test attempt 1: syntax error in the test" in body
        assert "cycle 3: test attempt 1: import error of the test file itself" in body
        assert "cycle 4: test attempt 1: overshoot" in body
        assert t.calls(4) == 1 + 2 * 2 + 1 + 2 + 1
