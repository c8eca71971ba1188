"""A scripted TDD team for end-to-end tests: answers by role, cycle and attempt."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.anthropic import RecordedRequest, ScriptedReply, finish, reply, tool_use

ROLES = {
    "You are the Tester agent": "tester",
    "You are the Implementer agent of agentbot's TDD": "implementer",
    "You are the Refactorer agent": "refactorer",
    "You are the Supervisor of agentbot's TDD": "supervisor",
}

Edit = tuple[str, str | None]
"""(path, full new text) written with the editor; None: the file is deleted with bash."""


def create(path: str, text: str) -> dict[str, Any]:
    """An editor `create` call."""
    return tool_use(
        "str_replace_based_edit_tool", {"command": "create", "path": path, "file_text": text}
    )


@dataclass
class Cycle:
    """How the team plays one cycle; lists are per attempt."""

    requirement: int
    test_file: str
    tests: list[str]
    """The test file's whole text the Tester writes, per attempt."""
    test_name: str
    code: list[Edit]
    """The Implementer's one edit, per attempt."""
    refactor: list[Edit | None] = field(default_factory=lambda: [None])
    """The Refactorer's edit per attempt (None: nothing to refactor)."""


def role_cycle_attempt(request: RecordedRequest) -> tuple[str, int, int, str]:
    """(role, cycle, attempt, first message text) of a TDD request."""
    system = json.dumps(request.json.get("system", ""))
    role = next((r for marker, r in ROLES.items() if marker in system), "")
    first = json.loads(json.dumps(request.json["messages"][0]["content"]))
    text = "".join(b.get("text", "") for b in first) if isinstance(first, list) else str(first)
    cycle = re.search(r"# TDD cycle (\d+)", text)
    attempt = re.search(r"## Attempt (\d+)", text)
    assert role and cycle, (system[:200], text[:300])
    return role, int(cycle[1]), int(attempt[1]) if attempt else 1, text


RETRY = re.compile(r"The runner rejected that code \(attempt (\d+) of")


def resumed_attempt(request: RecordedRequest, attempt: int) -> tuple[int, bool]:
    """(attempt, fresh) after the runner's verdicts sent back into the same conversation:
    the attempt the last verdict asks for, and whether this request starts it."""
    texts = [json.dumps(m["content"]) for m in request.json["messages"] if m["role"] == "user"]
    asked = [int(m[1]) + 1 for t in texts for m in RETRY.finditer(t)]
    fresh = len(request.json["messages"]) == 1 or bool(RETRY.search(texts[-1]))
    return (asked[-1] if asked else attempt), fresh


@dataclass
class TddTeam:
    """Supervisor, Tester, Implementer and Refactorer scripted per cycle."""

    cycles: Mapping[int, Cycle]
    seen: Counter[tuple[str, int]] = field(default_factory=Counter)

    def __call__(self, request: RecordedRequest) -> ScriptedReply:
        role, number, attempt, text = role_cycle_attempt(request)
        self.seen[(role, number)] += 1
        spec = self.cycles[number]
        turn = len(request.json["messages"])
        if role == "supervisor":
            if "Requirements not covered yet" in text:
                return reply(finish(summary="next", data={"requirement": spec.requirement}))
            return reply(finish(summary="advice", data={"hint": "write a different test"}))
        if role == "tester":
            if turn == 1:
                return reply(create(spec.test_file, spec.tests[attempt - 1]))
            return reply(finish(summary="wrote a test", data={"test": spec.test_name}))
        attempt, fresh = resumed_attempt(request, attempt)
        edit = spec.code[attempt - 1] if role == "implementer" else spec.refactor[attempt - 1]
        if fresh and edit is not None:
            path, body = edit
            if body is None:
                return reply(tool_use("bash", {"command": f"rm {path}"}))
            return reply(create(path, body))
        data = {"refactoring": "build the numeral from a table"} if edit else {}
        return reply(finish(summary=f"{role} done", data=data))

    def calls(self, cycle: int) -> int:
        """Requests made for one cycle, all roles."""
        return sum(n for (_, c), n in self.seen.items() if c == cycle)


def team(
    cycles: Mapping[int, Cycle],
) -> tuple[TddTeam, list[Callable[[RecordedRequest], ScriptedReply]]]:
    """The team and a script long enough for any run of these tests."""
    t = TddTeam(cycles)
    return t, [t] * 200
