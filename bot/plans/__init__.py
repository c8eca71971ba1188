"""Plans (issue #28): what a Planner proposes, the comment that carries it, and the checks the
runner makes against it. Pure: text and data in, text and data out.

A plan comment opens with a hidden marker, `<!-- agentbot-plan:v1 BASE64 -->`, whose payload
is the plan as JSON. Base64 cannot hold `-->`, and the model's text in the visible part is
escaped so it cannot open a comment of its own; only a comment that *starts* with the
marker and was written by agentbot's own account is read back, so neither the model nor a
person can forge an approved plan.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.outbound.paths import kind_of

MARKER = "agentbot-plan:v1"
_HEAD = re.compile(r"\A<!-- agentbot-plan:v1 ([A-Za-z0-9+/=]{1,200000}) -->")
MAX_FILES = 50
"""Files a plan may list; a longer list is cut (a plan is a promise, not a tree listing)."""


class PlanData(BaseModel):
    """One plan: the approach, the files it changes, the tests it adds, risks, an estimate."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    approach: str = Field(min_length=1, max_length=4000)
    files: list[str] = Field(min_length=1)
    tests: list[str] = Field(default_factory=list)
    risks: list[str] = Field(default_factory=list)
    turns: int = Field(default=20, gt=0, le=1000)
    usd: float = Field(default=1.0, gt=0, le=1000)
    issue_digest: str = ""
    """`issue_digest(title, body)` when planned: an edited issue no longer matches."""
    base_sha: str = ""
    """The default branch's commit the plan was made on."""


def issue_digest(title: str, body: str) -> str:
    """A fingerprint of what the issue asks (title and body), to tell an edit after the plan."""
    return hashlib.sha256(f"{title}\0{body}".encode()).hexdigest()[:16]


def clean_path(path: str) -> str:
    """A repository-relative path as git prints it (`./a/b` and `/a/b` become `a/b`)."""
    return re.sub(r"^(\./|/)+", "", path.strip().strip("`").strip())


def from_agent(data: object, *, digest: str, base_sha: str) -> PlanData | str:
    """The plan from the Planner's `finish` data, or why it is not one (the field named)."""
    if not isinstance(data, dict):
        return "the plan is not a JSON object"
    fields = dict(data)
    for key in ("files", "tests", "risks"):
        items = fields.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return f"`{key}` must be a list of strings"
        if key != "risks":
            items = [p for p in dict.fromkeys(clean_path(i) for i in items) if p]
        fields[key] = items[:MAX_FILES]
    fields.update(issue_digest=digest, base_sha=base_sha)
    try:
        return PlanData.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "plan"
        return f"`{where}`: {err['msg']}"


def _escaped(text: str) -> str:
    """Model text made inert in Markdown: no HTML (so no hidden comment), one line per item."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_comment(plan: PlanData, *, approve: str, revise: str, notes: str = "") -> str:
    """The plan comment: the hidden machine copy first, then the plan for people."""
    payload = base64.b64encode(plan.model_dump_json().encode()).decode()
    files = "\n".join(f"- `{_escaped(f).replace('`', '')}`" for f in plan.files)
    tests = "\n".join(f"- `{_escaped(t).replace('`', '')}`" for t in plan.tests) or "- none"
    risks = "\n".join(f"- {_escaped(r)}" for r in plan.risks) or "- none named"
    revised = f"\n\nRevised with: {_escaped(notes)}" if notes.strip() else ""
    return (
        f"<!-- {MARKER} {payload} -->\n"
        f"## agentbot's plan\n\n{_escaped(plan.approach)}{revised}\n\n"
        f"**Files it will change**\n{files}\n\n**Tests it will add**\n{tests}\n\n"
        f"**Risks**\n{risks}\n\n"
        f"**Estimate:** about {plan.turns} turns, about ${plan.usd:.2f}.\n\n"
        f"Comment `{approve}` to run it (the change may touch only these files and new"
        f" tests), or `{revise} <notes>` for a new plan."
    )


def read_comment(body: str) -> PlanData | None:
    """The plan a comment carries, or None (not a plan comment, or a broken one)."""
    match = _HEAD.match(body)
    if match is None:
        return None
    try:
        raw = json.loads(base64.b64decode(match.group(1), validate=True))
        return PlanData.model_validate(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def latest_plan(comments: Iterable[tuple[str, str]], mine: Collection[str]) -> PlanData | None:
    """The newest plan among (author, body) comments written by one of the `mine` logins."""
    own = {m.casefold() for m in mine if m.strip()}
    found = None
    for author, body in comments:
        if author.casefold() in own and (plan := read_comment(body)) is not None:
            found = plan
    return found


def allowed(plan: PlanData, path: str, *, added: bool) -> bool:
    """Whether a change to `path` keeps to the plan: a listed file, or a test it adds."""
    path = clean_path(path)
    listed = {clean_path(p) for p in (*plan.files, *plan.tests)}
    return path in listed or (added and kind_of(path) == "test")


def beyond_plan(plan: PlanData, changed: Sequence[str], added: Collection[str]) -> list[str]:
    """The changed files the plan does not cover, in order (new test files are covered)."""
    return [p for p in changed if not allowed(plan, p, added=p in added)]


def plan_budget(plan: PlanData, factor: float, cap_usd: float, cap_turns: int) -> tuple[float, int]:
    """The job's USD and turn budget: the plan's estimate times `factor`, within the caps."""
    usd = min(cap_usd, round(plan.usd * factor, 4))
    turns = min(cap_turns, max(1, int(plan.turns * factor + 0.5)))
    return usd, turns


def deviation_note(plan: PlanData, extra: Sequence[str]) -> str:
    """What the agent is told when its change leaves the plan (sent back once)."""
    listed = "\n".join(f"- `{p}`" for p in plan.files)
    beyond = "\n".join(f"- `{p}`" for p in extra)
    return (
        "Your change touches files outside the approved plan:\n"
        f"{beyond}\n\nThe plan allows only these files (and new test files):\n{listed}\n\n"
        "Undo the changes to the files beyond the plan (`git checkout -- <file>`, or delete a"
        " file you created), keep the fix within the listed files, then call `finish` again."
    )


def deviation_section(extra: Sequence[str]) -> str:
    """The pull request's note naming each file beyond the approved plan."""
    named = "\n".join(f"- `{p}`" for p in extra)
    return (
        "### Beyond the approved plan\nThis change touches files the approved plan did not"
        f" list, so it opens as a draft for a person to judge:\n{named}\n"
    )


def plan_message(plan: PlanData) -> str:
    """The approved plan as the IssueFixer's first message states it (trusted: ours)."""
    files = "\n".join(f"- `{p}`" for p in plan.files)
    tests = "\n".join(f"- `{t}`" for t in plan.tests) or "- (new tests as needed)"
    return (
        "## The approved plan\nA maintainer approved this plan; follow it. Change only the"
        " files it lists (new test files are allowed); a change to any other file is sent"
        f" back to you.\n\nApproach (the Planner's words):\n{plan.approach}\n\n"
        f"Files to change:\n{files}\n\nTests to add:\n{tests}"
    )
