"""A kata markdown (`# Title`, `## Description`, `## Requirements`…) or a plain feature request.

A plain request (no `## Requirements` section) uses its top-level bullets as requirements
and the text before them as the description. No requirement at all is an error naming the
fix, so a run never starts on nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.errors import KataParseError
from bot.models import KataConstraint, KataDescription

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_TESTS = re.compile(r"\btests?\b", re.I)
_SECTIONS = ("description", "requirements", "constraints", "examples")


def parse_kata(text: str, source: str | Path, *, title: str = "") -> KataDescription:
    """The kata in `text`; `title` is used when it has no `# Title` (an issue's title)."""
    sections: dict[str, list[str]] = {}
    heading_line: dict[str, int] = {}
    current = "preamble"
    found_title = ""
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        heading = None if in_code else _HEADING.match(line)
        if heading and len(heading[1]) == 1 and not found_title:
            found_title = heading[2]
            continue
        if heading and len(heading[1]) == 2:
            name = heading[2].strip().lower()
            current = name if name in _SECTIONS else f"other:{name}"
            heading_line.setdefault(current, number)
            continue
        sections.setdefault(current, []).append(line)
    kata_title = found_title or title.strip()
    if not kata_title:
        raise KataParseError("line 1: the kata has no title: start it with `# <Title>`")
    if "requirements" in sections or "requirements" in heading_line:
        requirements = _items(sections.get("requirements", []))
        if not requirements:
            raise KataParseError(
                f"line {heading_line['requirements']}: `## Requirements` lists nothing:"
                " write one `- requirement` bullet per behaviour"
            )
        description = "\n".join(sections.get("description", [])).strip()
    else:
        # A plain feature request: its bullets are the requirements.
        body = [ln for key, lines in sections.items() if key != "examples" for ln in lines]
        requirements = _items(body)
        if not requirements:
            raise KataParseError(
                "line 1: no requirements found: add a `## Requirements` section (or a bullet"
                " list) with one bullet per behaviour"
            )
        description = "\n".join(ln for ln in body if not _ITEM.match(ln)).strip()
    constraints = [
        KataConstraint(description=c, applies_to="tests" if _TESTS.search(c) else "code")
        for c in _items(sections.get("constraints", []))
    ]
    return KataDescription(
        title=kata_title,
        description=description,
        requirements=requirements,
        constraints=constraints,
        examples=_examples(sections.get("examples", [])),
        source_path=Path(source),
    )


def _items(lines: list[str]) -> list[str]:
    """Top-level list items; an indented continuation line joins its item."""
    items: list[str] = []
    in_code = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        if in_code:
            continue
        found = _ITEM.match(line) if not line.startswith((" ", "\t")) else None
        if found:
            items.append(found[1])
        elif items and line[:1] in (" ", "\t") and (text := line.strip()) and not _ITEM.match(text):
            items[-1] += " " + text
    return items


def _examples(lines: list[str]) -> list[str]:
    """Bullets and fenced blocks of the examples section, each one example."""
    out: list[str] = []
    block: list[str] | None = None
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            if block is None:
                block = []
            else:
                out.append("\n".join(block))
                block = None
            continue
        if block is not None:
            block.append(line)
        elif found := _ITEM.match(line):
            out.append(found[1])
    return out
