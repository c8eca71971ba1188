"""TDD end to end on Python: an `agent-tdd` issue, the scripted team, real pytest, git and gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind, JobStatus
from bot.report import step_summary
from bot.workflows.tdd.story import tdd
from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.gitrepo import commits
from tests.tdd_script import Cycle, team

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

KATA = """# Roman Numerals

## Description
Convert whole numbers to Roman numerals.

## Requirements
- 1 is I
- 2 is II: repeat I
- 5 is V
- 4 is IV: subtract I before V

## Constraints
- No libraries beyond the standard library

## Examples
- 3 -> III
"""

FILES = {
    "pyproject.toml": (
        '[project]\nname = "roman-numerals"\nversion = "0.1.0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n'
    ),
    "roman_numerals/__init__.py": '"""Roman numerals."""\n',
    "tests/__init__.py": "",
    ".gitignore": "__pycache__/\n",
}
TESTS = "tests/test_roman.py"
CODE = "roman_numerals/roman.py"
BRANCH = "agentbot/tdd-issue-1"

IMPORT = "from roman_numerals.roman import to_roman\n"
ONE = '\n\ndef test_one() -> None:\n    assert to_roman(1) == "I"\n'
TWO = '\n\ndef test_two() -> None:\n    assert to_roman(2) == "II"\n'
FIVE = '\n\ndef test_five() -> None:\n    assert to_roman(5) == "V"\n'
THREE = '\n\ndef test_three() -> None:\n    assert to_roman(3) == "III"\n'
FOUR = '\n\ndef test_four() -> None:\n    assert to_roman(4) == "IV"\n'


def code(body: str, head: str = "") -> str:
    """roman.py with `body` as to_roman's body."""
    return (
        f'"""Roman numerals."""\n\n{head}\ndef to_roman(number: int) -> str:\n'
        f'    """The Roman numeral for `number`."""\n{body}'
    )


def table(pairs: str) -> str:
    """roman.py driven by a numeral table."""
    return code(
        '    out = ""\n    for value, letters in _NUMERALS:\n        while number >= value:\n'
        "            out += letters\n            number -= value\n    return out\n",
        head=f"_NUMERALS = [{pairs}]\n\n",
    )


def cycles() -> dict[int, Cycle]:
    """Four cycles; cycles 3 and 4 meet every rejection the runner and the diff check give."""
    two = IMPORT + ONE + TWO
    return {
        1: Cycle(1, TESTS, [IMPORT + ONE], "test_one", [(CODE, code('    return "I"\n'))]),
        2: Cycle(
            2,
            TESTS,
            [two],
            "test_two",
            [(CODE, code('    return "I" * number\n'))],
            refactor=[(CODE, table('(1, "I")'))],
        ),
        3: Cycle(
            3,
            TESTS,
            [
                two + "\n\ndef test_five() -> None\n    assert to_roman(5) == 'V'\n",  # syntax
                "import roman_helpers\n\n" + two + FIVE,  # imports what does not exist
                two + FIVE,
            ],
            "test_five",
            [
                (TESTS, two),  # the Implementer deletes test_five: refused
                (CODE, table('(5, "V"), (1, "I")')),
            ],
            refactor=[(CODE, table('(5, "v"), (1, "I")')), None],  # breaks test_five: reverted
        ),
        4: Cycle(
            4,
            TESTS,
            [two + FIVE + THREE, two + FIVE + FOUR],  # test_three passes at once: overshoot
            "test_four",
            [(TESTS, None), (CODE, table('(5, "V"), (4, "IV"), (1, "I")'))],  # rm: refused
        ),
    }


def config(extra: str = "") -> RepoConfig:
    """Explicit ruff and pytest commands on this interpreter, without our pytest plugins."""
    py = sys.executable
    text = fast_validation_yaml(extra).replace(
        f"  test: {py}", f"  test: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {py}"
    )
    return RepoConfig.from_text(text)


def issue(w: World) -> Job:
    number = w.gh.add_issue(REPO, title="Roman numerals", body=KATA, labels=["agent-tdd"]).number
    return Job(kind=JobKind.TDD, repo=REPO, number=number, actor="alice")


def replay(remote: Path, tmp: Path) -> dict[str, int]:
    """Run pytest on every commit of the branch: subject -> exit code."""
    clone = tmp / "replay"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    codes: dict[str, int] = {}
    for c in reversed(commits(remote, BRANCH, base="main")):
        subprocess.run(["git", "checkout", "-q", c.sha], cwd=clone, check=True)
        got = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=clone, env=env, capture_output=True, text=True,
        )  # fmt: skip
        codes[c.subject] = got.returncode
    return codes


def transcript_verdicts(data: Path) -> list[dict[str, object]]:
    """The runner's verdicts in the job's session transcript."""
    [folder] = [p for p in (data / "sessions").iterdir() if "tdd-1" in p.name]
    lines = (folder / "transcript.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == "verdict"]


def test_an_agent_tdd_issue_becomes_a_pr_of_green_cycles(tmp_path: Path) -> None:
    t, script = team(cycles())
    with world(tmp_path, script, files=FILES) as w:
        result = tdd(issue(w), w.env(config()))
        assert result.status == JobStatus.SUCCESS, result.error

        subjects = [c.subject for c in reversed(commits(w.remote, BRANCH, base="main"))]
        assert subjects == [
            "feat(roman-numerals): 1 is I",
            "feat(roman-numerals): 2 is II: repeat I",
            "refactor(roman-numerals): build the numeral from a table",
            "feat(roman-numerals): 5 is V",
            "feat(roman-numerals): 4 is IV: subtract I before V",
        ]
        assert set(replay(w.remote, tmp_path).values()) == {0}  # no commit has a red suite

        reasons = [(v["cycle"], v["phase"], v["ok"], v["reason"]) for v in transcript_verdicts(
            w.tmp / "data")]  # fmt: skip
        rejected = [(c, p, str(r).split(":")[0]) for c, p, ok, r in reasons if not ok]
        assert rejected == [
            (3, "red", "syntax error in the test"),
            (3, "red", "import error of the test file itself"),
            (3, "green", "refused"),
            (3, "refactor", "tests fail"),
            (4, "red", "overshoot"),
            (4, "green", "refused"),
        ]
        [pr] = w.gh.pulls(REPO)
        assert pr.pull is not None and not pr.pull.draft
        body = pr.body or ""
        assert "| 1 | 1 is I | `test_one` | missing name | 1/1/1 | none |" in body
        assert (
            "| 3 | 5 is V | `test_five` | assertion (rejected first: syntax error in the test,"
            " import error of the test file itself) | 3/2/2 | reverted |"
        ) in body
        assert (
            "| 4 | 4 is IV: subtract I before V | `test_four` | assertion (rejected first:"
            " overshoot) | 2/2/1 |"
        ) in body
        assert "4. 4 is IV: subtract I before V — ✅ `test_four`" in body
        assert "cycle 3: test attempt 1: syntax error in the test" in body
        assert "cycle 3: test attempt 2: import error of the test file itself" in body
        assert "cycle 4: test attempt 1: overshoot" in body
        assert "cycle 3: code attempt 1: refused: test files may not change" in body
        assert "cycle 4: code attempt 1: refused: test files may not change" in body
        assert "cycle 3: refactoring attempt 1 reverted: tests fail" in body
        assert "Closes #1" in body
        # A rejected GREEN goes back into the Implementer's own conversation (issue #26).
        retried = [
            r for r in w.llm.requests
            if "The runner rejected that code (attempt 1 of 3)" in json.dumps(r.json["messages"])
        ]  # fmt: skip
        assert retried and all("# TDD cycle" in json.dumps(r.json["messages"][0]) for r in retried)
        progress = w.gh.comments_on(REPO, 1)[-1].body
        assert "## Cycles" in progress and "✅ `test_four`" in progress

        # 4 picks + 2 verdict answers; tester 2 turns x 7; implementer 2 x 6; refactorer.
        assert t.calls(1) == 1 + 2 + 2 + 1
        assert t.calls(3) == 1 + 2 + 3 * 2 + 2 * 2 + 2 + 1


def straight() -> dict[int, Cycle]:
    """Four cycles with no rejection: 6 requests each (pick, test x2, code x2, refactor)."""
    tests = [IMPORT + ONE, IMPORT + ONE + TWO, IMPORT + ONE + TWO + FIVE]
    tests.append(tests[-1] + FOUR)
    codes = [
        code('    return "I"\n'),
        code('    return "I" * number\n'),
        table('(5, "V"), (1, "I")'),
        table('(5, "V"), (4, "IV"), (1, "I")'),
    ]
    names = ["test_one", "test_two", "test_five", "test_four"]
    return {
        n: Cycle(n, TESTS, [tests[n - 1]], names[n - 1], [(CODE, codes[n - 1])])
        for n in range(1, 5)
    }


def test_a_budget_stop_opens_a_draft_and_the_rerun_resumes_at_cycle_3(tmp_path: Path) -> None:
    t, script = team(straight())
    with world(tmp_path, script, files=FILES) as w:
        job = issue(w)
        stopped = tdd(job, w.env(config("budget:\n  max_turns: 12\n")))
        assert stopped.status == JobStatus.FAILED and "budget exhausted" in stopped.error
        assert len(w.llm.requests) == 12
        assert [c.subject for c in reversed(commits(w.remote, BRANCH, base="main"))] == [
            "feat(roman-numerals): 1 is I",
            "feat(roman-numerals): 2 is II: repeat I",
        ]
        [pr] = w.gh.pulls(REPO)
        assert pr.pull is not None and pr.pull.draft
        assert "**Stopped:** budget exhausted" in pr.body and "continues with cycle 3" in pr.body
        assert "3. 5 is V — ⬜ not covered yet" in pr.body and "Closes #1" not in pr.body
        [folder] = list((w.tmp / "data" / "sessions").iterdir())
        status = json.loads((folder / "status.json").read_text())
        assert status["completed_tasks"] == ["cycle 1: 1 is I", "cycle 2: 2 is II: repeat I"]
        assert "budget exhausted" in status["known_issues"][0]
        saved = json.loads((folder / "tdd.json").read_text())
        assert [c["cycle"] for c in saved["cycles"]] == [1, 2] and saved["stopped"]
        assert "agent-failed" in w.gh.labels_on(REPO, job.number or 0)  # README: any failure
        first_cost = stopped.cost_usd

        resumed = tdd(job, w.env(config()))
        assert resumed.status == JobStatus.SUCCESS, resumed.error
        assert len(w.llm.requests) == 24  # cycles 3 and 4 only
        assert (t.calls(1), t.calls(2), t.calls(3), t.calls(4)) == (6, 6, 6, 6)
        assert len(commits(w.remote, BRANCH, base="main")) == 4
        assert set(replay(w.remote, tmp_path).values()) == {0}
        [pr] = w.gh.pulls(REPO)
        # Cycles 1-2 come back from their commits (a refactoring try leaves no trace there).
        assert "| 1 | 1 is I | `test_one` | missing name | 1/1/0 | none |" in pr.body
        assert "| 3 | 5 is V | `test_five` | assertion | 1/1/1 | none |" in pr.body
        assert "4 of 4 requirement(s) done" in pr.body and "Closes #1" in pr.body
        # Every agent works in the prepared environment, as the IssueFixer's does.
        assert "The shell runs in the project's environment" in w.llm_requests_text()
        # Finished: the failure label goes, the cost and turns count both runs.
        assert "agent-failed" not in w.gh.labels_on(REPO, job.number or 0)
        total = first_cost + resumed.cost_usd
        assert f"${total:.4f}" in pr.body and "24 turns" in pr.body, pr.body
        assert pr.pull is not None and not pr.pull.draft  # marked ready (GraphQL)
        # The step summary shows TDD's own table: a row per cycle, never an empty one.
        summary = step_summary(resumed)
        assert "| cycle 3: 5 is V | done | `test_five`" in summary
        assert "|  |  |  |" not in summary.splitlines()  # an empty item row
        assert "Validation did not run" not in summary


def test_an_issue_without_requirements_is_answered_with_the_fix(tmp_path: Path) -> None:
    with world(tmp_path, [], files=FILES) as w:
        number = w.gh.add_issue(REPO, title="Roman", body="Make it nice.", labels=["agent-tdd"])
        job = Job(kind=JobKind.TDD, repo=REPO, number=number.number, actor="alice")
        result = tdd(job, w.env(config()))
        assert result.status == JobStatus.NEUTRAL and "no requirements found" in result.error
        [comment] = w.gh.comments_on(REPO, number.number)
        assert "add a `## Requirements` section" in comment.body
        assert w.gh.pulls(REPO) == [] and w.llm.requests == []


def test_an_empty_repository_gets_a_skeleton_first(tmp_path: Path) -> None:
    t, script = team(straight())
    kata = "# Roman Numerals\n\n## Requirements\n- 1 is I\n"
    with world(tmp_path, script, files={"README.md": "# roman\n"}) as w:
        number = w.gh.add_issue(REPO, title="Roman", body=kata, labels=["agent-tdd"]).number
        job = Job(kind=JobKind.TDD, repo=REPO, number=number, actor="alice")
        result = tdd(job, w.env(config()))
        assert result.status == JobStatus.SUCCESS, result.error
        subjects = [c.subject for c in reversed(commits(w.remote, BRANCH, base="main"))]
        assert subjects == [
            "chore: python project skeleton for TDD",
            "feat(roman-numerals): 1 is I",
        ]
        assert list(replay(w.remote, tmp_path).values()) == [5, 0]  # no test yet (5), then green
        assert t.calls(1) == 6


def test_a_runner_that_cannot_start_rejects_red_and_commits_no_cycle(tmp_path: Path) -> None:
    """The test command's runner is not there (and nothing can install it): every RED is an
    environment problem, never "error in the code under test"; no cycle is committed."""
    _, script = team(straight())
    with world(tmp_path, script, files=FILES) as w:
        cfg = config().model_copy(
            update={
                "validation": config().validation.model_copy(
                    update={"test": "no-such-test-runner -q"}
                )
            }
        )
        result = tdd(issue(w), w.env(cfg))
        assert result.status == JobStatus.FAILED, result
        pushed = subprocess.run(
            ["git", "for-each-ref", f"refs/heads/{BRANCH}"], cwd=w.remote,
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert pushed == "" or not any(
            c.subject.startswith("feat") for c in commits(w.remote, BRANCH, base="main")
        )
        reds = [v for v in transcript_verdicts(w.tmp / "data") if v["phase"] == "red"]
        assert reds and not any(v["ok"] for v in reds)
        assert all(str(v["reason"]).startswith("environment problem") for v in reds), reds
        assert "could not start" in str(reds[0]["reason"]), reds[0]


def test_an_unverified_gate_stops_the_session_with_its_reason(tmp_path: Path) -> None:
    """The gate's test stage finds no runner (the TDD suite, run with PYTHONDONTWRITEBYTECODE,
    does): GREEN is not accepted, the session stops saying why, no cycle lands (issue #25)."""
    _, script = team(straight())
    py = sys.executable
    test = (
        'sh -c \'[ -n "$PYTHONDONTWRITEBYTECODE" ] || exec no-such-test-runner;'
        f" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 exec {py} -m pytest -q -p no:cacheprovider'"
    )
    with world(tmp_path, script, files=FILES) as w:
        cfg = config().model_copy(
            update={"validation": config().validation.model_copy(update={"test": test})}
        )
        result = tdd(issue(w), w.env(cfg))
        assert result.status == JobStatus.FAILED, result
        assert "unverified" in (result.error or "") and "no-such-test-runner" in (
            result.error or ""
        )
        pushed = subprocess.run(
            ["git", "for-each-ref", f"refs/heads/{BRANCH}"], cwd=w.remote,
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert pushed == ""  # no cycle was committed
