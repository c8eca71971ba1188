"""Per-method metadata files with completion markers (seed 002, adapted to one method each).

`AGENTBOT_DATA_DIR/metadata/<owner>/<repo>/<slug>.yml` holds what discovery found, what
each stage produced and the markers `automation.<stage>_completed` (+ `_version`,
`_skipped`, `_skip_reason`). A stage checks its predecessor's marker before it starts,
writes its own when it ends, and a failure stops the pipeline naming the stage. The
markers stay valid while the method's text hashes the same: discovery starts a fresh
file when the hash changed, so only changed methods are analysed again.

The data folder does not outlive an Action's runner, so the metadata also travels with the
pull request: `pack` writes it as a hidden marker at the end of the /cover report comment
and `unpack` reads it back; `MetadataStore.seed` puts what the folder lacks in place.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field
from pydantic import ValidationError as PydanticValidationError

from bot.cover.discovery import ChangedMethod
from bot.errors import CoverStageError
from bot.models.base import Model
from bot.validation.environment import write_atomic

Stage = Literal["discovery", "analyzer", "test_architect", "test_writer", "reviewer"]
STAGES: tuple[Stage, ...] = ("discovery", "analyzer", "test_architect", "test_writer", "reviewer")
CACHE_MARKER = "agentbot:cover-cache"
CACHE_LIMIT = 30_000
"""Characters the packed marker may take (a comment holds 65,536); beyond it the run packs none."""
_CACHE_RE = re.compile(r"<!-- agentbot:cover-cache v1 ([A-Za-z0-9_=-]+) -->")
VERSION = "1.0"
"""Bumped when a stage's output changes shape: older markers then no longer count."""


class Complexity(Model):
    """A method's size and zone."""

    zone: str
    loc: int
    complexity: int


class Analysis(Model):
    """What the analyzer found (seed 002's behaviour bank, flattened to one method)."""

    behaviors: list[str] = Field(default_factory=list)
    edge_cases: list[str] = Field(default_factory=list)
    existing_tests: list[str] = Field(default_factory=list)


class PlannedCase(Model):
    """One planned test."""

    name: str
    checks: str = ""
    """The behaviour or edge case it proves."""


class Structure(Model):
    """The test architect's plan: where the tests go and what they are."""

    test_file: str
    cases: list[PlannedCase] = Field(default_factory=list)
    fixtures: list[str] = Field(default_factory=list)


class WrittenTests(Model):
    """What the writer and the reviewer left: tests kept, dropped, and the mutants."""

    test_file: str = ""
    files: list[str] = Field(default_factory=list)
    """The test files the writer changed."""
    existing: list[str] = Field(default_factory=list)
    """Ids of the tests those files held before the writer: the others are new."""
    added: list[str] = Field(default_factory=list)
    titles: list[str] = Field(default_factory=list)
    """The kept tests' titles, to tell that they are still in the files (the cache)."""
    dropped: list[str] = Field(default_factory=list)
    mutants: int = 0
    killed: int = 0


class CoverMetadata(Model):
    """One method's metadata file."""

    slug: str
    source_file: str
    method: str
    method_id: str
    language: str
    method_mode: str
    line_range: list[int]
    complexity: Complexity
    source_hash: str
    analysis: Analysis | None = None
    structure: Structure | None = None
    tests: WrittenTests | None = None
    automation: dict[str, Any] = Field(default_factory=dict)

    def completed(self, stage: Stage) -> bool:
        """True when `stage` finished (or skipped) at the current version."""
        a = self.automation
        return a.get(f"{stage}_completed") is True and a.get(f"{stage}_version") == VERSION

    def skipped(self, stage: Stage) -> str:
        """Why `stage` skipped, or "" when it did its work."""
        if self.automation.get(f"{stage}_skipped") is True:
            return str(self.automation.get(f"{stage}_skip_reason") or "skipped")
        return ""

    def complete(self, stage: Stage, *, skip_reason: str = "") -> None:
        """Write `stage`'s marker; a skip is a success with its reason."""
        a = dict(self.automation)
        a[f"{stage}_completed"] = True
        a[f"{stage}_version"] = VERSION
        a[f"{stage}_skipped"] = bool(skip_reason)
        if skip_reason:
            a[f"{stage}_skip_reason"] = skip_reason
        else:
            a.pop(f"{stage}_skip_reason", None)
        self.automation = a

    def reset_from(self, stage: Stage) -> None:
        """Forget the markers of `stage` and every stage after it."""
        later = STAGES[STAGES.index(stage) :]
        self.automation = {
            k: v
            for k, v in self.automation.items()
            if not k.startswith(tuple(f"{s}_" for s in later))
        }

    def record_error(self, stage: Stage, reason: str, *, redo_from: Stage | None = None) -> None:
        """Note a failure (seed 002 `automation.errors`); drop the markers from `redo_from`
        (default: the failed stage) on, so the next run starts there."""
        self.reset_from(redo_from or stage)
        self.automation = {
            **self.automation,
            "errors": [*self.automation.get("errors", []), f"{stage}: {reason}"],
        }

    def require(self, stage: Stage) -> None:
        """The prerequisite check: the stage before `stage` must have completed."""
        before = STAGES[STAGES.index(stage) - 1]
        if not self.completed(before):
            raise CoverStageError(stage, self.method_id, f"{before}_completed is missing")


def fresh(method: ChangedMethod) -> CoverMetadata:
    """Discovery's part of a method's metadata, every later marker unset."""
    fn = method.function
    meta = CoverMetadata(
        slug=method.slug,
        source_file=method.path,
        method=fn.qualname,
        method_id=method.id,
        language=method.language,
        method_mode=method.mode,
        line_range=[fn.start_line, fn.end_line],
        complexity=Complexity(zone=method.zone, loc=fn.loc, complexity=fn.branches + 1),
        source_hash=fn.source_hash,
    )
    meta.complete("discovery")
    return meta


class MetadataStore:
    """The metadata files of one repository."""

    def __init__(self, data_dir: Path, repo: str) -> None:
        owner, _, name = repo.partition("/")
        self.root = data_dir / "metadata" / owner / name

    def path(self, slug: str) -> Path:
        """Where the method `slug`'s file lives."""
        return self.root / f"{slug}.yml"

    def load(self, slug: str) -> CoverMetadata | None:
        """The stored metadata, or None when absent or unreadable (it is then rebuilt)."""
        try:
            data = yaml.safe_load(self.path(slug).read_text(encoding="utf-8"))
            return CoverMetadata.model_validate(data)
        except (OSError, yaml.YAMLError, PydanticValidationError):
            return None

    def save(self, meta: CoverMetadata) -> None:
        """Write atomically: a reader sees the old file or the new one."""
        text = yaml.safe_dump(meta.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
        write_atomic(self.path(meta.slug), text)

    def discover(self, method: ChangedMethod) -> CoverMetadata:
        """Discovery's stage: keep the stored file while the method's hash is unchanged."""
        stored = self.load(method.slug)
        current = fresh(method)
        if stored is None or stored.source_hash != current.source_hash:
            self.save(current)
            return current
        # Same text: later markers stay; refresh what discovery knows (lines may have moved).
        kept = stored.model_copy(
            update={
                "line_range": current.line_range,
                "method_mode": current.method_mode,
                "complexity": current.complexity,
            }
        )
        self.save(kept)
        return kept

    def seed(self, metas: Iterable[CoverMetadata]) -> int:
        """Save the metadata this folder lacks (from the PR's report); how many were new."""
        added = 0
        for meta in metas:
            if self.load(meta.slug) is None:
                self.save(meta)
                added += 1
        return added


def merge(
    carried: Iterable[CoverMetadata], current: Iterable[CoverMetadata | None]
) -> list[CoverMetadata]:
    """The carried metadata updated with this run's: methods a narrower run skipped stay."""
    by_slug = {m.slug: m for m in carried}
    by_slug.update({m.slug: m for m in current if m is not None})
    return list(by_slug.values())


def pack(metas: Iterable[CoverMetadata]) -> str:
    """The metadata as one hidden marker line (urlsafe base64 of zlib JSON), or "" if too big."""
    data = json.dumps([m.model_dump(mode="json") for m in metas], separators=(",", ":"))
    blob = base64.urlsafe_b64encode(zlib.compress(data.encode("utf-8"), 9)).decode("ascii")
    line = f"<!-- {CACHE_MARKER} v1 {blob} -->"
    return line if len(line) <= CACHE_LIMIT else ""


def unpack(body: str) -> list[CoverMetadata]:
    """The metadata a report comment carries; [] when it has none or it is unreadable."""
    found = _CACHE_RE.search(body)
    if not found:
        return []
    try:
        inflate = zlib.decompressobj()
        # Bounded: the marker is read from a comment, so it is never trusted to be small.
        raw = inflate.decompress(base64.urlsafe_b64decode(found.group(1)), 2_000_000)
        if inflate.unconsumed_tail:
            return []
        items = json.loads(raw.decode("utf-8"))
        return [CoverMetadata.model_validate(i) for i in items] if isinstance(items, list) else []
    except (binascii.Error, zlib.error, ValueError, PydanticValidationError):
        return []
