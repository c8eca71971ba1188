"""The text editor tool (`text_editor_20250728`): view, create, str_replace, insert.

Every path is resolved (symlinks followed) before use and must land inside the workspace:
`../x`, absolute paths elsewhere and symlinks that point out are refused. Paths may be
relative to the workspace or absolute inside it. Files are read and written as UTF-8 with
their line endings kept. `create` overwrites an existing file (the reply says so). Nothing
under `.git` can be changed (a symlink into it neither), as in the sandbox.
"""

from __future__ import annotations

import ast
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.errors import ToolError
from bot.tools.base import ToolOutcome

COMMANDS = ("view", "create", "str_replace", "insert")
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox"})
MAX_LISTING = 1_000
MAX_FILE_BYTES = 16 * 1024 * 1024
"""Files the editor reads whole; larger ones are for bash (head, sed -n)."""
SNIPPET_LINES = 4


VIEW_LINES = 400
"""Lines a `view` without `view_range` shows of a long file."""


def _syntax_warning(path: Path, shown: str) -> str:
    """A note when an edited Python file no longer parses (the edit is kept)."""
    try:
        ast.parse(path.read_bytes(), filename=shown)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        return (
            f"\n\nWarning: {shown} no longer parses: {exc.msg} ({where}). The edit was made;"
            " fix the syntax before you go on."
        )
    except (OSError, ValueError):
        return ""
    return ""


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{n:6}\t{line}" for n, line in enumerate(lines, start=first))


def _str_arg(input: dict[str, Any], name: str, command: str, *, required: bool = True) -> str:
    value = input.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"`{command}` needs `{name}` as a string")
    return value


class Editor:
    """Runs editor commands inside one workspace; reports each file it changed."""

    def __init__(self, workspace: Path, *, output_cap: int = 30_000) -> None:
        self.root = workspace.resolve()
        self.output_cap = output_cap

    def resolve(self, raw: object) -> Path:
        """The real path `raw` names, or ToolError when it is missing or outside the workspace."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolError("`path` is required: a path relative to the workspace root")
        if "\0" in raw:
            raise ToolError("`path` must not contain NUL characters")
        candidate = Path(raw) if Path(raw).is_absolute() else self.root / raw
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # symlink loop, unreadable component
            raise ToolError(f"{raw}: cannot resolve the path ({exc})") from exc
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolError(
                f"{raw}: outside the workspace; only paths inside {self.root} may be used"
                " (relative paths start there; symlinks that point out are refused)"
            )
        return real

    def show(self, path: Path) -> str:
        """`path` relative to the workspace, for messages."""
        return str(path.relative_to(self.root)) if path != self.root else "."

    def run(self, input: dict[str, Any]) -> tuple[ToolOutcome, Path | None]:
        """Run one command; return the outcome and the changed file (relative), if any."""
        command = input.get("command")
        handlers: dict[str, Callable[[Path, dict[str, Any]], tuple[str, bool]]] = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
        }
        if command == "undo_edit":
            raise ToolError("undo_edit is not available; use str_replace to put the text back")
        if not isinstance(command, str) or command not in handlers:
            raise ToolError(f"unknown command {command!r}; use one of {', '.join(COMMANDS)}")
        path = self.resolve(input.get("path"))
        if command != "view" and ".git" in path.relative_to(self.root).parts:
            # As in the sandbox, where `.git` is mounted read-only: no hook or config plants.
            raise ToolError(f"{self.show(path)}: `.git` is read-only; agentbot commits the work")
        try:
            text, changed = handlers[command](path, input)
        except UnicodeDecodeError as exc:
            raise ToolError(f"{self.show(path)} is not UTF-8 text; use bash to edit it") from exc
        except OSError as exc:
            raise ToolError(f"{self.show(path)}: {exc.strerror or exc}") from exc
        if changed and path.suffix == ".py":
            text += _syntax_warning(path, self.show(path))
        return ToolOutcome(text), path.relative_to(self.root) if changed else None

    # --- reading and writing ------------------------------------------------------------

    def _read(self, path: Path) -> str:
        if not path.exists():
            raise ToolError(f"{self.show(path)} does not exist; `create` it or check the path")
        if path.is_dir():
            raise ToolError(f"{self.show(path)} is a directory; give a file path")
        self._plain(path)
        with path.open(encoding="utf-8", newline="") as fh:
            return fh.read()

    def _plain(self, path: Path) -> None:
        """ToolError unless `path` is a regular file the bot may read whole."""
        # The editor runs in the bot's process: a FIFO would block it for good, and a
        # sparse file of many GB costs no disk but all of the bot's memory.
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{self.show(path)} is not a regular file; inspect it with bash")
        if info.st_size > MAX_FILE_BYTES:
            raise ToolError(
                f"{self.show(path)} is {info.st_size:,} bytes, over {MAX_FILE_BYTES:,};"
                " inspect it with bash (head, sed -n)"
            )

    def _write(self, path: Path, text: str) -> None:
        if path.exists():
            self._plain(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    def _snippet(self, text: str, first_line: int, last_line: int) -> str:
        lines = text.splitlines()
        start = max(first_line - SNIPPET_LINES, 1)
        end = min(last_line + SNIPPET_LINES, len(lines))
        return _numbered(lines[start - 1 : end], start)

    # --- commands -----------------------------------------------------------------------

    def _view(self, path: Path, input: dict[str, Any]) -> tuple[str, bool]:
        view_range = input.get("view_range")
        if path.is_dir():
            if view_range is not None:
                raise ToolError("view_range applies to files, not directories")
            return self._listing(path), False
        if not path.exists():
            raise ToolError(f"{self.show(path)} does not exist")
        self._plain(path)
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolError(
                f"{self.show(path)} is a binary file ({len(data):,} bytes); inspect it with bash"
            )
        lines = data.decode("utf-8", errors="replace").splitlines()
        if not lines:
            return f"{self.show(path)} is empty", False
        first, last = 1, len(lines)
        if view_range is not None:
            first, last = self._range(view_range, len(lines))
        elif len(lines) > VIEW_LINES:
            body = _numbered(lines[:VIEW_LINES], 1)
            return body + (
                f"\n[... showing lines 1-{VIEW_LINES} of {len(lines)}; use view_range for the"
                " rest, or grep -n to find what you need ...]"
            ), False
        body = _numbered(lines[first - 1 : last], first)
        if len(body) > self.output_cap:
            body = body[: self.output_cap].rsplit("\n", 1)[0]
            shown = body.count("\n") + first
            body += (
                f"\n[... showing lines {first}-{shown} of {len(lines)}; "
                "use view_range to read further ...]"
            )
        return body, False

    def _range(self, view_range: object, n_lines: int) -> tuple[int, int]:
        ok = (
            isinstance(view_range, list)
            and len(view_range) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
        )
        if not ok:
            raise ToolError("view_range must be two integers [first, last]; last -1 = to the end")
        assert isinstance(view_range, list)
        first, last = int(view_range[0]), int(view_range[1])
        if not 1 <= first <= n_lines:
            raise ToolError(f"view_range first line {first} is outside 1..{n_lines}")
        last = n_lines if last == -1 else min(last, n_lines)
        if last < first:
            raise ToolError(f"view_range last line {last} is before first line {first}")
        return first, last

    def _listing(self, path: Path) -> str:
        entries: list[str] = []
        for child in sorted(path.iterdir()):
            if child.name.startswith(".") or child.name in SKIP_DIRS:
                continue
            if child.is_dir() and not child.is_symlink():
                entries.append(self.show(child) + "/")
                try:
                    grandchildren = sorted(child.iterdir())
                except OSError:
                    continue
                for grand in grandchildren:
                    if grand.name.startswith(".") or grand.name in SKIP_DIRS:
                        continue
                    entries.append(self.show(grand) + ("/" if grand.is_dir() else ""))
            else:
                entries.append(self.show(child))
        head = f"Files and directories up to 2 levels deep in {self.show(path)} (hidden excluded):"
        if len(entries) > MAX_LISTING:
            more = len(entries) - MAX_LISTING
            entries = [*entries[:MAX_LISTING], f"[... {more} more entries; list with bash ...]"]
        return "\n".join([head, *entries]) if entries else head + "\n(empty)"

    def _create(self, path: Path, input: dict[str, Any]) -> tuple[str, bool]:
        text = _str_arg(input, "file_text", "create")
        if path.is_dir():
            raise ToolError(f"{self.show(path)} is a directory")
        existed = path.exists()
        self._write(path, text)
        verb = "overwritten" if existed else "created"
        return f"File {verb}: {self.show(path)} ({len(text.splitlines())} lines)", True

    def _str_replace(self, path: Path, input: dict[str, Any]) -> tuple[str, bool]:
        old = _str_arg(input, "old_str", "str_replace")
        new = _str_arg(input, "new_str", "str_replace", required=False)
        if not old:
            raise ToolError("`old_str` must not be empty; use insert to add text")
        text = self._read(path)
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\r\n" not in old:
            # The model writes \n; the file uses CRLF. Match (and write) in the file's style.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old_str was not found in {self.show(path)}; it must match exactly, whitespace"
                " and indentation included. View the file and copy the lines."
            )
        if count > 1:
            lines, at = [], 0
            for _ in range(min(count, 10)):
                at = text.index(old, at)
                lines.append(str(text.count("\n", 0, at) + 1))
                at += 1
            raise ToolError(
                f"old_str occurs {count} times in {self.show(path)} (lines {', '.join(lines)});"
                " include more surrounding lines so that it matches exactly once"
            )
        at = text.index(old)
        updated = text[:at] + new + text[at + len(old) :]
        self._write(path, updated)
        first = updated.count("\n", 0, at) + 1
        last = first + new.count("\n")
        snippet = self._snippet(updated, first, last)
        return f"Edited {self.show(path)}; the changed region now reads:\n{snippet}", True

    def _insert(self, path: Path, input: dict[str, Any]) -> tuple[str, bool]:
        # text_editor_20250728 names the text `insert_text`; older versions used `new_str`.
        key = "insert_text" if "insert_text" in input else "new_str"
        new = _str_arg(input, key, "insert")
        line = input.get("insert_line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise ToolError("`insert` needs `insert_line`, the line to insert after (0 = top)")
        text = self._read(path)
        lines = text.splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise ToolError(f"insert_line {line} is outside 0..{len(lines)}")
        newline = "\r\n" if "\r\n" in text else "\n"
        if line == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        lines.insert(line, new if new.endswith(("\n", "\r")) else new + newline)
        updated = "".join(lines)
        self._write(path, updated)
        snippet = self._snippet(updated, line + 1, line + max(new.count("\n"), 1))
        return f"Inserted after line {line} of {self.show(path)}:\n{snippet}", True
