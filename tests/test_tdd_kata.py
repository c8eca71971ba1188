"""Kata markdown and plain feature requests become requirements; bad ones say how to fix them."""

from __future__ import annotations

import pytest

from bot.errors import KataParseError
from bot.tdd.kata import parse_kata
from bot.tdd.skeleton import package_name, skeleton_files

KATA = """# Bowling

## Description
Score a game of ten-pin bowling.

## Requirements
1. A gutter game scores 0
2. [ ] All ones score 20,
   one per frame
- A spare adds the next roll

## Constraints
- Tests use no mocks
- No global state

## Examples
- 20 rolls of 1 -> 20
```
roll(10)
```
"""


def test_a_kata_has_its_sections() -> None:
    kata = parse_kata(KATA, "KATA.md")
    assert kata.title == "Bowling" and kata.description == "Score a game of ten-pin bowling."
    assert kata.requirements == [
        "A gutter game scores 0",
        "All ones score 20, one per frame",
        "A spare adds the next roll",
    ]
    assert [(c.description, c.applies_to) for c in kata.constraints] == [
        ("Tests use no mocks", "tests"),
        ("No global state", "code"),
    ]
    assert kata.examples == ["20 rolls of 1 -> 20", "roll(10)"]


def test_a_plain_feature_request_uses_its_bullets_and_the_issue_title() -> None:
    body = "We need a stack.\n\n- push adds on top\n- pop takes the top\n\n```\n- not me\n```\n"
    kata = parse_kata(body, "issue #3", title="Stack")
    assert kata.title == "Stack" and kata.description.startswith("We need a stack.")
    assert kata.requirements == ["push adds on top", "pop takes the top"]


@pytest.mark.parametrize(
    ("text", "title", "message"),
    [
        ("# T\n\n## Requirements\n\nsoon\n", "", "line 3: `## Requirements` lists nothing"),
        ("Just prose.", "Issue", "no requirements found"),
        ("- a\n", "", "line 1: the kata has no title"),
    ],
)
def test_a_kata_without_requirements_or_title_names_the_fix(
    text: str, title: str, message: str
) -> None:
    with pytest.raises(KataParseError, match=message):
        parse_kata(text, "KATA.md", title=title)


def test_skeletons_are_named_after_the_kata() -> None:
    assert package_name("Roman Numerals!") == "roman_numerals"
    assert package_name("99 Bottles") == "kata_99_bottles"
    assert "roman_numerals/__init__.py" in skeleton_files("python", "Roman Numerals")
    assert '"test": "node --test"' in skeleton_files("js", "Roman")["package.json"]
    with pytest.raises(ValueError, match="one of python, js"):
        skeleton_files("cobol", "Roman")
