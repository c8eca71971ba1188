"""Suggestions for a fork's pull request: applied back the way GitHub commits them, they give
exactly the validated files; what they cannot carry is named for a patch."""

from __future__ import annotations

import random
import re
from typing import Any, cast

import pytest

from bot.followup.suggestions import Plan, commentable, fence_for, plan
from bot.outbound.text import TextGuard
from bot.ports import GitHubPort
from bot.ports.recording import RecordingGitHub

BLOCK = re.compile(r"\A(`{3,})suggestion\n(?P<text>.*)\1\Z", re.DOTALL)
EVERYWHERE = {"f.py": [(1, 10_000)]}


def commit_suggestions(
    files: dict[str, str | None], comments: list[dict[str, Any]]
) -> dict[str, str | None]:
    """GitHub's "Commit suggestions", from the posted comments alone (independent of the plan)."""
    out = dict(files)
    by_path: dict[str, list[dict[str, Any]]] = {}
    for c in comments:
        assert c["side"] == "RIGHT"
        by_path.setdefault(c["path"], []).append(c)
    for path, found in by_path.items():
        text = out[path]
        assert text is not None
        lines = text.splitlines(keepends=True)
        last_open = not text.endswith("\n")
        for c in sorted(found, key=lambda c: c.get("start_line", c["line"]), reverse=True):
            m = BLOCK.match(c["body"])
            assert m, c["body"]
            start, end = c.get("start_line", c["line"]), c["line"]
            new = m.group("text")
            if end == len(lines) and last_open:
                new = new.removesuffix("\n")
            lines[start - 1 : end] = new.splitlines(keepends=True)
        out[path] = "".join(lines)
    return out


def roundtrip(old: str, new: str) -> Plan:
    got = plan({"f.py": old}, {"f.py": new}, EVERYWHERE)
    assert got.patched == ()
    comments = [s.comment() for s in got.suggestions]
    assert commit_suggestions({"f.py": old}, comments)["f.py"] == new
    return got


@pytest.mark.parametrize(
    ("old", "new", "hunks"),
    [
        ("a\nb\nc\n", "a\nB\nc\n", 1),  # replace one line
        ("a\nb\nc\nd\n", "a\nd\n", 1),  # delete lines
        ("a\nb\n", "a\nx\ny\nb\n", 1),  # insert in the middle: anchored on `a`
        ("a\nb\n", "top\na\nb\n", 1),  # insert at the top: anchored on the first line
        ("a\nb\n", "a\nb\nend\n", 1),  # append
        ("a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\nF\n", 2),  # two hunks
        ("a\nb", "a\nB", 1),  # no final newline, kept
        ("a\n```\nb\n", "a\n````\nb\n", 1),  # backticks in the text
    ],
)
def test_each_hunk_is_one_suggestion_that_applies_back_exactly(
    old: str, new: str, hunks: int
) -> None:
    assert len(roundtrip(old, new).suggestions) == hunks


def test_an_insertion_repeats_the_line_it_is_anchored_on() -> None:
    (s,) = roundtrip("a\nb\n", "a\nx\nb\n").suggestions
    assert (s.start_line, s.line, s.text) == (1, 1, "a\nx\n")
    assert "start_line" not in s.comment()


def test_a_multi_line_hunk_spans_start_line_to_line() -> None:
    (s,) = roundtrip("a\nb\nc\nd\n", "a\nX\nY\nZ\nd\n").suggestions
    assert s.comment() | {"body": ""} == {
        "path": "f.py",
        "start_line": 2,
        "line": 3,
        "side": "RIGHT",
        "start_side": "RIGHT",
        "body": "",
    }


def test_random_edits_apply_back_exactly() -> None:
    rng = random.Random(27)
    words = ["alpha\n", "beta\n", "gamma\n", "delta\n", "```\n", "@x\n", "\n"]
    for _ in range(300):
        old = [rng.choice(words) for _ in range(rng.randint(1, 12))]
        new = list(old)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(new))
            op = rng.choice(["ins", "del", "rep"])
            if op == "ins" or not new:
                new[at:at] = [rng.choice(words) for _ in range(rng.randint(1, 3))]
            elif op == "del" and len(new) > 1:
                del new[min(at, len(new) - 1)]
            else:
                new[min(at, len(new) - 1)] = rng.choice(words)
        if new and new != old:
            roundtrip("".join(old), "".join(new))


def test_what_a_suggestion_cannot_carry_is_patched() -> None:
    shown = {"mod.py": [(1, 3)], "far.py": [(1, 2)]}
    old = {
        "mod.py": "a\nb\nc\n",
        "far.py": "1\n2\n3\n4\n5\n6\n",
        "gone.py": "x\n",
        "crlf.py": "a\r\nb\r\n",
        "eol.py": "a\n",
    }
    new = {
        "mod.py": "a\nB\nc\n",
        "far.py": "1\n2\n3\n4\n5\nsix\n",  # line 6 is outside the pull request's diff
        "gone.py": None,
        "crlf.py": "a\r\nB\r\n",
        "eol.py": "a",
        "new.py": "fresh\n",
    }
    shown |= {p: [(1, 99)] for p in ("gone.py", "crlf.py", "eol.py")}
    got = plan(old, new, shown)
    assert [s.path for s in got.suggestions] == ["mod.py"]
    assert got.patched == ("crlf.py", "eol.py", "far.py", "gone.py", "new.py")


def test_commentable_lines_are_the_head_side_of_each_hunk() -> None:
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n"
        "@@ -20 +21,2 @@\n-q\n+r\n+s\n"
        "diff --git a/y.py b/y.py\n--- a/y.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
        "diff --git a/z.py b/z.py\n--- /dev/null\n+++ b/z.py\n@@ -0,0 +1 @@\n+z\n"
    )
    assert commentable(diff) == {"x.py": [(1, 4), (21, 22)], "z.py": [(1, 1)]}


def test_a_fence_is_longer_than_any_backtick_run_in_its_text() -> None:
    assert fence_for("plain") == "```"
    assert fence_for("a ```` b") == "`````"
    body = roundtrip("x\n", "```\n@team ![p](https://e.x/p.png)\n```\n").suggestions[0].body()
    assert body.startswith("````suggestion\n") and body.endswith("\n````")


def test_the_text_guard_keeps_a_suggestion_whole_but_defuses_anything_around_it() -> None:
    guard = TextGuard(secrets=lambda: ["hunter2-secret-value"])
    code = "@pytest.fixture\ndef f() -> str:\n    return '![x](https://e.x/p.png) @alice'\n"
    (s,) = roundtrip("x = 1\n", code).suggestions
    sent = guard.clean_fields({"comments": [s.comment()]})["comments"][0]["body"]
    assert sent == s.body()  # committed as code: not one byte changed
    # Text after a line that closes the fence is prose again: defused.
    cleaned = guard.clean(f"```suggestion\n```\n{code}```")
    assert "@alice" not in cleaned and "https://e.x/p.png" not in cleaned
    # Prose around a block is defused, the block is not.
    assert guard.clean(f"Hi @bob\n{s.body()}") == f"Hi @\u200bbob\n{s.body()}"
    # Secrets are redacted even inside a suggestion.
    leaked = guard.clean("```suggestion\nkey = 'hunter2-secret-value'\n```")
    assert "hunter2-secret-value" not in leaked


def test_diff_blocks_of_our_review_body_stay_exact_until_anything_could_swallow_them() -> None:
    guard = TextGuard(secrets=list)
    patch = "```diff\n+@pytest.fixture\n+x = '![p](https://e.x/p.png)'\n```\n"
    body = f"Apply this:\n\n{patch}\nThen ask @alice.\n"
    assert guard.clean(body) == body.replace("@alice", "@\u200balice")
    for before in ("<pre>\n", "```\n", "~~~\n", "<!--\n"):
        cleaned = guard.clean(before + patch)
        assert "@pytest" not in cleaned and "https://e.x/p.png" not in cleaned


def test_a_dry_run_records_the_review_with_its_suggestions_and_sends_nothing() -> None:
    echoed: list[str] = []
    nothing = cast(GitHubPort, object())  # any call to it would fail
    gh = RecordingGitHub(nothing, echoed.append)
    (s,) = roundtrip("a\nb\n", "a\nB\n").suggestions
    url = gh.create_review("o/r", 1, commit_id="c" * 40, body="gate", comments=[s.comment()])
    assert url == "" and len(echoed) == 1
    assert echoed[0].startswith("[dry-run] would review o/r#1 at cccccccccccc")
    assert "gate" in echoed[0] and f"f.py:2\n{s.body()}" in echoed[0]
