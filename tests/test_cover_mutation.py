"""Mutants on the syntax tree, and dropping tests from test files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cover.languages import language_for
from bot.cover.mutation import mutants, replace_source
from bot.cover.prune import drop_tests
from bot.cover.results import CaseResult


def _lang(path: str):  # type: ignore[no-untyped-def]
    lang = language_for(path)
    assert lang is not None
    return lang


def test_python_mutants_touch_operators_literals_and_returns_only() -> None:
    src = (
        b"def other():\n    return 1 + 1\n\n\n"
        b'def f(a, b, *args):\n    """a + b in a string stays."""\n'
        b"    # a - b in a comment stays\n"
        b"    if a > 0 and b == -1:\n        return True\n    return a * 2\n"
    )
    found = mutants(src, _lang("m.py"), 5, 10)
    assert [m.description for m in found] == [
        "line 8: > -> >=",
        "line 8: 0 -> 1",
        "line 8: and -> or",
        "line 8: == -> !=",
        "line 8: -1 -> 1",
        "line 8: 1 -> 2",
        "line 9: True -> None",
        "line 9: True -> False",
        "line 10: a * 2 -> None",
        "line 10: * -> /",
        "line 10: 2 -> 3",
    ]
    mutated = found[0].apply(src).decode()
    assert "if a >= 0 and b == -1:" in mutated and "return 1 + 1" in mutated


@pytest.mark.parametrize(
    ("path", "src", "expected"),
    [
        ("m.js", b"function f(a) { return a === 1 || a < 0; }\n", ["===", "||", "<", "0", "1"]),
        ("m.rb", b"def f(a)\n  a + 1 if a > 0\nend\n", ["+", "1", ">", "0"]),
        ("m.go", b"package m\nfunc F(a int) bool { return a != 2 }\n", ["!=", "2"]),
    ],
)
def test_other_languages_get_operator_mutants(path: str, src: bytes, expected: list[str]) -> None:
    lines = src.decode().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if "f" in line.lower() and "(" in line)
    found = mutants(src, _lang(path), start, len(lines))
    assert sorted(m.original for m in found if m.original in expected) == sorted(expected)
    for m in found:
        assert m.apply(src) != src


def test_mutants_are_capped_and_spread_over_the_method() -> None:
    body = "".join(f"    x = x + {i}\n" for i in range(1, 41))
    src = f"def f(x):\n{body}    return x\n".encode()
    found = mutants(src, _lang("m.py"), 1, 42, limit=10)
    assert len(found) == 10
    assert found[0].line == 2 and found[-1].line >= 38


def test_no_function_at_those_lines_has_no_mutants() -> None:
    assert mutants(b"x = 1 + 2\n", _lang("m.py"), 1, 1) == []


def _outcome(title: str, line: int | None = None) -> CaseResult:
    return CaseResult(file="t", name=title, passed=True, line=line, title=title)


def test_drop_a_pytest_function_with_its_decorator() -> None:
    src = (
        b"import pytest\n\n\ndef test_keep():\n    assert 1\n\n\n"
        b"@pytest.mark.slow\ndef test_drop():\n    pass\n\n\nclass TestX:\n"
        b"    def test_drop_too(self):\n        pass\n\n    def test_stay(self):\n"
        b"        assert 2\n"
    )
    out = drop_tests(src, _lang("t.py"), [_outcome("test_drop"), _outcome("test_drop_too")])
    assert out.decode() == (
        "import pytest\n\n\ndef test_keep():\n    assert 1\n\n\nclass TestX:\n"
        "    def test_stay(self):\n        assert 2\n"
    )


def test_drop_a_jest_test_and_an_rspec_example() -> None:
    js = (
        b"const { add } = require('../add');\n\ndescribe('add', () => {\n"
        b"  test('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n\n"
        b'  it("runs", () => {\n    add(1, 2);\n  });\n});\n'
    )
    out = drop_tests(js, _lang("t.test.js"), [_outcome("runs")]).decode()
    assert "runs" not in out and "adds" in out and out.endswith("  });\n});\n")
    rb = (
        b'RSpec.describe Calc do\n  it "adds" do\n    expect(1).to eq 1\n  end\n\n'
        b'  it "runs" do\n    Calc.new\n  end\nend\n'
    )
    out = drop_tests(rb, _lang("calc_spec.rb"), [_outcome("runs")]).decode()
    assert out == 'RSpec.describe Calc do\n  it "adds" do\n    expect(1).to eq 1\n  end\nend\n'


def test_same_titles_are_told_apart_by_line() -> None:
    block = b'  it "works" do\n  end\nend\n'
    rb = b'describe "a" do\n' + block + b'describe "b" do\n' + block
    out = drop_tests(rb, _lang("x_spec.rb"), [_outcome("works", line=6)]).decode()
    assert out == 'describe "a" do\n  it "works" do\n  end\nend\ndescribe "b" do\nend\n'


def test_ruby_implicit_return_gets_a_nil_mutant() -> None:
    src = b"class C\n  def double(x)\n    add(x, x)\n  end\nend\n"
    found = mutants(src, _lang("c.rb"), 2, 4)
    assert [m.description for m in found] == ["line 3: add(x, x) -> nil"]
    assert found[0].apply(src) == b"class C\n  def double(x)\n    nil\n  end\nend\n"


def test_a_restored_source_is_run_not_the_mutant_python_cached_in_the_same_second(
    tmp_path: Path,
) -> None:
    # A same-size mutant written in the same second keeps cached bytecode valid (a .pyc
    # checks the source's mtime in whole seconds and its size): the next run would test the
    # previous version. The cache lives apart, as validation's PYTHONPYCACHEPREFIX puts it.
    src = tmp_path / "calc.py"
    original = b"def is_even(n):\n    return n % 2 == 0\n"
    mutant = b"def is_even(n):\n    return n % 2 != 0\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    probe = [sys.executable, "-c", "import calc; print(calc.is_even(2))"]
    src.write_bytes(original)
    now = int(time.time())
    os.utime(src, (now, now))
    seen = []
    for data in (original, mutant, original):
        before = int(src.stat().st_mtime)
        replace_source(tmp_path, "calc.py", data)
        assert int(src.stat().st_mtime) != before
        run = subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True, text=True)
        seen.append(run.stdout.strip())
    assert seen == ["True", "False", "True"]
