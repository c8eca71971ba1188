"""Session artifacts of one job (seed 004): status.json, transcript.jsonl and report.md, and
the `AgentTrace` through which an agent run writes them.

A session lives in `<data_dir>/sessions/<YYYY-MM-DD>_<slug>/`. `status.json` and
`report.md` are replaced atomically (temp file + rename), so a reader never sees a
half-written file; `transcript.jsonl` is append-only, one JSON object per line, and a
crash loses at most the line being written.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bot.clock import Clock
from bot.models import AgentResult, AgentStatus, SessionPhase, SessionStatusFile
from bot.outbound.text import redact_data
from bot.secrets import redact

STATUS_FILE = "status.json"
TRANSCRIPT_FILE = "transcript.jsonl"
REPORT_FILE = "report.md"


def slugify(text: str, *, max_length: int = 48) -> str:
    """Lower-case ASCII letters, digits and dashes: safe in a folder name."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:max_length].rstrip("-") or "session"


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(str(v) for v in value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return repr(value)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)  # atomic rename (os.replace)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Session:
    """One job's artifact folder; safe to share between the threads of one job."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The folder name, `<YYYY-MM-DD>_<slug>`, used as `status.json`'s `session`."""
        return self.path.name

    @classmethod
    def create(cls, data_dir: Path, slug: str, clock: Clock) -> Session:
        """Make a new, unique session folder (`-2`, `-3`… when the name is taken)."""
        base = f"{clock.now():%Y-%m-%d}_{slugify(slug)}"
        root = data_dir / "sessions"
        # Transcripts quote what the agent read: private wherever the data dir was made.
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for n in range(1, 10_000):
            path = root / (base if n == 1 else f"{base}-{n}")
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                continue
            return cls(path, clock)
        raise FileExistsError(f"no free session folder for {base} in {root}")

    def write_status(self, status: SessionStatusFile) -> None:
        """Replace status.json atomically (redacted), then read it back to prove it validates."""
        target = self.path / STATUS_FILE
        clean = SessionStatusFile.model_validate(redact_data(status.model_dump(mode="json")))
        with self._lock:
            _write_atomic(target, clean.model_dump_json(indent=2) + "\n")
            SessionStatusFile.model_validate_json(target.read_text(encoding="utf-8"))

    def read_status(self) -> SessionStatusFile:
        """The current status.json, validated."""
        return SessionStatusFile.model_validate_json(
            (self.path / STATUS_FILE).read_text(encoding="utf-8")
        )

    def append_transcript(self, event: dict[str, Any]) -> None:
        """Append one event (a `ts` is added when missing) as a JSON line."""
        record = event if "ts" in event else {"ts": self.clock.now().isoformat(), **event}
        # Tool output can quote a secret (a token printed by a test, a value the agent was
        # told to leak): the transcript is uploaded as an artifact, so every string in it
        # passes the outbound scanner.
        plain = json.loads(json.dumps(record, default=_json_default, ensure_ascii=False))
        line = json.dumps(redact_data(plain), ensure_ascii=False)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        with (
            self._lock,
            os.fdopen(
                os.open(self.path / TRANSCRIPT_FILE, flags, 0o600), "a", encoding="utf-8"
            ) as fh,
        ):
            fh.write(line + "\n")

    def read_transcript(self) -> list[dict[str, Any]]:
        """Every event written so far, in order."""
        path = self.path / TRANSCRIPT_FILE
        if not path.exists():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def write_report(self, markdown: str) -> None:
        """Replace report.md atomically."""
        text = redact(markdown if markdown.endswith("\n") else markdown + "\n")
        with self._lock:
            _write_atomic(self.path / REPORT_FILE, text)


_FINAL_STATE: dict[AgentStatus, SessionPhase] = {
    AgentStatus.OK: "DONE",
    AgentStatus.NEEDS_INFO: "ASK_USER",
    AgentStatus.BLOCKED: "BLOCKED",
    AgentStatus.FAIL: "BLOCKED",
}


class AgentTrace:
    """What one agent run leaves in its session: transcript events, status.json, report.md.

    Without a session (a run nobody records) every call does nothing.
    """

    def __init__(self, session: Session | None, role: str, clock: Clock) -> None:
        self.session = session
        self.role = role
        self.clock = clock

    def event(self, event: str, /, **fields: Any) -> None:
        """One transcript line for this role (`fields` may hold a `name`: a tool's)."""
        if self.session is not None:
            self.session.append_transcript({"event": event, "role": self.role, **fields})

    def started(self, **fields: Any) -> None:
        """The run began: status IMPLEMENT_LOOP, a `start` event with its set-up."""
        self._status("IMPLEMENT_LOOP", None)
        self.event("start", **fields)

    def ended(self, result: AgentResult, status: AgentStatus) -> None:
        """The run ended: an `end` event, the final status, and report.md."""
        if self.session is None:
            return
        self.event(
            "end",
            status=status.value,
            success=result.success,
            error=result.error_details,
            turns=result.turns,
            usage=result.usage,
            cost_usd=result.cost_usd,
            files_modified=result.files_modified,
        )
        self._status(_FINAL_STATE[status], status, result.error_details or "")
        self.session.write_report(agent_report(result))

    def _status(self, state: SessionPhase, status: AgentStatus | None, issue: str = "") -> None:
        if self.session is None:
            return
        try:
            current = self.session.read_status()
        except (OSError, ValueError):  # none yet, or unreadable: start afresh
            current = SessionStatusFile(session=self.session.name)
        issues = [*current.known_issues, issue] if issue else current.known_issues
        self.session.write_status(
            current.model_copy(
                update={
                    "current_state": state,
                    "status": status,
                    "known_issues": issues,
                    "last_update": self.clock.now(),
                }
            )
        )


def agent_report(result: AgentResult) -> str:
    """A short markdown report of one run (report.md until the workflow writes its own)."""
    out = result.output
    status = out.status.value if out is not None else AgentStatus.FAIL.value
    lines = [f"# {result.role.value}: {status}", "", result.message or "(no summary)", ""]
    if out is not None and out.root_cause:
        lines += [f"**Root cause:** {out.root_cause}", ""]
    if out is not None and out.question:
        lines += [f"**Question:** {out.question}", ""]
    if result.error_details:
        lines += [f"**Error:** {result.error_details}", ""]
    if result.files_modified:
        lines += ["**Files modified:**", *(f"- `{p}`" for p in result.files_modified), ""]
    u = result.usage
    lines.append(
        f"Turns: {result.turns} · tokens in {u.input_tokens:,}, out {u.output_tokens:,},"
        f" cache write {u.cache_creation_input_tokens:,}, cache read"
        f" {u.cache_read_input_tokens:,} · cost ${result.cost_usd:.4f}"
        f" · {result.duration_seconds:.1f} s"
    )
    return "\n".join(lines) + "\n"
