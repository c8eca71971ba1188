"""Metadata files: markers, prerequisites, skips, the hash-keyed cache, atomic YAML."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.cover.discovery import SourcePair, changed_lines, discover
from bot.cover.metadata import MetadataStore, Structure
from bot.errors import CoverStageError

SRC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def _methods(src: str = SRC) -> list:  # type: ignore[type-arg]
    diff = changed_lines("+++ b/pkg/calc.py\n@@ -0,0 +1,10 @@\n")
    return discover(diff, {"pkg/calc.py": SourcePair(src.encode(), None)})


def test_discovery_writes_the_seed_schema_under_the_repo(tmp_path: Path) -> None:
    store = MetadataStore(tmp_path, "octo/calc")
    meta = store.discover(_methods()[0])
    path = tmp_path / "metadata" / "octo" / "calc" / "pkg_calc__add.yml"
    assert store.path(meta.slug) == path
    data = yaml.safe_load(path.read_text())
    assert data["source_file"] == "pkg/calc.py" and data["method"] == "add"
    assert data["method_mode"] == "new" and data["line_range"] == [1, 2]
    assert data["complexity"] == {"zone": "green", "loc": 2, "complexity": 1}
    assert data["automation"]["discovery_completed"] is True
    assert data["automation"]["discovery_version"] == "1.0"


def test_a_stage_needs_its_predecessors_marker(tmp_path: Path) -> None:
    meta = MetadataStore(tmp_path, "o/r").discover(_methods()[0])
    meta.require("analyzer")
    with pytest.raises(CoverStageError) as err:
        meta.require("test_architect")
    assert err.value.stage == "test_architect"
    assert "analyzer_completed is missing" in str(err.value)


def test_skip_is_success_with_a_reason(tmp_path: Path) -> None:
    meta = MetadataStore(tmp_path, "o/r").discover(_methods()[0])
    meta.complete("analyzer", skip_reason="nothing testable: it only logs")
    assert meta.completed("analyzer") and meta.skipped("analyzer").startswith("nothing")
    meta.require("test_architect")
    meta.complete("analyzer")
    assert meta.skipped("analyzer") == ""


def test_markers_survive_while_the_method_text_is_unchanged(tmp_path: Path) -> None:
    store = MetadataStore(tmp_path, "o/r")
    add, sub = _methods()
    for m in (add, sub):
        meta = store.discover(m)
        meta.complete("analyzer")
        meta.structure = Structure(test_file="tests/test_calc.py")
        meta.complete("test_architect")
        store.save(meta)
    # `sub` changes, `add` moves down two lines but keeps its text.
    changed = "# header\n\n" + SRC.replace("a - b", "b - a")
    add2, sub2 = _methods(changed)
    kept = store.discover(add2)
    assert kept.completed("test_architect") and kept.line_range == [3, 4]
    redone = store.discover(sub2)
    assert not redone.completed("analyzer") and redone.structure is None


def test_an_error_drops_the_stage_and_later_markers(tmp_path: Path) -> None:
    store = MetadataStore(tmp_path, "o/r")
    meta = store.discover(_methods()[0])
    for stage in ("analyzer", "test_architect", "test_writer", "reviewer"):
        meta.complete(stage)
    meta.record_error("test_writer", "boom")
    assert meta.completed("test_architect")
    assert not meta.completed("test_writer") and not meta.completed("reviewer")
    assert meta.automation["errors"] == ["test_writer: boom"]


def test_an_unreadable_file_is_rebuilt(tmp_path: Path) -> None:
    store = MetadataStore(tmp_path, "o/r")
    method = _methods()[0]
    store.path(method.slug).parent.mkdir(parents=True)
    store.path(method.slug).write_text("slug: [unclosed\n")
    assert store.load(method.slug) is None
    assert store.discover(method).completed("discovery")
    assert store.load(method.slug) is not None


def test_the_metadata_travels_in_the_report_to_a_fresh_data_folder(tmp_path: Path) -> None:
    from bot.cover.metadata import pack, unpack

    runner1 = MetadataStore(tmp_path / "one", "octo/calc")
    add, sub = _methods()
    meta = runner1.discover(add)
    meta.complete("analyzer")
    runner1.save(meta)
    report = f"### agentbot /cover\n\n| table |\n\n{pack([meta, runner1.discover(sub)])}\n"

    runner2 = MetadataStore(tmp_path / "two", "octo/calc")
    assert runner2.seed(unpack(report)) == 2
    assert runner2.discover(add).completed("analyzer")  # the marker came with the comment
    assert runner2.seed(unpack(report)) == 0  # what the folder has, it keeps


@pytest.mark.parametrize(
    "body",
    [
        "no marker",
        "<!-- agentbot:cover-cache v1 !!notbase64 -->",
        "<!-- agentbot:cover-cache v1 AAAA -->",
        # A small marker that inflates past the bound: never read whole.
        "<!-- agentbot:cover-cache v1 BOMB -->",
    ],
)
def test_a_broken_or_hostile_marker_is_no_cache(body: str) -> None:
    import base64
    import zlib

    from bot.cover.metadata import unpack

    bomb = base64.urlsafe_b64encode(zlib.compress(b"[" + b" " * 5_000_000 + b"]")).decode()
    assert unpack(body.replace("BOMB", bomb)) == []


def test_a_report_too_large_for_a_comment_carries_no_marker() -> None:
    from bot.cover.metadata import CACHE_LIMIT, Analysis, fresh, pack

    one = _methods()[0]
    noisy = [f"{i} {i * 7919 % 104729}" for i in range(20000)]  # compresses poorly enough
    big = fresh(one).model_copy(update={"analysis": Analysis(behaviors=noisy)})
    assert 0 < len(pack([fresh(one)])) < CACHE_LIMIT
    assert pack([big]) == ""
