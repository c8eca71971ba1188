"""A fixer's edits are kept only on the lines the change touched (issue #26 item 9)."""

from __future__ import annotations

from bot.validation.compare import LineMap
from bot.validation.hunks import keep_touched, touched_lines


def test_a_fixer_keeps_its_edits_only_on_the_lines_the_change_touched() -> None:
    before = "a=1\nb=2\nc=3\nd=4\n"
    after = "a = 1\nb = 2\nc = 3\nd = 4\n"
    # The change rewrote line 2 only (one hunk: base line 2 -> new line 2).
    touched = touched_lines(LineMap(((2, 1, 2, 1),)))
    assert keep_touched(before, after, touched) == "a=1\nb = 2\nc=3\nd=4\n"
    # An insertion after line 4 touches lines 4 and 5.
    assert touched_lines(LineMap(((4, 0, 5, 1),))) == {5}
    assert touched_lines(LineMap(((4, 1, 3, 0),))) == {3, 4}
