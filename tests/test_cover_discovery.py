"""Discovery: a diff mapped onto real syntax trees, zones, selection, call graph and waves."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.cover.discovery import (
    ChangedMethod,
    SourcePair,
    call_graph,
    changed_lines,
    discover,
    red_new,
    select,
)
from bot.cover.languages import language_for
from bot.cover.syntax import functions
from bot.cover.waves import waves
from bot.cover.zones import zone
from tests.fakes.gitrepo import git

BASE_PY = '''"""Calc."""


def add(a, b):
    return a + b


class Shop:
    def total(self, items):
        return sum(items)

    def unchanged(self):
        return 1
'''

HEAD_PY = '''"""Calc."""


def add(a, b):
    return a + b + 0


def double(x):
    return add(x, x)


class Shop:
    def total(self, items):
        return sum(items)

    def unchanged(self):
        return 1

    def discount(self, price, rate):
        if rate > 1 or rate < 0:
            raise ValueError(rate)
        return price * (1 - rate)
'''


def _diff(tmp: Path, files_before: dict[str, str], files_after: dict[str, str]) -> str:
    git(tmp, "init", "-q", "-b", "main")
    for name, text in files_before.items():
        (tmp / name).write_text(text)
    git(tmp, "add", "-A")
    git(tmp, "commit", "-qm", "base", "--allow-empty")
    for name, text in files_after.items():
        (tmp / name).write_text(text)
    git(tmp, "add", "-A")
    return subprocess.run(
        ["git", "diff", "-U0", "--no-color", "--cached"], cwd=tmp, capture_output=True, text=True
    ).stdout


def test_a_real_git_diff_maps_onto_the_functions_it_touched(tmp_path: Path) -> None:
    diff = _diff(tmp_path, {"calc.py": BASE_PY}, {"calc.py": HEAD_PY})
    found = discover(
        changed_lines(diff), {"calc.py": SourcePair(HEAD_PY.encode(), BASE_PY.encode())}
    )
    assert [(m.function.qualname, m.mode) for m in found] == [
        ("add", "modified"),
        ("double", "new"),
        ("Shop.discount", "new"),
    ]
    discount = found[2]
    assert discount.function.branches == 2  # if, or
    assert discount.changed == tuple(range(19, 23))
    assert discount.id == "calc.py::Shop.discount" and discount.slug == "calc__Shop_discount"
    assert all(m.zone == "green" for m in found)


def test_a_removed_line_inside_a_function_modifies_it(tmp_path: Path) -> None:
    before = "def f(x):\n    y = x\n    z = 2\n    return y\n\n\ndef g():\n    return 1\n"
    after = "def f(x):\n    y = x\n    return y\n\n\ndef g():\n    return 1\n"
    diff = _diff(tmp_path, {"m.py": before}, {"m.py": after})
    found = discover(changed_lines(diff), {"m.py": SourcePair(after.encode(), before.encode())})
    assert [(m.function.name, m.mode, m.changed) for m in found] == [("f", "modified", ())]


def test_a_new_file_makes_every_function_new() -> None:
    diff = "+++ b/lib/a.rb\n@@ -0,0 +1,7 @@\n"
    src = b"class Cart\n  def add(x)\n    x\n  end\n  def self.build; new; end\nend\n# end\n"
    found = discover(changed_lines(diff), {"lib/a.rb": SourcePair(src, None)})
    assert [(m.function.qualname, m.mode) for m in found] == [
        ("Cart#add", "new"),
        ("Cart.build", "new"),
    ]


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "src/m.js",
            "export function add(a, b) { return a + b; }\n"
            "const twice = (x) => add(x, x);\n"
            "class C { m(x) { return x === 1 && twice(x) > 2; } }\n",
            [("add", frozenset()), ("twice", frozenset({"add"})), ("C.m", frozenset({"twice"}))],
        ),
        (
            "src/m.ts",
            "export function add(a: number, b: number): number { return a + b; }\n"
            "export class K { run(x: number): number { return add(x, 1); } }\n",
            [("add", frozenset()), ("K.run", frozenset({"add"}))],
        ),
        (
            "lib/m.rb",
            "module M\n  class Calc\n    def add(a, b)\n      helper(a) && b.foo\n    end\n"
            "    def helper(a) = a\n  end\nend\n",
            [
                ("M.Calc#add", frozenset({"helper", "foo", "a", "b"})),
                ("M.Calc#helper", frozenset({"a"})),
            ],
        ),
        (
            "m.go",
            "package m\nfunc Add(a, b int) int { return a + b }\n"
            "func (c *Calc) Twice(x int) int { return Add(x, x) }\n",
            [("Add", frozenset()), ("Calc.Twice", frozenset({"Add"}))],
        ),
        (
            "src/lib.rs",
            "fn add(a: i32) -> i32 { a + 1 }\nimpl Calc { fn twice(&self, x: i32) -> i32 {"
            " add(x) + self.other(x) } }\n",
            [("add", frozenset()), ("Calc.twice", frozenset({"add", "other"}))],
        ),
    ],
)
def test_each_language_names_functions_and_their_calls(
    path: str, source: str, expected: list[tuple[str, frozenset[str]]]
) -> None:
    lang = language_for(path)
    assert lang is not None
    got = [(f.qualname, f.calls) for f in functions(source.encode(), lang)]
    assert got == expected


def test_unknown_extensions_have_no_language() -> None:
    assert language_for("README.md") is None
    assert language_for("x.PY") is not None


def test_a_long_branching_new_function_is_red_and_stops() -> None:
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(100))
    src = f"def big(x):\n{body}    return -1\n"
    lines = len(src.splitlines())
    found = discover(
        changed_lines(f"+++ b/big.py\n@@ -0,0 +1,{lines} @@\n"),
        {"big.py": SourcePair(src.encode(), None)},
    )
    assert found[0].zone == "red" and found[0].function.loc == 202
    assert [m.function.name for m in red_new(found)] == ["big"]
    modified = [m.__class__(**{**m.__dict__, "mode": "modified"}) for m in found]
    assert red_new(modified) == []


@pytest.mark.parametrize(
    ("loc", "cc", "expected"),
    [(50, 10, "green"), (51, 1, "yellow"), (10, 11, "yellow"), (150, 20, "yellow"),
     (151, 1, "red"), (5, 21, "red")],
)  # fmt: skip
def test_zone_bands(loc: int, cc: int, expected: str) -> None:
    assert zone(loc, cc) == expected


def test_select_by_path_folder_glob_name_and_qualname() -> None:
    src = HEAD_PY.encode()
    found = discover(
        {"pkg/calc.py": changed_lines("+++ b/x\n@@ -0,0 +1,30 @@\n")["x"]},
        {"pkg/calc.py": SourcePair(src, None)},
    )

    def names(ms: list[ChangedMethod]) -> list[str]:
        return [m.function.qualname for m in ms]

    assert names(select(found, [])) == names(found)
    assert names(select(found, ["double"])) == ["double"]
    assert names(select(found, ["Shop.total", "`add`"])) == ["add", "Shop.total"]
    assert len(select(found, ["pkg/"])) == len(found) == len(select(found, ["pkg/*.py"]))
    assert select(found, ["other.py"]) == []


def test_call_graph_and_waves_put_callees_first() -> None:
    src = (
        "def leaf(x):\n    return x\n\n\ndef mid(x):\n    return leaf(x)\n\n\n"
        "def top(x):\n    return mid(x) + leaf(x)\n\n\ndef alone():\n    return 0\n"
    )
    found = discover(
        changed_lines("+++ b/m.py\n@@ -0,0 +1,14 @@\n"), {"m.py": SourcePair(src.encode(), None)}
    )
    graph = call_graph(found)
    order = [m.id for m in found]
    assert graph["m.py::top"] == {"m.py::mid", "m.py::leaf"}
    assert waves(graph, order) == [["m.py::leaf", "m.py::alone"], ["m.py::mid"], ["m.py::top"]]


def test_waves_keep_a_cycle_together_after_what_it_calls() -> None:
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"b", "d"}),
        "d": frozenset(),
    }
    assert waves(graph, ["a", "b", "c", "d"]) == [["d"], ["b", "c"], ["a"]]
