"""A repository whose tests need a git submodule, through `agentbot fix` (issue #24).

The test vectors live in a repository of their own, a bare remote served over HTTP on
127.0.0.1, added as the submodule `tests/vectors` at a recorded commit; that remote's main
has moved on to a vector the code does not meet. The job clones the project from the world's remote
(the submodule left empty, as a clone leaves it); setup must initialise the submodule at
the commit the checkout records, so the suite runs with a count and passes. Real git
throughout; run with AGENTBOT_REALREPOS=1, marked `realrepo`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import Job, JobKind
from bot.workflows.fix.story import fix_issue
from tests.e2e import REPO, world
from tests.fakes.anthropic import finish, reply, tool_use
from tests.realrepos.githttp import GitHttp, git, serve

pytestmark = [
    pytest.mark.realrepo,
    pytest.mark.skipif(
        os.environ.get("AGENTBOT_REALREPOS") != "1",
        reason="real repositories: set AGENTBOT_REALREPOS=1 (installs from registries)",
    ),
    pytest.mark.timeout(900),
]

ROMAN = '''"""Roman numerals."""

PAIRS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(n: int) -> str:
    """`n` (1..3999) in Roman numerals."""
    out = ""
    for value, letters in PAIRS:
        while n >= value:
            out += letters
            n -= value
    return out
'''
FIXED = ROMAN.replace(
    '(500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]',
    '(900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),\n'
    '         (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]',
)
VECTORS = "\n".join(
    [
        "import json",
        "from pathlib import Path",
        "",
        "import pytest",
        "",
        "from roman import to_roman",
        "",
        "CASES = json.loads((Path(__file__).parent / 'vectors' / 'cases.json').read_text())",
        "",
        "",
        "@pytest.mark.parametrize(('n', 'expected'), CASES)",
        "def test_vector(n: int, expected: str) -> None:",
        "    assert to_roman(n) == expected",
        "",
    ]
)
NEW_TEST = "from roman import to_roman\n\n\ndef test_subtractive() -> None:\n"
NEW_TEST += "    assert [to_roman(n) for n in (4, 9, 1994)] == ['IV', 'IX', 'MCMXCIV']\n"
PYPROJECT = """[project]
name = "roman"
version = "0.1.0"
requires-python = ">=3.9"

[dependency-groups]
test = ["pytest"]

[tool.pytest.ini_options]
pythonpath = ["."]
"""
RECORDED = [[1, "I"], [3, "III"], [8, "VIII"], [30, "XXX"], [2000, "MM"]]
LATER = [*RECORDED, [0, "N"]]  # a later vector (zero) the code does not meet


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[GitHttp]:
    """Bare repositories served over HTTP on 127.0.0.1 for the test's duration."""
    with serve(tmp_path / "http") as served:
        yield served


def vectors_remote(tmp: Path, http: GitHttp) -> tuple[str, str]:
    """A bare remote for the vectors; returns its URL and the commit the project records."""
    bare = http.root / "vectors.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp / "vectors-work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    write(work, {"cases.json": json.dumps(RECORDED) + "\n"})
    git(work, "add", "-A")
    git(work, "commit", "-qm", "vectors")
    recorded = git(work, "rev-parse", "HEAD")
    write(work, {"cases.json": json.dumps(LATER) + "\n"})
    git(work, "commit", "-qam", "zero")
    git(work, "push", "-q", str(bare), "HEAD:refs/heads/main")
    return http.publish(bare), recorded


def seed_project(remote: Path, vectors: str, recorded: str, tmp: Path) -> None:
    """The project, its submodule pinned at `recorded`, pushed as the world's main."""
    work = tmp / "project"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    write(work, {"pyproject.toml": PYPROJECT, "roman.py": ROMAN, "tests/test_vectors.py": VECTORS})
    git(work, "submodule", "add", "-q", vectors, "tests/vectors")
    git(work / "tests" / "vectors", "checkout", "-q", recorded)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "roman numerals, tested against shared vectors")
    git(work, "push", "-q", "--force", str(remote), "HEAD:refs/heads/main")


def test_setup_initialises_the_test_submodule_at_its_recorded_commit(
    tmp_path: Path, http: GitHttp
) -> None:
    with world(tmp_path, [], files={"README": "placeholder\n"}) as w:
        vectors, recorded = vectors_remote(tmp_path, http)
        seed_project(w.remote, vectors, recorded, tmp_path)
        edits = [
            tool_use(
                "str_replace_based_edit_tool", {"command": "create", "path": p, "file_text": t}
            )
            for p, t in (("roman.py", FIXED), ("tests/test_subtractive.py", NEW_TEST))
        ]
        changed = ["roman.py", "tests/test_subtractive.py"]
        done = finish(summary="subtractive notation", root_cause="no subtractive pairs",
                      artifacts={"files_changed": changed})  # fmt: skip
        w.llm.add(reply(*edits), *[reply(done)] * 6)
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(
            REPO, number=7, title="to_roman(4) gives IIII", body="Expected IV, IX, XL, XC, CD, CM.",
            labels=["agent-fix", "bug"], user="bob",
        )  # fmt: skip
        result = fix_issue(
            Job(kind=JobKind.FIX_ISSUE, repo=REPO, number=7, actor="alice"),
            w.env(RepoConfig.from_text("")),
        )
        create = w.gh.calls_to("POST", rf"/repos/{REPO}/pulls")
        body = str(create[0].json["body"]) if create else ""
    print(f"\nsubmodule: {result.status} {result.error}\n{body}")
    setup_row = re.search(r"^\| setup \|.*$", body, re.MULTILINE)
    assert setup_row and "git submodule update --init --recursive" in setup_row[0], body
    test_row = re.search(r"^\| test \| (\S+) (\w+) .*$", body, re.MULTILINE)
    assert test_row, body
    counted = re.search(r"(\d+)/(\d+) passed", test_row[0])
    # 5 recorded vectors and the new test; the remote's later vector (zero) would fail, and
    # an empty submodule would fail to collect.
    assert counted and int(counted[2]) == 6, test_row[0]
    assert test_row[1] == "✅" and test_row[2] == "passed", test_row[0]
