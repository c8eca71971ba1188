"""Session artifacts: unique folders, atomic validated status.json, append-only transcript."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.models import AgentStatus, SessionStatusFile, Usage
from bot.session import Session, slugify

CLOCK_START = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(CLOCK_START)


def test_create_names_the_folder_by_date_and_slug_and_never_reuses_it(
    tmp_path: Path, clock: FakeClock
) -> None:
    first = Session.create(tmp_path, "Fix #12: Login crashes!", clock)
    second = Session.create(tmp_path, "fix #12 login crashes", clock)
    third = Session.create(tmp_path, "fix-12-login-crashes", clock)

    assert first.path == tmp_path / "sessions" / "2026-03-04_fix-12-login-crashes"
    assert second.path.name == "2026-03-04_fix-12-login-crashes-2"
    assert third.path.name == "2026-03-04_fix-12-login-crashes-3"
    assert all(s.path.is_dir() for s in (first, second, third))
    assert first.name == first.path.name


def test_slugify_is_safe_for_paths() -> None:
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("日本語") == "session"
    assert len(slugify("x" * 200)) == 48


def test_write_status_round_trips_and_leaves_no_temp_files(
    tmp_path: Path, clock: FakeClock
) -> None:
    session = Session.create(tmp_path, "job", clock)
    status = SessionStatusFile(
        session=session.name, current_state="DONE", status=AgentStatus.OK, last_update=clock.now()
    )

    session.write_status(status)
    session.write_status(status.model_copy(update={"known_issues": ["flaky test"]}))

    back = session.read_status()
    assert back.status is AgentStatus.OK
    assert back.known_issues == ["flaky test"]
    assert json.loads((session.path / "status.json").read_text())["current_state"] == "DONE"
    assert sorted(p.name for p in session.path.iterdir()) == ["status.json"]


def test_failed_write_keeps_the_old_status(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session.create(tmp_path, "job", clock)
    session.write_status(SessionStatusFile(session=session.name, status=AgentStatus.OK))

    def boom(self: Path, target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        session.write_status(SessionStatusFile(session=session.name, status=AgentStatus.FAIL))
    monkeypatch.undo()

    assert session.read_status().status is AgentStatus.OK
    assert sorted(p.name for p in session.path.iterdir()) == ["status.json"]


def test_transcript_is_one_json_object_per_line(tmp_path: Path, clock: FakeClock) -> None:
    session = Session.create(tmp_path, "job", clock)
    session.append_transcript({"event": "reply", "usage": Usage(input_tokens=3), "path": Path("a")})
    clock.sleep(2)
    session.append_transcript({"event": "tool_result", "content": "line1\nline2 ✓"})

    lines = (session.path / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    events = session.read_transcript()
    assert events[0]["usage"]["input_tokens"] == 3
    assert events[0]["path"] == "a"
    assert events[0]["ts"] == CLOCK_START.isoformat()
    assert events[1]["ts"] == "2026-03-04T05:06:09+00:00"
    assert events[1]["content"] == "line1\nline2 ✓"


def test_concurrent_appends_do_not_interleave(tmp_path: Path, clock: FakeClock) -> None:
    session = Session.create(tmp_path, "job", clock)
    big = "x" * 50_000

    def write(n: int) -> None:
        for i in range(20):
            session.append_transcript({"event": "t", "n": n, "i": i, "blob": big})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    events = session.read_transcript()
    assert len(events) == 80
    assert all(e["blob"] == big for e in events)


def test_report_is_written(tmp_path: Path, clock: FakeClock) -> None:
    session = Session.create(tmp_path, "job", clock)
    session.write_report("# Report\n\nall good")
    assert (session.path / "report.md").read_text() == "# Report\n\nall good\n"


def test_transcript_redacts_registered_secrets(tmp_path: Path) -> None:
    from bot.secrets import register

    secret = "s3cr3t-value-registered-for-this-test"
    register(secret)
    session = Session.create(tmp_path, "redact", FakeClock())
    session.append_transcript({"type": "tool_result", "content": f"token={secret}"})
    session.append_transcript({"type": "tool_result", "content": "ghp_" + "a" * 36})
    text = (session.path / "transcript.jsonl").read_text()
    assert secret not in text and "ghp_aaaa" not in text
    assert text.count("[REDACTED]") == 2
