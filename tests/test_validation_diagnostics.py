"""Diagnostics out of tools' output, and which of them a change introduced (pure functions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.models import Diagnostic
from bot.validation.compare import LineMap, new_problems, parse_unified_zero
from bot.validation.diagnostics import parse_diagnostics
from bot.validation.sources import ci_workflows, makefile, package_json, recipes


def rendered(output: str, *roots: Path) -> list[str]:
    return [d.render() for d in parse_diagnostics(output, roots)]


def test_json_outputs_of_ruff_eslint_pyright_and_cargo() -> None:
    ruff = [
        {
            "code": "F401",
            "message": "`os` imported but unused",
            "filename": "/r/a.py",
            "location": {"row": 3, "column": 8},
        }
    ]
    assert rendered(json.dumps(ruff), Path("/r")) == ["a.py:3: F401 `os` imported but unused"]
    eslint = [
        {
            "filePath": "/r/lib/x.js",
            "messages": [
                {"ruleId": "no-unused-vars", "severity": 2, "message": "'a' is unused.", "line": 4},
                {
                    "ruleId": "quotes",
                    "severity": 1,
                    "message": "Strings must use singlequote.",
                    "line": 9,
                },
            ],
        }
    ]
    found = parse_diagnostics(json.dumps(eslint), [Path("/r")])
    assert [(d.path, d.line, d.rule, d.severity) for d in found] == [
        ("lib/x.js", 4, "no-unused-vars", "error"),
        ("lib/x.js", 9, "quotes", "warning"),
    ]
    pyright = {
        "generalDiagnostics": [
            {
                "file": "/r/s.py",
                "severity": "error",
                "message": "bad\nmore",
                "range": {"start": {"line": 6}},
                "rule": "reportAttributeAccessIssue",
            }
        ]
    }
    assert rendered(json.dumps(pyright), Path("/r")) == ["s.py:7: reportAttributeAccessIssue bad"]
    cargo = json.dumps(
        {
            "reason": "compiler-message",
            "message": {
                "level": "warning",
                "message": "length comparison to zero",
                "code": {"code": "clippy::len_zero"},
                "spans": [{"file_name": "src/lib.rs", "line_start": 440, "is_primary": True}],
            },
        }
    )
    note = json.dumps(
        {
            "reason": "compiler-message",
            "message": {
                "level": "warning",
                "message": "2 warnings emitted",
                "code": None,
                "spans": [],
            },
        }
    )
    assert rendered(f"{cargo}\n{note}\n") == [
        "src/lib.rs:440: clippy::len_zero length comparison to zero"
    ]


def test_text_outputs_of_mypy_tsc_flake8_go_vet_and_formatters() -> None:
    out = """\
src/a.py:12: error: Incompatible return value type (got "str", expected "int")  [return-value]
src/a.py:13: note: See https://mypy.rtfd.io
Found 1 error in 1 file (checked 3 source files)
src/x.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.
lib/y.py:3:1: E302 expected 2 blank lines, found 1
vet: ./main.go:9:2: unreachable code
Would reformat: src/b.py
"""
    assert rendered(out) == [
        'src/a.py:12: return-value Incompatible return value type (got "str", expected "int")',
        "src/x.ts:4: TS2322 Type 'string' is not assignable to type 'number'.",
        "lib/y.py:3: E302 expected 2 blank lines, found 1",
        "main.go:9: unreachable code",
        "src/b.py: format not formatted",
    ]


def test_arrow_blocks_of_ruff_full_and_rustc_and_eslint_stylish() -> None:
    out = """\
F401 [*] `os` imported but unused
 --> src/a.py:1:8
  |
warning: length comparison to zero
   --> src/lib.rs:440:24
    |
    = note: `#[warn(clippy::len_zero)]` on by default

/r/index.js
  4:6  error    'unused' is assigned a value but never used  no-unused-vars
  9:1  warning  Unexpected console statement                 no-console
"""
    assert rendered(out, Path("/r")) == [
        "src/a.py:1: F401 `os` imported but unused",
        "src/lib.rs:440: clippy::len_zero length comparison to zero",
        "index.js:4: no-unused-vars 'unused' is assigned a value but never used",
        "index.js:9: no-console Unexpected console statement",
    ]


def test_line_numbers_in_messages_are_normalised() -> None:
    out = 'a.py:9: error: Name "f" already defined on line 3  [no-redef]\n'
    assert parse_diagnostics(out)[0].message == 'Name "f" already defined on line N'


def test_line_maps_follow_insertions_deletions_and_rewrites() -> None:
    diff = """\
diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -2,0 +3,2 @@ x
+new
+new
@@ -10,2 +12 @@
-old
-old
+one
@@ -20 +20,0 @@
-gone
"""
    m = parse_unified_zero(diff)["a.py"]
    assert [m.new_line(n) for n in (1, 2, 3, 9, 10, 11, 12, 19, 20, 21)] == [
        1,
        2,
        5,
        11,
        None,
        None,
        13,
        20,
        None,
        21,
    ]


def d(path: str, line: int, rule: str = "F401", msg: str = "x unused") -> Diagnostic:
    return Diagnostic(path=path, line=line, rule=rule, message=msg)


def test_new_problems_are_matched_by_file_rule_message_and_moved_line() -> None:
    base = [d("a.py", 10), d("a.py", 20, "E1", "bad"), d("b.py", 5)]
    maps = {"a.py": LineMap(((2, 0, 3, 2),))}  # two lines inserted after line 2
    head = [d("a.py", 12), d("a.py", 22, "E1", "bad"), d("b.py", 5), d("a.py", 3)]
    new, pre = new_problems(head, base, maps)
    assert new == [d("a.py", 3)] and len(pre) == 3
    # A second identical finding in the same file is new, wherever the diff put it.
    new, _ = new_problems([d("b.py", 5), d("b.py", 9)], [d("b.py", 5)], {})
    assert new == [d("b.py", 9)]
    # A rewritten line still matches the base finding it replaced (by count).
    rewritten = {"a.py": LineMap(((10, 1, 10, 1),))}
    assert new_problems([d("a.py", 10)], [d("a.py", 10)], rewritten) == ([], [d("a.py", 10)])


def test_repository_sources_makefile_package_json_and_ci(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(
        "lint:\n\truff check .\n\ntest: build\n\t@pytest -q\n\ntypecheck:\n\ttox -e mypy\n"
        "format:\n\tblack .\n"
    )
    assert recipes((tmp_path / "Makefile").read_text())["test"] == ["@pytest -q"]
    found = makefile(tmp_path)
    assert found["lint"].command == "make lint" and found["lint"].tools == ("make", "ruff")
    assert found["test"].command == "make test"
    assert "typecheck" not in found  # wraps tox: it would build environments of its own
    assert "format" not in found  # `black .` writes: not a check
    (tmp_path / "package.json").write_text(
        json.dumps(
            {
                "scripts": {
                    "test": "jest",
                    "lint": "eslint .",
                    "format": "prettier --write .",
                    "format:check": "prettier --check .",
                    "type-check": "tsc",
                }
            }
        )
    )
    scripts = package_json(tmp_path)
    assert scripts["test"].command == "npm test --ignore-scripts"
    assert scripts["format"].command == "npm run format:check --ignore-scripts"
    assert scripts["typecheck"].command == "npm run type-check --ignore-scripts"
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(
        "on: push\njobs:\n  t:\n    steps:\n      - run: uv run mypy src\n"
        "      - run: cargo test --verbose\n"
        "      - run: echo ${{ matrix.x }}\n      - run: |\n          pytest\n          ls\n"
    )
    ci = ci_workflows(tmp_path)
    assert (
        ci["typecheck"].command == "mypy src" and ci["typecheck"].source == "CI workflow (ci.yml)"
    )
    assert ci["test"].command == "cargo test --verbose"


def test_a_ci_workflow_linked_out_of_the_tree_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ci.yml").write_text("jobs:\n  t:\n    steps:\n      - run: pytest -k leaked\n")
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").symlink_to(outside / "ci.yml")
    assert ci_workflows(repo) == {}
    (repo / ".github" / "workflows" / "ci.yml").unlink()
    (repo / ".github" / "workflows").rmdir()
    (repo / ".github" / "workflows").symlink_to(outside)
    assert ci_workflows(repo) == {}


def test_ruff_formats_newer_check_output_names_each_file() -> None:
    # ruff 0.17's `format --check`, as recorded: no "Would reformat:" line any more. Unread,
    # a new unformatted file would have passed as "fails the same way on the base".
    out = (
        "unformatted: File would be reformatted\n --> src/demo/new.py:1:5\n  |\n"
        "  - Z = ( 1 )\n1 + Z = 1\n  |\n\nunformatted: File would be reformatted\n"
        ' --> src/demo/values.py:1:6\n  |\n  - X = {  "a":1}\n1 + X = {"a": 1}\n  |\n\n'
        "2 files would be reformatted\n"
    )
    assert rendered(out) == [
        "src/demo/new.py: format not formatted",
        "src/demo/values.py: format not formatted",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "coverage run --source=slugify test.py",  # python-slugify's CI: a unittest script
        "python -m unittest discover -s tests",
        "python -m coverage run -m unittest",
        "python runtests.py",
    ],
)
def test_a_ci_test_step_running_unittest_or_a_test_script_is_the_test_command(
    tmp_path: Path, line: str
) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(f"on: push\njobs:\n  t:\n    steps:\n      - run: {line}\n")
    assert ci_workflows(tmp_path)["test"].command == line
    (wf / "ci.yml").write_text(
        "on: push\njobs:\n  t:\n    steps:\n      - run: python setup.py sdist\n"
    )
    assert "test" not in ci_workflows(tmp_path)
