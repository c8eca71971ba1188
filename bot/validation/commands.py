"""What a stage command calls: the programs and Python tools behind its wrappers (pure).

`python -m pytest`, `uv run mypy`, `poetry run ruff check`, `coverage run -m pytest`,
`npx eslint` and `env X=1 pytest` all call a tool the setup stage must install; the first
word alone (`python`, `uv`, `coverage`) would name only the wrapper.
"""

from __future__ import annotations

import re
import shlex

# Wrappers that run their argument in the project's environment: the argument is the tool.
_RUNNERS = {
    ("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("pipenv", "run"), ("rye", "run"),
    ("hatch", "run"), ("pnpm", "exec"), ("yarn", "exec"), ("bundle", "exec"),
}  # fmt: skip
_SKIP = frozenset({"env", "exec", "command", "time", "nice", "nohup", "xvfb-run", "sudo"})
_SPLIT = re.compile(r"&&|\|\||;|\|(?!\|)|\n")
_PYTHON = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)?)?$")
_MODULES = {"py.test": "pytest", "pytest": "pytest"}


def called_tools(command: str) -> list[str]:
    """The programs and Python modules `command` runs, wrappers unwrapped, in order."""
    found: list[str] = []
    for part in _SPLIT.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        found += _one(words)
    return list(dict.fromkeys(w for w in found if w))


def _one(words: list[str]) -> list[str]:
    """The tools of one simple command."""
    words = [w for w in words if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
    while words and words[0].lstrip("@-+") in _SKIP:
        words = [w for w in words[1:] if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
    if not words:
        return []
    head = words[0].lstrip("@-+")
    if len(words) > 1 and (head, words[1]) in _RUNNERS:
        rest = _options_off(words[2:])
        return _one(rest) if rest else [head]
    if head in ("npx", "pnpx", "bunx"):
        rest = _options_off(words[1:])
        return [_npm_name(rest[0])] if rest else [head]
    if _PYTHON.match(head):
        module = _module(words[1:])
        return [head, _MODULES.get(module, module)] if module else [head]
    if head == "coverage" and len(words) > 1 and words[1] == "run":
        module = _module(words[2:])
        if module:
            return ["coverage", _MODULES.get(module, module)]
        rest = _options_off(words[2:])
        return ["coverage", *(_one(rest) if rest and not rest[0].endswith(".py") else [])]
    return [_MODULES.get(head, head)]


def _module(words: list[str]) -> str:
    """The module of `-m X` (also `-mX`) among an interpreter's options, else ""."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-m" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("-m") and len(word) > 2:
            return word[2:]
        if not word.startswith("-") or word == "-c":
            return ""
        i += 2 if word in ("-X", "-W", "-Q") else 1
    return ""


def _options_off(words: list[str]) -> list[str]:
    """The words after a wrapper's own options (`--frozen`, `--with x`, `--yes`, `-p pkg`)."""
    takes_value = {"--with", "--python", "-p", "--package", "--extra", "--group", "-e", "--env"}
    i = 0
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "--":
            return words[i + 1 :]
        i += 2 if words[i] in takes_value else 1
    return words[i:]


def _npm_name(spec: str) -> str:
    """`eslint@9` -> eslint, `@scope/pkg@1` -> @scope/pkg."""
    if spec.startswith("@"):
        return "@" + spec[1:].split("@", 1)[0]
    return spec.split("@", 1)[0]


def how_to_declare(tool: str, profile: str) -> str:
    """Where a repository declares `tool` so setup installs it, for the stage's note."""
    where = {
        "python": "a requirements-dev.txt line, a `test`/`dev` extra or dependency group",
        "javascript": "devDependencies in package.json",
        "typescript": "devDependencies in package.json",
        "ruby": "the Gemfile",
        "rust": "rust-toolchain.toml components",
    }.get(profile, "the repository's dependencies")
    return (
        f"unverified: `{tool}` is not installed; declare it in {where}, or install it with"
        " validation.setup in .github/agentbot.yml"
    )
