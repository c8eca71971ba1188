"""tasks.md parser, execution order and checkbox writer: Spec Kit files, errors, properties."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import TaskParseError
from bot.tasks_md import Task, TaskPlan, parse_tasks, tick

DATA = Path(__file__).parent / "data" / "tasks_md"
CORPUS = sorted((DATA / "maverick").glob("*.tasks.md"))
FULL = (DATA / "synthetic" / "speckit_full.md").read_text(encoding="utf-8")


def ids(batches: list[list[Task]]) -> list[list[str]]:
    return [[t.id for t in batch] for batch in batches]


def differences(a: str, b: str) -> list[int]:
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


# --- a Spec Kit style file -------------------------------------------------------------


def test_phases_of_a_spec_kit_file() -> None:
    plan = parse_tasks(FULL)
    got = [(p.index, p.number, p.title, p.line) for p in plan.phases]
    assert got == [
        (0, 1, "Setup (Project Initialization)", 16),
        (1, 2, "Foundational", 28),
        (2, 3, "User Story 1 - Login (Priority: P1) 🎯 MVP", 38),
        (3, 4, "Polish", 61),
    ]


def test_tasks_of_a_spec_kit_file() -> None:
    plan = parse_tasks(FULL)
    assert [t.id for t in plan.tasks] == [
        *("T001", "T002", "T003", "T004", "T005", "T006"),
        *("T010", "T011", "T011a", "T012", "T013", "T014"),
    ]
    t001, t002, t003 = plan.get("T001"), plan.get("T002"), plan.get("T003")
    assert (t001.done, t002.done, t003.done) == (True, False, True)
    assert (t001.parallel, t002.parallel) == (False, True)
    assert t002.tags == ["Setup"] and t002.story is None
    assert t002.description == "Add ruff config in pyproject.toml"
    assert (t002.line, t002.end_line, t002.phase) == (21, 21, 0)


def test_continuation_lines_join_with_one_space() -> None:
    t005 = parse_tasks(FULL).get("T005")
    assert t005.description == (
        "Create Session model in src/models/session.py with an expiry field"
        " and a tab-indented continuation line"
    )
    assert (t005.line, t005.end_line) == (33, 35)


def test_story_tags_and_parallel_in_any_order() -> None:
    plan = parse_tasks(FULL)
    t012 = plan.get("T012")
    assert (t012.parallel, t012.tags, t012.story) == (True, ["US1"], "US1")
    assert plan.get("T013").tags == ["Polish"]


def test_inline_dependencies_in_all_spellings() -> None:
    plan = parse_tasks(FULL)
    assert plan.get("T006").depends_on == ["T004", "T005"]
    assert plan.get("T011").depends_on == ["T010"]
    assert plan.get("T011a").depends_on == ["T011", "T010"]  # "Depends on", continuation line
    assert plan.get("T013").depends_on == ["T011a", "T012"]  # "depends on:" and "&"
    assert plan.get("T014").depends_on == ["T010", "T011", "T011a", "T012"]  # a range
    assert plan.get("T001").depends_on == []


def test_bullet_markers_star_and_plus_are_tasks() -> None:
    plan = parse_tasks(FULL)
    assert (plan.get("T013").line, plan.get("T014").line) == (63, 64)


def test_prose_fences_and_notes_are_not_tasks() -> None:
    plan = parse_tasks(FULL)
    lines = {t.line for t in plan.tasks}
    assert not lines & set(range(46, 60))  # the fenced "Parallel Example" blocks
    assert not {"T997", "T998", "T999"} & {t.id for t in plan.tasks}
    assert max(lines) == 64  # nothing from "## Notes" (`- [P] tasks = ...`, `- T008, ...`)
    assert [p.title for p in plan.phases][-1] == "Polish"  # "## Notes" holds no task


def test_tasks_before_any_heading_form_an_implicit_phase() -> None:
    plan = parse_tasks((DATA / "synthetic" / "implicit_phase.md").read_text(encoding="utf-8"))
    got = [(p.index, p.number, p.title, p.line) for p in plan.phases]
    assert got == [
        (0, None, "", 0),
        (1, 1, "Real phase", 7),
        (2, None, "Cleanup", 11),
        (3, 7, "Phase 7", 15),
    ]
    assert [t.phase for t in plan.tasks] == [0, 0, 0, 1, 2, 3]
    assert ids(plan.batches()) == [["T001"], ["T002", "T003"], ["T004"], ["T005"], ["T006"]]


def test_crlf_and_bom_parse_like_lf() -> None:
    plain = parse_tasks(FULL)
    assert parse_tasks(FULL.replace("\n", "\r\n")) == plain
    assert parse_tasks("\ufeff" + FULL) == plain
    assert parse_tasks("\ufeff- [x] T001 First").get("T001").done


def test_empty_text_is_an_empty_plan() -> None:
    assert parse_tasks("") == TaskPlan(phases=[], tasks=[])
    assert parse_tasks("# Title\n\nJust prose.\n").batches() == []


def test_unclosed_fence_without_tasks_is_prose() -> None:
    plan = parse_tasks("## Phase 1: A\n- [ ] T001 Do it\n\n```\nsome code\n")
    assert [t.id for t in plan.tasks] == ["T001"]


# --- malformed files: one test per case, each with its line number ---------------------

MALFORMED = [
    ("bad checkbox y", "## P\n\n- [y] T001 Do it\n", 3, "bad checkbox [y]"),
    ("empty checkbox", "- [ ] T001 Ok\n- [] T002 Do it\n", 2, "bad checkbox []"),
    ("checkbox xx", "- [xx] T001 Do it\n", 1, "bad checkbox [xx]"),
    ("no checkbox", "## P\n- [P] T001 Do it\n", 2, "bad checkbox [P]"),
    ("no description", "## P\n\n\n- [ ] T001\n", 4, "T001 has no description"),
    ("only tags", "- [ ] T001 [P] [US1]  \n", 1, "T001 has no description"),
    ("short id", "- [ ] T001 Ok\n\n- [ ] T12 Do it\n", 3, "bad task id 'T12'"),
    ("id with colon", "- [ ] T001: Do it\n", 1, "bad task id 'T001:'"),
    ("id capital suffix", "- [ ] T001A Do it\n", 1, "bad task id 'T001A'"),
    ("no space after box", "- [x]T001 Do it\n", 1, "space between the checkbox"),
    ("nested task", "- [ ] T001 Do it\n  - [ ] T002 Sub\n", 2, "column 0"),
    ("duplicate id", "- [ ] T001 A\n- [ ] T002 B\n- [x] T001 C\n", 3, "duplicate task id T001"),
    ("unknown dep", "- [ ] T001 A\n- [ ] T002 B\n  after all, depends on T009\n", 3, "T009"),
    ("unknown range end", "- [ ] T001 A\n- [ ] T002 B depends on T001-T005\n", 2, "T005"),
    (
        "backwards range",
        "- [ ] T001 A\n- [ ] T003 C\n- [ ] T004 depends on T003-T001\n",
        3,
        "backwards",
    ),
    (
        "dep on later phase",
        "## Phase 1: A\n- [ ] T001 A depends on T002\n## Phase 2: B\n- [ ] T002 B\n",
        2,
        "later phase",
    ),
    (
        "cycle",
        "- [ ] T001 A depends on T002\n- [ ] T002 B depends on T001\n",
        1,
        "T001 -> T002 -> T001",
    ),
    ("self dependency", "- [ ] T001 A\n- [ ] T002 B (depends on T002)\n", 2, "T002 -> T002"),
    ("unclosed fence", "- [ ] T001 A\n\n```\n- [ ] T002 hidden\n", 3, "hides the task line 4"),
]


@pytest.mark.parametrize(
    ("text", "line", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_file_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(TaskParseError) as info:
        parse_tasks(text)
    assert info.value.line_number == line
    assert message in info.value.message
    assert str(info.value).startswith(f"line {line}: ")


def test_malformed_in_crlf_file_has_the_same_line() -> None:
    with pytest.raises(TaskParseError) as info:
        parse_tasks("## P\r\n\r\n- [y] T001 Do it\r\n")
    assert info.value.line_number == 3


def test_task_like_lines_in_fences_are_never_errors() -> None:
    text = "- [ ] T001 A\n```\n- [y] T12 broken\n- [ ] T001 duplicate\n```\n"
    assert [t.id for t in parse_tasks(text).tasks] == ["T001"]


# --- the vendored Spec Kit corpus ------------------------------------------------------

INDEPENDENT_TASK = re.compile(r"^- \[([ xX])\] (T\d{3,}[a-z]?) ")


def independent_scan(text: str) -> tuple[list[tuple[int, str, bool]], list[int]]:
    """Task lines (line, id, done) outside fences, and the fenced line numbers: a plain scan."""
    tasks, fenced, inside = [], [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if inside:
            fenced.append(number)
        elif m := INDEPENDENT_TASK.match(line):
            tasks.append((number, m.group(2), m.group(1) != " "))
    return tasks, fenced


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_task_line_of_the_corpus_is_found(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected, fenced = independent_scan(text)
    plan = parse_tasks(text)
    assert [(t.line, t.id, t.done) for t in plan.tasks] == expected
    assert len(expected) > 40
    assert not {t.line for t in plan.tasks} & set(fenced)
    assert len(plan.phases) >= 6 and all(p.number is not None for p in plan.phases)
    # every line of every task is accounted for: no task swallows the next line of prose
    assert all(t.end_line == t.line for t in plan.tasks)


def test_corpus_fences_quote_task_ids_that_do_not_become_tasks() -> None:
    text = (DATA / "maverick" / "009-fly-workflow.tasks.md").read_text(encoding="utf-8")
    _, fenced = independent_scan(text)
    lines = text.splitlines()
    quoted = [n for n in fenced if re.search(r"\bT0\d\d\b", lines[n - 1])]
    assert len(quoted) >= 10  # `Task: "T025: Test ..."` lines inside ```bash
    assert not {t.line for t in parse_tasks(text).tasks} & set(quoted)


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_batches_cover_every_task_once_in_phase_order(path: Path) -> None:
    plan = parse_tasks(path.read_text(encoding="utf-8"))
    for include_done in (True, False):
        batches = plan.batches(include_done=include_done)
        flat = [t.id for b in batches for t in b]
        want = [t.id for t in plan.tasks if include_done or not t.done]
        assert sorted(flat) == sorted(want) and len(flat) == len(set(flat))
        phases = [b[0].phase for b in batches]
        assert phases == sorted(phases)
        assert all(len({t.phase for t in b}) == 1 for b in batches)
        assert all(all(t.parallel for t in b) for b in batches if len(b) > 1)


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_tick_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    plan = parse_tasks(text)
    out = text
    for task in plan.tasks:
        assert tick(text, task.id, done=task.done) == text  # already so: nothing changes
        out = tick(out, task.id, done=not task.done)
    flipped = parse_tasks(out)
    assert [t.done for t in flipped.tasks] == [not t.done for t in plan.tasks]
    assert len(differences(text, out)) == len(plan.tasks)


# --- execution order -------------------------------------------------------------------


def test_batches_of_the_spec_kit_file() -> None:
    plan = parse_tasks(FULL)
    assert ids(plan.batches()) == [
        ["T002"],
        ["T004", "T005"],
        ["T006"],
        ["T010"],
        ["T011"],
        ["T011a"],
        ["T012"],
        ["T013"],
        ["T014"],
    ]
    assert ids(plan.batches(include_done=True))[:2] == [["T001"], ["T002", "T003"]]


def test_phases_are_barriers() -> None:
    plan = parse_tasks("## Phase 1: A\n- [ ] T001 [P] A\n## Phase 2: B\n- [ ] T002 [P] B\n")
    assert ids(plan.batches()) == [["T001"], ["T002"]]


def test_parallel_runs_group_and_sequential_tasks_run_alone() -> None:
    text = "- [ ] T001 A\n- [ ] T002 [P] B\n- [ ] T003 [P] C\n- [ ] T004 D\n- [ ] T005 [P] E\n"
    assert ids(parse_tasks(text).batches()) == [["T001"], ["T002", "T003"], ["T004"], ["T005"]]


def test_dependency_inside_a_parallel_run_splits_it() -> None:
    text = "- [ ] T001 [P] A\n- [ ] T002 [P] B depends on T001\n- [ ] T003 [P] C\n"
    assert ids(parse_tasks(text).batches()) == [["T001", "T003"], ["T002"]]


def test_dependency_on_a_later_task_delays_the_dependent() -> None:
    text = "- [ ] T001 A (depends on T003)\n- [ ] T002 B\n- [ ] T003 C\n"
    assert ids(parse_tasks(text).batches()) == [["T002"], ["T003"], ["T001"]]
    text = "- [ ] T001 [P] A\n- [ ] T002 B depends on T004\n- [ ] T003 [P] C\n- [ ] T004 [P] D\n"
    assert ids(parse_tasks(text).batches()) == [["T001", "T003", "T004"], ["T002"]]


def test_done_tasks_are_skipped_and_satisfy_dependencies() -> None:
    text = "- [ ] T001 [P] A\n- [x] T002 B\n- [ ] T003 [P] C depends on T002\n- [X] T004 D\n"
    plan = parse_tasks(text)
    assert ids(plan.batches()) == [["T001", "T003"]]  # the done T002 no longer splits the run
    assert ids(plan.batches(include_done=True)) == [["T001"], ["T002"], ["T003"], ["T004"]]


def test_only_selects_tasks_and_phases() -> None:
    plan = parse_tasks(FULL)
    assert ids(plan.batches(only={"T011a", "T006"})) == [["T006"], ["T011a"]]
    assert ids(plan.batches(only=plan.select(phases=[2]))) == [["T004", "T005"], ["T006"]]
    assert ids(plan.batches(only=plan.select(tasks=["T001"]))) == []  # done
    assert ids(plan.batches(only={"T001"}, include_done=True)) == [["T001"]]
    assert plan.select() == {t.id for t in plan.tasks}
    assert plan.select(tasks=["T002"], phases=[4]) == {"T002", "T013", "T014"}


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda p: p.batches(only={"T777"}), "T777"),
        (lambda p: p.select(tasks=["T777"]), "T777"),
        (lambda p: p.select(phases=[9]), "phase 9"),
    ],
)
def test_selecting_unknown_tasks_is_an_input_error(call: object, named: str) -> None:
    plan = parse_tasks(FULL)
    with pytest.raises(TaskParseError, match=named):
        call(plan)  # type: ignore[operator]


def test_dependents_follow_explicit_dependencies_transitively() -> None:
    plan = parse_tasks(FULL)
    assert plan.dependents("T010") == {"T011", "T011a", "T013", "T014"}
    assert plan.dependents("T011a") == {"T013", "T014"}
    assert plan.dependents("T004") == {"T006"}
    assert plan.dependents("T002") == set()  # later phases do not depend on it implicitly


def test_lookups_of_unknown_ids_raise_key_error() -> None:
    plan = parse_tasks(FULL)
    with pytest.raises(KeyError):
        plan.get("T404")
    with pytest.raises(KeyError):
        plan.dependents("T404")
    with pytest.raises(KeyError):
        tick(FULL, "T999")  # only quoted in a fence


# --- tick ------------------------------------------------------------------------------


def test_tick_changes_only_that_checkbox() -> None:
    out = tick(FULL, "T004")
    at = FULL.index("- [ ] T004") + 3
    assert differences(FULL, out) == [at] and out[at] == "x"
    assert parse_tasks(out).get("T004").done
    assert tick(out, "T004", done=False) == FULL


def test_tick_keeps_capital_x_and_is_idempotent() -> None:
    assert tick(FULL, "T001") == FULL
    unticked = tick(FULL, "T001", done=False)
    assert differences(FULL, unticked) == [FULL.index("[X] T001") + 1]
    assert tick(FULL, "T002", done=False) == FULL


def test_tick_keeps_crlf_and_a_missing_final_newline() -> None:
    text = FULL.replace("\n", "\r\n").rstrip("\r\n")
    out = tick(tick(text, "T014"), "T011a")
    assert len(differences(text, out)) == 2
    assert out.count("\r\n") == text.count("\r\n") and not out.endswith("\n")
    assert out.encode("utf-8") == text.encode("utf-8").replace(
        b"+ [ ] T014", b"+ [x] T014"
    ).replace(b"- [ ] T011a", b"- [x] T011a")


def test_tick_after_a_bom() -> None:
    assert tick("\ufeff- [ ] T001 A", "T001") == "\ufeff- [x] T001 A"


def test_tick_refuses_a_malformed_file() -> None:
    with pytest.raises(TaskParseError):
        tick("- [ ] T001 A\n- [y] T002 B\n", "T001")


# --- properties ------------------------------------------------------------------------

PROSE = [
    "**Checkpoint**: all good - run `pytest`",
    "- [P] tasks = different files, no dependencies",
    "- **[P]**: Can run in parallel",
    "| T001 | a table |",
    "### Subsection",
    "- T008, T009 can run in parallel",
    '```bash\n- [ ] T900 [P] quoted, not a task\nTask: "T901 also quoted"\n```',
    "~~~\n- [x] T902 quoted\n~~~",
    "",
]
WORDS = st.sampled_from(
    ["add", "model", "in", "src/x.py", "`code`", "(note)", "[P]", "é", "—", "✓", "T", "#1"]
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A random tasks.md (LF or CRLF, with or without a final newline) and its task ids."""
    lines: list[str] = ["# Tasks: random"]
    task_ids: list[str] = []
    number = 1
    for phase in range(draw(st.integers(1, 4))):
        sep = draw(st.sampled_from([":", " —", " –", " -", ""]))
        lines.append(f"## Phase {phase + 1}{sep} Title {phase}")
        for _ in range(draw(st.integers(0, 6))):
            if draw(st.booleans()):
                lines.append(draw(st.sampled_from(PROSE)))
            number += draw(st.integers(1, 3))
            task_id = f"T{number:03d}" + draw(st.sampled_from(["", "", "a"]))
            task_ids.append(task_id)
            box = draw(st.sampled_from([" ", "x", "X"]))
            tags = draw(st.lists(st.sampled_from(["[P]", "[US1]", "[Setup]"]), max_size=2))
            words = draw(st.lists(WORDS, min_size=0, max_size=5))
            lines.append(" ".join([f"- [{box}] {task_id}", *tags, "Do", *words]))
            for _ in range(draw(st.integers(0, 2))):
                lines.append("      more " + " ".join(draw(st.lists(WORDS, max_size=3))))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join("\n".join(lines).split("\n"))
    return text + draw(st.sampled_from(["", newline])), task_ids


@settings(max_examples=100, deadline=None)
@given(data=documents(), picks=st.data(), value=st.booleans())
def test_tick_any_subset_then_parse_again(
    data: tuple[str, list[str]], picks: st.DataObject, value: bool
) -> None:
    text, task_ids = data
    before = parse_tasks(text)
    assert [t.id for t in before.tasks] == task_ids
    subset = picks.draw(st.sets(st.sampled_from(task_ids)) if task_ids else st.just(set[str]()))
    out = text
    for task_id in subset:
        out = tick(out, task_id, done=value)
    after = parse_tasks(out)
    for old, new in zip(before.tasks, after.tasks, strict=True):
        assert new.done == (value if old.id in subset else old.done)
        assert new.model_dump(exclude={"done"}) == old.model_dump(exclude={"done"})
    assert after.phases == before.phases


@settings(max_examples=100, deadline=None)
@given(data=documents(), picks=st.data(), value=st.booleans())
def test_tick_changes_no_byte_but_the_checkbox(
    data: tuple[str, list[str]], picks: st.DataObject, value: bool
) -> None:
    text, task_ids = data
    if not task_ids:
        return
    task = parse_tasks(text).get(picks.draw(st.sampled_from(task_ids)))
    start = sum(len(line) + 1 for line in text.split("\n")[: task.line - 1])
    at = start + 3  # "- [" is three characters on every generated task line
    out = tick(text, task.id, done=value)
    assert set(differences(text, out)) <= {at}
    assert out[:at] == text[:at] and out[at + 1 :] == text[at + 1 :]
    assert out[at] == (" " if not value else text[at] if text[at] in "xX" else "x")
