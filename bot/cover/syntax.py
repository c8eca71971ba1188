"""Functions and methods of a source file, read from its tree-sitter syntax tree.

For each top-level function or method (nested functions belong to the one around them):
its name and qualified name (`Calc.add`, Ruby `Calc#add`), its lines, its size and
decision points (for the complexity zone), the names it calls (for the waves) and the
hash of its text (for the analysis cache).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from bot.cover.languages import LanguageSpec, parser_for

_NAME_FIELDS = ("name",)
_CALLEE_FIELDS = ("function", "method")
_MEMBER_FIELDS = ("attribute", "property", "field", "name")
# Where an anonymous function takes its name from: `const f = () => …`, `{f: function…}`.
_NAMING_PARENTS = {"variable_declarator": "name", "pair": "key", "assignment_expression": "left"}


@dataclass(frozen=True)
class FunctionInfo:
    """One function or method as the parser sees it."""

    name: str
    qualname: str
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""
    branches: int
    """Decision points: cyclomatic complexity is branches + 1."""
    calls: frozenset[str]
    """Names of the functions and methods it calls (unqualified)."""
    source_hash: str
    """sha256 of its text: the analysis cache key."""
    scope: str = ""
    """The enclosing class/module (`Calc`), or ""."""

    @property
    def loc(self) -> int:
        """Lines of the whole definition."""
        return self.end_line - self.start_line + 1

    def covers(self, line: int) -> bool:
        """True when `line` (1-based) lies in the definition."""
        return self.start_line <= line <= self.end_line


def parse(source: bytes, lang: LanguageSpec) -> tree_sitter.Tree:
    """The syntax tree of `source`."""
    return parser_for(lang.name).parse(source)


def functions(source: bytes, lang: LanguageSpec) -> list[FunctionInfo]:
    """Every top-level function and method of `source`, in file order."""
    tree = parse(source, lang)
    return [_info(node, scope, lang) for node, scope in _walk(tree.root_node, lang, [])]


def _walk(
    node: tree_sitter.Node, lang: LanguageSpec, scopes: list[str]
) -> Iterator[tuple[tree_sitter.Node, list[str]]]:
    for child in node.named_children:
        if child.type in lang.functions:
            if _name_of(child):
                yield child, scopes
            continue  # nested functions belong to this one
        if child.type in lang.scopes:
            yield from _walk(child, lang, [*scopes, _scope_name(child)])
        else:
            yield from _walk(child, lang, scopes)


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _name_of(node: tree_sitter.Node) -> str:
    for field in _NAME_FIELDS:
        found = node.child_by_field_name(field)
        if found is not None:
            return _text(found)
    parent = node.parent
    if parent is not None and parent.type in _NAMING_PARENTS:
        target = parent.child_by_field_name(_NAMING_PARENTS[parent.type])
        if target is not None and target.type in ("identifier", "property_identifier", "string"):
            return _text(target).strip("'\"")
    return ""


def _scope_name(node: tree_sitter.Node) -> str:
    found = node.child_by_field_name("name") or node.child_by_field_name("type")
    return _text(found)


def _receiver_type(node: tree_sitter.Node) -> str:
    """A Go method's receiver type (`(c *Calc)` -> `Calc`)."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for sub in _descendants(receiver):
        if sub.type == "type_identifier":
            return _text(sub)
    return ""


def _qualname(node: tree_sitter.Node, name: str, scopes: list[str], lang: LanguageSpec) -> str:
    if node.type == "method_declaration":
        scopes = [*scopes, _receiver_type(node)]
    scope = ".".join(s for s in scopes if s)
    if not scope:
        return name
    if node.type == "singleton_method":
        return f"{scope}.{name}"
    return f"{scope}{lang.instance_sep}{name}"


def _descendants(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def callee_name(node: tree_sitter.Node) -> str:
    """The plain name a call node calls (`f(x)`, `obj.f(x)` -> `f`), or ""."""
    target = None
    for field in _CALLEE_FIELDS:
        target = node.child_by_field_name(field)
        if target is not None:
            break
    while target is not None and target.named_child_count:
        member = None
        for field in _MEMBER_FIELDS:
            member = target.child_by_field_name(field)
            if member is not None:
                break
        target = member
    return _text(target) if target is not None and target.child_count == 0 else ""


def _info(node: tree_sitter.Node, scopes: list[str], lang: LanguageSpec) -> FunctionInfo:
    name = _name_of(node)
    branches = 0
    calls: set[str] = set()
    for sub in _descendants(node):
        if sub is node:
            continue
        if sub.type in lang.branches or (not sub.is_named and sub.type in lang.logical):
            branches += 1
        if sub.type in lang.calls and (called := callee_name(sub)):
            calls.add(called)
        elif lang.name == "ruby" and _bare_ruby_call(sub):
            calls.add(_text(sub))
    calls.discard(name)
    return FunctionInfo(
        name=name,
        qualname=_qualname(node, name, scopes, lang),
        start_line=node.start_point.row + 1,
        end_line=node.end_point.row + 1,
        branches=branches,
        calls=frozenset(calls),
        source_hash=hashlib.sha256(node.text or b"").hexdigest(),
        scope=".".join(s for s in scopes if s),
    )


def _bare_ruby_call(node: tree_sitter.Node) -> bool:
    """`helper` with no arguments or parentheses: a call Ruby's grammar cannot tell from a
    variable; as a dependency edge a false one costs nothing."""
    parent = node.parent
    return (
        node.type == "identifier"
        and parent is not None
        and parent.type not in ("method_parameters", "assignment")
    )
