"""The languages /cover understands, as data: tree-sitter grammars and the node types that matter.

Each grammar comes from its PyPI package (`tree-sitter-python`, …) and is loaded on first
use. A language is listed here only by the node types discovery, complexity and mutation
read; everything language-specific beyond that lives in the test runners.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

import tree_sitter


@dataclass(frozen=True)
class LanguageSpec:
    """One language's grammar and the node types /cover reads from its syntax trees."""

    name: str
    extensions: tuple[str, ...]
    module: str
    """The grammar package's import name."""
    loader: str
    """The function of that package returning the language."""
    functions: frozenset[str]
    """Nodes that define a function or method."""
    scopes: frozenset[str]
    """Nodes that name an enclosing class, module or impl block."""
    calls: frozenset[str]
    branches: frozenset[str]
    """Nodes that add one decision point each (if, loop, case, catch, ternary…)."""
    logical: frozenset[str]
    """Operator tokens that add a decision point (short-circuit and/or)."""
    returns: frozenset[str]
    null: str = ""
    """The literal a return-value mutant returns ("" = no such mutant)."""
    instance_sep: str = "."
    """Between a class and an instance method's name (`Payment#charge` in Ruby)."""
    implicit_return: bool = False
    """A method returns its last expression (Ruby): that expression gets a null mutant."""


_JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "arrow_function",
        "function_expression",
        "function",
    }
)
_JS_BRANCHES = frozenset(
    {
        "if_statement",
        "for_statement",
        "for_in_statement",
        "while_statement",
        "do_statement",
        "switch_case",
        "catch_clause",
        "ternary_expression",
    }
)

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        name="python",
        extensions=(".py",),
        module="tree_sitter_python",
        loader="language",
        functions=frozenset({"function_definition"}),
        scopes=frozenset({"class_definition"}),
        calls=frozenset({"call"}),
        branches=frozenset(
            {
                "if_statement",
                "elif_clause",
                "for_statement",
                "while_statement",
                "except_clause",
                "conditional_expression",
                "case_clause",
                "if_clause",
            }
        ),
        logical=frozenset({"and", "or"}),
        returns=frozenset({"return_statement"}),
        null="None",
    ),
    LanguageSpec(
        name="javascript",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        module="tree_sitter_javascript",
        loader="language",
        functions=_JS_FUNCTIONS,
        scopes=frozenset({"class_declaration", "class"}),
        calls=frozenset({"call_expression"}),
        branches=_JS_BRANCHES,
        logical=frozenset({"&&", "||", "??"}),
        returns=frozenset({"return_statement"}),
        null="undefined",
    ),
    LanguageSpec(
        name="typescript",
        extensions=(".ts", ".mts", ".cts"),
        module="tree_sitter_typescript",
        loader="language_typescript",
        functions=_JS_FUNCTIONS,
        scopes=frozenset({"class_declaration", "abstract_class_declaration", "class"}),
        calls=frozenset({"call_expression"}),
        branches=_JS_BRANCHES,
        logical=frozenset({"&&", "||", "??"}),
        returns=frozenset({"return_statement"}),
        null="undefined",
    ),
    LanguageSpec(
        name="tsx",
        extensions=(".tsx",),
        module="tree_sitter_typescript",
        loader="language_tsx",
        functions=_JS_FUNCTIONS,
        scopes=frozenset({"class_declaration", "abstract_class_declaration", "class"}),
        calls=frozenset({"call_expression"}),
        branches=_JS_BRANCHES,
        logical=frozenset({"&&", "||", "??"}),
        returns=frozenset({"return_statement"}),
        null="undefined",
    ),
    LanguageSpec(
        name="ruby",
        extensions=(".rb",),
        module="tree_sitter_ruby",
        loader="language",
        functions=frozenset({"method", "singleton_method"}),
        scopes=frozenset({"class", "module"}),
        calls=frozenset({"call"}),
        branches=frozenset(
            {
                "if",
                "elsif",
                "unless",
                "while",
                "until",
                "for",
                "when",
                "rescue",
                "conditional",
                "if_modifier",
                "unless_modifier",
                "while_modifier",
                "until_modifier",
                "rescue_modifier",
            }
        ),
        logical=frozenset({"&&", "||", "and", "or"}),
        returns=frozenset({"return"}),
        null="nil",
        instance_sep="#",
        implicit_return=True,
    ),
    LanguageSpec(
        name="go",
        extensions=(".go",),
        module="tree_sitter_go",
        loader="language",
        functions=frozenset({"function_declaration", "method_declaration"}),
        scopes=frozenset(),
        calls=frozenset({"call_expression"}),
        branches=frozenset(
            {
                "if_statement",
                "for_statement",
                "expression_case",
                "type_case",
                "communication_case",
            }
        ),
        logical=frozenset({"&&", "||"}),
        returns=frozenset({"return_statement"}),
    ),
    LanguageSpec(
        name="rust",
        extensions=(".rs",),
        module="tree_sitter_rust",
        loader="language",
        functions=frozenset({"function_item"}),
        scopes=frozenset({"impl_item", "trait_item", "mod_item"}),
        calls=frozenset({"call_expression"}),
        branches=frozenset(
            {
                "if_expression",
                "match_arm",
                "while_expression",
                "loop_expression",
                "for_expression",
                "try_expression",
            }
        ),
        logical=frozenset({"&&", "||"}),
        returns=frozenset({"return_expression"}),
    ),
)


def language_for(path: str) -> LanguageSpec | None:
    """The language of a file by its extension, or None when /cover does not know it."""
    suffix = PurePosixPath(path).suffix.lower()
    return next((lang for lang in LANGUAGES if suffix in lang.extensions), None)


@cache
def parser_for(name: str) -> tree_sitter.Parser:
    """A tree-sitter parser for the language called `name` (grammar loaded on first use)."""
    spec = next(lang for lang in LANGUAGES if lang.name == name)
    grammar = importlib.import_module(spec.module)
    return tree_sitter.Parser(tree_sitter.Language(getattr(grammar, spec.loader)()))
