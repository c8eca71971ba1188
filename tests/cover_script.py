"""A scripted /cover team for end-to-end tests: answers by role and method from each request."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.anthropic import RecordedRequest, ScriptedReply, finish, reply, tool_use

ROLES = {
    "Analyzer agent": "analyzer",
    "Test Architect agent": "test_architect",
    "Test Writer agent": "test_writer",
}


def role_and_method(request: RecordedRequest) -> tuple[str, str]:
    """Which /cover role a request is for, and the method's qualified name."""
    system = json.dumps(request.json.get("system", ""))
    role = next((r for marker, r in ROLES.items() if marker in system), "")
    first = json.dumps(request.json["messages"][0]["content"])
    found = re.search(r"# /cover [\w ]+: `([^`]+)`", first)
    assert role and found, (system[:200], first[:300])
    return role, found.group(1)


@dataclass
class Method:
    """How the scripted team treats one method."""

    test_file: str
    tests: str
    """Text the writer appends to the test file (a bash heredoc)."""
    testable: bool = True
    behaviors: list[str] = field(default_factory=lambda: ["returns the right value"])
    writer_status: str = "OK"
    writer_done: bool = True
    """The writer's own `gates.meets_definition_of_done`."""


@dataclass
class CoverTeam:
    """Scripted analyzer, architect and writer for the methods in `methods`."""

    methods: Mapping[str, Method]
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)

    def __call__(self, request: RecordedRequest) -> ScriptedReply:
        role, name = role_and_method(request)
        self.seen[(role, name)] += 1
        spec = self.methods[name]
        turn = len(request.json["messages"])
        if role == "analyzer":
            data: dict[str, Any] = {
                "testable": spec.testable,
                "reason": "" if spec.testable else "it only logs",
                "behaviors": spec.behaviors if spec.testable else [],
                "edge_cases": [],
                "existing_tests": [],
            }
            return reply(finish(summary=f"analysed {name}", data=data))
        if role == "test_architect":
            cases = [{"name": f"test_{name}", "checks": b} for b in spec.behaviors]
            plan = {"test_file": spec.test_file, "cases": cases, "fixtures": []}
            return reply(finish(summary=f"planned {name}", data=plan))
        if turn == 1:
            command = f"cat >> {spec.test_file} <<'AGENTBOT_EOF'\n{spec.tests}AGENTBOT_EOF"
            return reply(tool_use("bash", {"command": command}))
        gates = {"meets_definition_of_done": spec.writer_done and spec.writer_status == "OK"}
        return reply(
            finish(status=spec.writer_status, summary=f"wrote tests for {name}", gates=gates)
        )

    def calls(self, name: str) -> int:
        """Requests made for one method, all roles."""
        return sum(n for (_, m), n in self.seen.items() if m == name)


def team(
    methods: Mapping[str, Method],
) -> tuple[CoverTeam, list[Callable[[RecordedRequest], ScriptedReply]]]:
    """The team and a script long enough for any run of these tests."""
    t = CoverTeam(methods)
    return t, [t] * 200
