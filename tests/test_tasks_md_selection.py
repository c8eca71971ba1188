"""Task selection: `T010-T015`, `T012,T014`, `phase 3`, `US2`, and dependencies left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.errors import TaskParseError
from bot.tasks_md import blockers, parse_selection, parse_tasks, select

TASKS = """## Phase 1: Setup
- [x] T001 Create the package
- [ ] T002 Add config
## Phase 2: User Story 1 - Greet (Priority: P1)
- [ ] T010 [P] [US1] hello in a.py
- [ ] T011 [P] [US1] bye in b.py
- [ ] T011a [US1] both in c.py (depends on T010, T011)
- [ ] T012 [US1] docs (depends on T002)
## Phase 3: User Story 2 - Shout (Priority: P2)
- [ ] T013 [US2] shout in d.py (depends on T001)
- [ ] T014 [US2] whisper in e.py
- [ ] T015 Polish
"""
PLAN = parse_tasks(TASKS)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("T010-T011", {"T010", "T011", "T011a"}),
        ("T010..T012", {"T010", "T011", "T011a", "T012"}),
        ("T012,T014", {"T012", "T014"}),
        ("t012, T014", {"T012", "T014"}),
        ("phase 3", {"T013", "T014", "T015"}),
        ("Phase2", {"T010", "T011", "T011a", "T012"}),
        ("US2", {"T013", "T014"}),
        ("us2 T001", {"T001", "T013", "T014"}),
        ("T011a", {"T011a"}),
        ("`T002`", {"T002"}),
    ],
)
def test_a_selection_names_exactly_its_tasks(text: str, want: set[str]) -> None:
    assert select(PLAN, parse_selection(text)) == want


def test_an_empty_selection_is_every_task() -> None:
    assert select(PLAN, parse_selection("  ")) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("T099", "not in this tasks.md: T099"),
        ("phase 7", "not in this tasks.md: phase 7"),
        ("US9", "not in this tasks.md: US9"),
        ("T020-T030", "not in this tasks.md: T020-T030"),
        ("T099 phase 7", "not in this tasks.md: T099, phase 7"),
    ],
)
def test_a_selection_of_what_the_file_lacks_names_it(text: str, message: str) -> None:
    with pytest.raises(TaskParseError, match=message):
        select(PLAN, parse_selection(text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("everything", r"cannot read 'everything' as a task selection; use T010-T015"),
        ("phase two", r"cannot read 'phase'"),
        ("T015-T010", r"runs backwards; write T010-T015"),
        ("T1", r"cannot read 'T1'"),
        ("phase \u00b2", r"cannot read 'phase'"),
        ("phase\u00b2", r"cannot read 'phase\u00b2'"),
        ("T" + "9" * 5000, r"cannot read 'T9{36}\.\.\.'"),
        ("T001-T" + "9" * 5000, r"cannot read 'T001-T9{31}\.\.\.'"),
        ("US" + "1" * 5000, r"cannot read 'US1{35}\.\.\.'"),
    ],
)
def test_an_unreadable_selection_says_what_to_write(text: str, message: str) -> None:
    with pytest.raises(TaskParseError, match=message):
        parse_selection(text)


def test_unticked_dependencies_outside_the_selection_block_a_task() -> None:
    chosen = select(PLAN, parse_selection("T011a T012 T013"))
    assert blockers(PLAN, "T011a", chosen) == ["T010", "T011"]
    assert blockers(PLAN, "T012", chosen) == ["T002"]
    assert blockers(PLAN, "T013", chosen) == []  # T001 is ticked
    assert blockers(PLAN, "T011a", select(PLAN, parse_selection("T010-T011"))) == []
    assert blockers(PLAN, "T012", None) == []


REAL = sorted(p for p in (Path(__file__).parent / "data" / "tasks_md").rglob("*.tasks.md"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_every_phase_and_story_of_a_real_file_can_be_selected(path: Path) -> None:
    plan = parse_tasks(path.read_text(encoding="utf-8"))
    for phase in plan.phases:
        if phase.number is not None:
            want = {t.id for t in plan.tasks if t.phase == phase.index}
            assert select(plan, parse_selection(f"phase {phase.number}")) == want
    for story in {t.story for t in plan.tasks if t.story}:
        want = {t.id for t in plan.tasks if t.story == story}
        assert select(plan, parse_selection(story.lower())) == want
    ids = ",".join(t.id for t in plan.tasks)
    assert select(plan, parse_selection(ids)) == {t.id for t in plan.tasks}
