"""Drop named tests from a test file, on its syntax tree (a test no mutant fails goes).

A pytest function (with its decorators), a jest/vitest `it(...)`/`test(...)` call, an
RSpec `it "..." do … end`, a Go `func TestX`, a Rust `#[test] fn x`: found by title (and
line, when several share a title), their whole lines removed, and the blank lines around
the gap tidied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import tree_sitter

from bot.cover.languages import LanguageSpec
from bot.cover.results import CaseResult
from bot.cover.syntax import parse

_JS_TEST_CALLS = frozenset({"it", "test"})
_RUBY_TEST_CALLS = frozenset({"it", "specify", "example", "scenario"})


def drop_tests(source: bytes, lang: LanguageSpec, tests: Iterable[CaseResult]) -> bytes:
    """`source` without `tests`; a test not found is left alone (the caller re-runs)."""
    root = parse(source, lang).root_node
    spans: list[tuple[int, int]] = []
    for test in tests:
        node = _find(root, lang, test)
        if node is not None:
            spans.append((_first_row(node), node.end_point.row))
    if not spans:
        return source
    lines = source.decode("utf-8").splitlines(keepends=True)
    for first, last in sorted(spans, reverse=True):
        del lines[first : last + 1]
        _tidy(lines, first)
    return "".join(lines).encode("utf-8")


def _first_row(node: tree_sitter.Node) -> int:
    """Where a test starts, its attributes (Rust's `#[test]`) included."""
    first = node
    while (
        first.prev_named_sibling is not None and first.prev_named_sibling.type == "attribute_item"
    ):
        first = first.prev_named_sibling
    return first.start_point.row


def _tidy(lines: list[str], at: int) -> None:
    """Leave as many blank lines in the gap as the tighter side of the removed block had.

    Between two top-level functions that is the two they were apart; where the block was
    first or last in its class or `describe`, none.
    """
    start = at
    while start > 0 and not lines[start - 1].strip():
        start -= 1
    end = at
    while end < len(lines) and not lines[end].strip():
        end += 1
    before, after = at - start, end - at
    keep = min(before, after) if start > 0 and end < len(lines) else 0
    lines[start:end] = ["\n"] * keep


def _find(root: tree_sitter.Node, lang: LanguageSpec, test: CaseResult) -> tree_sitter.Node | None:
    found = [n for n in _candidates(root, lang) if _title(n, lang) == test.title]
    if len(found) > 1 and test.line is not None:
        at_line = [n for n in found if _starts_at(n, test.line)]
        found = at_line or found
    return found[0] if len(found) == 1 else None


def _starts_at(node: tree_sitter.Node, line: int) -> bool:
    rows = {node.start_point.row + 1}
    rows |= {c.start_point.row + 1 for c in node.named_children}
    return line in rows


def _candidates(root: tree_sitter.Node, lang: LanguageSpec) -> Iterator[tree_sitter.Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if lang.name == "python" and node.type == "function_definition":
            parent = node.parent
            yield parent if parent is not None and parent.type == "decorated_definition" else node
        elif _is_test_node(node, lang):
            yield node
        elif node.type == "call_expression" and _callee(node) in _JS_TEST_CALLS:
            parent = node.parent
            yield parent if parent is not None and parent.type == "expression_statement" else node


def _is_test_node(node: tree_sitter.Node, lang: LanguageSpec) -> bool:
    """A Go function declaration, or an RSpec example call."""
    if lang.name == "go":
        return node.type == "function_declaration"
    if lang.name == "rust":
        return node.type == "function_item"
    return lang.name == "ruby" and node.type == "call" and _callee(node) in _RUBY_TEST_CALLS


def _callee(node: tree_sitter.Node) -> str:
    target = node.child_by_field_name("function") or node.child_by_field_name("method")
    return (target.text or b"").decode() if target is not None else ""


def _title(node: tree_sitter.Node, lang: LanguageSpec) -> str:
    if node.type == "decorated_definition":
        node = node.child_by_field_name("definition") or node
    if node.type in ("function_definition", "function_declaration", "function_item"):
        name = node.child_by_field_name("name")
        return (name.text or b"").decode() if name is not None else ""
    if node.type == "expression_statement":
        node = node.named_children[0]
    args = node.child_by_field_name("arguments")
    first = args.named_children[0] if args is not None and args.named_children else None
    if first is None or first.type not in ("string", "template_string"):
        return ""
    return re.sub(r"^['\"`]|['\"`]$", "", (first.text or b"").decode())
