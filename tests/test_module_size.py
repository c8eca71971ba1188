"""Modules stay under 300 lines, or say why in a `# Over 300 lines:` line at their top."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 300
REASON = "# Over 300 lines:"


def long_modules_without_reason(root: Path) -> list[str]:
    """Modules of `bot/` and `webhooks/` over the limit whose first 20 lines give no reason."""
    found = []
    for folder in ("bot", "webhooks"):
        for path in sorted((root / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            if len(lines) > LIMIT and not any(line.startswith(REASON) for line in lines[:20]):
                found.append(f"{path.relative_to(root)}: {len(lines)} lines")
    return found


def test_every_long_module_says_why() -> None:
    assert long_modules_without_reason(ROOT) == []


def test_a_long_module_without_its_reason_is_named(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "webhooks").mkdir()
    (tmp_path / "bot" / "long.py").write_text('"""Long."""\n' + "x = 1\n" * LIMIT)
    (tmp_path / "bot" / "said.py").write_text(f'"""Long."""\n{REASON} why.\n' + "x = 1\n" * LIMIT)
    assert long_modules_without_reason(tmp_path) == [f"bot/long.py: {LIMIT + 1} lines"]
