"""Operator mutants of one method, found on its syntax tree (no mutation tool needed).

A mutant changes one token of the method: an arithmetic, comparison or logical operator
swapped for its counterpart, a negation removed, a boolean flipped, a whole number plus
one, or a returned value replaced by the language's null. Strings and comments are never
touched (they are not operator tokens in the tree). A test that no mutant of its method
makes fail does not test that method, and is dropped.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from bot import treefs
from bot.cover.languages import LanguageSpec
from bot.cover.syntax import parse

SWAPS: dict[str, str] = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "%": "*",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "===": "!==",
    "!==": "===",
    "and": "or",
    "or": "and",
    "&&": "||",
    "||": "&&",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
}
"""Operator token -> the mutant's token."""

BOOLEANS = {"True": "False", "False": "True", "true": "false", "false": "true"}
NEGATIONS = frozenset({"-", "!", "not"})
NUMBER_TYPES = frozenset({"integer", "number", "int_literal", "integer_literal"})
# Parents whose operator token is a binary operation, not a splat or a unary sign.
_OPERATOR_PARENTS = ("binary", "comparison", "boolean", "augmented", "assignment", "compound")

DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class Mutant:
    """One token replaced in a file."""

    start: int
    """Byte offsets of the replaced token in the file."""
    end: int
    line: int
    original: str
    replacement: str

    @property
    def description(self) -> str:
        """`line 12: + -> -`."""
        return f"line {self.line}: {self.original} -> {self.replacement}"

    def apply(self, source: bytes) -> bytes:
        """The file's text with this mutant in it."""
        return source[: self.start] + self.replacement.encode() + source[self.end :]


def mutants(
    source: bytes,
    lang: LanguageSpec,
    start_line: int,
    end_line: int,
    *,
    limit: int = DEFAULT_LIMIT,
) -> list[Mutant]:
    """The mutants of the function defined on lines `start_line`..`end_line` (1-based).

    At most `limit`, spread evenly over the method when it has more.
    """
    node = _function_at(parse(source, lang).root_node, lang, start_line, end_line)
    if node is None:
        return []
    found: list[Mutant] = []
    if lang.implicit_return:
        found.extend(_last_expression(node, lang))
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(reversed(current.children))
        mutant = _mutate(current, lang)
        if mutant is not None:
            found.append(mutant)
    found.sort(key=lambda m: m.start)
    if len(found) <= limit:
        return found
    return [found[(i * len(found)) // limit] for i in range(limit)]


def _function_at(
    root: tree_sitter.Node, lang: LanguageSpec, start_line: int, end_line: int
) -> tree_sitter.Node | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if (
            node.type in lang.functions
            and node.start_point.row + 1 == start_line
            and node.end_point.row + 1 == end_line
        ):
            return node
        stack.extend(node.named_children)
    return None


def _last_expression(node: tree_sitter.Node, lang: LanguageSpec) -> list[Mutant]:
    """The value a method returns implicitly, replaced by null (Ruby's last expression)."""
    body = node.child_by_field_name("body")
    last = [c for c in (body.named_children if body else []) if c.type != "comment"]
    if not last or last[-1].type in lang.returns or _text(last[-1]) == lang.null:
        return []
    tail = last[-1]
    if tail.type in ("if_modifier", "unless_modifier", "while_modifier", "until_modifier"):
        return []  # `x if cond` returns nil anyway when cond is false: the swap says little
    return [
        Mutant(
            start=tail.start_byte,
            end=tail.end_byte,
            line=tail.start_point.row + 1,
            original=_text(tail),
            replacement=lang.null,
        )
    ]


def _negates(node: tree_sitter.Node) -> bool:
    """A unary minus or a logical not (`unary_operator`, `unary_expression`, `not_operator`)."""
    return "unary" in node.type or node.type == "not_operator"


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _mutate(node: tree_sitter.Node, lang: LanguageSpec) -> Mutant | None:
    text = _text(node)
    parent = node.parent
    replacement = ""
    target = node
    if not node.is_named and text in NEGATIONS and parent is not None and _negates(parent):
        target = parent  # `-x` -> `x`, `not ok` -> `ok`, `!ok` -> `ok`
        replacement = _text(parent.named_children[-1]) if parent.named_children else ""
    elif not node.is_named and text in SWAPS and parent is not None:
        if any(word in parent.type for word in _OPERATOR_PARENTS):
            replacement = SWAPS[text]
    elif node.type in ("true", "false") and text in BOOLEANS:
        replacement = BOOLEANS[text]
    elif node.type in NUMBER_TYPES and text.isdigit():
        replacement = str(int(text) + 1)
    elif node.type in lang.returns and lang.null and node.named_child_count:
        target = node.named_children[-1]
        value = _text(target)
        replacement = lang.null if value != lang.null and target.type != "comment" else ""
    if not replacement:
        return None
    return Mutant(
        start=target.start_byte,
        end=target.end_byte,
        line=target.start_point.row + 1,
        original=_text(target),
        replacement=replacement,
    )


def replace_source(root: Path, rel: str, data: bytes) -> None:
    """Write `data` to `rel` in `root` (never through a link) with an mtime it never had."""
    path = root / rel
    before = path.lstat().st_mtime if treefs.kind(root, rel) == "file" else 0.0
    treefs.write_bytes(root, rel, data)
    # A .pyc is valid while the source's mtime (whole seconds) and size match: a same-size
    # mutant written within the second would run as the previous version, wherever the
    # cache lives (PYTHONPYCACHEPREFIX), so the new version gets a later second.
    stamp = max(time.time(), before + 1)
    os.utime(path, (stamp, stamp), follow_symlinks=False)


def equivalent(source: bytes, path: str) -> bytes:
    """The same code with a comment line added at its end: behaves the same, differs in bytes,
    size and mtime. Tests that fail on it tell the file apart, not its behaviour (a conftest
    hashing the source would "kill" every mutant): no mutant can judge them."""
    mark = b"#" if path.endswith((".py", ".rb", ".sh")) else b"//"
    return source + (b"" if source.endswith(b"\n") else b"\n") + mark + b" agentbot: unchanged\n"
