"""The fake GitHub's answers validate against GitHub's OpenAPI response schemas."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest

from bot.clock import FakeClock
from tests.fakes.github import DEFAULT_TOKEN, FakeGitHub, fake_github

# The same seeded repository as the behaviour tests: the shapes checked here are theirs.
from tests.fakes.github.routes_reviews import add_review_comment
from tests.test_fake_github import REPO, app_jwt, seeded

SCHEMAS = json.loads(
    (Path(__file__).parent / "data" / "openapi" / "schemas.json").read_text(encoding="utf-8")
)["endpoints"]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHub]:
    yield from fake_github()


@pytest.fixture
def gh(server: FakeGitHub) -> FakeGitHub:
    return server.reset(clock=FakeClock())


@pytest.fixture
def http(gh: FakeGitHub) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {DEFAULT_TOKEN}", "Accept": "application/vnd.github+json"}
    with httpx.Client(base_url=gh.url, headers=headers) as client:
        yield client


def forbidden_comment(http: httpx.Client, gh: FakeGitHub, issue: int) -> httpx.Response:
    """A scripted 403 with the default error body the fake builds."""
    gh.fail_next("POST", r".*/comments", 403)
    return http.post(f"/repos/{REPO}/issues/{issue}/comments", json={"body": "x"})


Probe = Callable[[httpx.Client, FakeGitHub, dict[str, int]], httpx.Response]

# (endpoint as in schemas.json, status, request): every schema must be exercised.
PROBES: list[tuple[str, str, Probe]] = [
    ("GET /repos/{owner}/{repo}", "200", lambda c, g, s: c.get(f"/repos/{REPO}")),
    ("GET /repos/{owner}/{repo}", "404", lambda c, g, s: c.get("/repos/octo/missing")),
    ("GET /repos/{owner}/{repo}/issues", "200", lambda c, g, s: c.get(f"/repos/{REPO}/issues")),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/issues/{s['issue']}"),
    ),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}",
        "404",
        lambda c, g, s: c.get(f"/repos/{REPO}/issues/999"),
    ),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/issues/{s['issue']}/comments"),
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "201",
        lambda c, g, s: c.post(f"/repos/{REPO}/issues/{s['issue']}/comments", json={"body": "x"}),
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "404",
        lambda c, g, s: c.post(f"/repos/{REPO}/issues/999/comments", json={"body": "x"}),
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "403",
        lambda c, g, s: forbidden_comment(c, g, s["issue"]),
    ),
    (
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        "200",
        lambda c, g, s: c.patch(
            f"/repos/{REPO}/issues/comments/{s['comment']}", json={"body": "y"}
        ),
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
        "200",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/issues/{s['issue']}/labels", json={"labels": ["agent-fix"]}
        ),
    ),
    (
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        "200",
        lambda c, g, s: c.delete(f"/repos/{REPO}/issues/{s['issue']}/labels/bug"),
    ),
    (
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        "404",
        lambda c, g, s: c.delete(f"/repos/{REPO}/issues/{s['issue']}/labels/absent"),
    ),
    (
        "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/collaborators/maintainer/permission"),
    ),
    (
        "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
        "404",
        lambda c, g, s: c.get(f"/repos/{REPO}/collaborators/nobody-at-all/permission"),
    ),
    (
        "GET /repos/{owner}/{repo}/contents/{path}",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/contents/README.md"),
    ),
    (
        "GET /repos/{owner}/{repo}/contents/{path}",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/contents/src"),
    ),
    (
        "GET /repos/{owner}/{repo}/contents/{path}",
        "404",
        lambda c, g, s: c.get(f"/repos/{REPO}/contents/missing.txt"),
    ),
    ("GET /repos/{owner}/{repo}/pulls", "200", lambda c, g, s: c.get(f"/repos/{REPO}/pulls")),
    (
        "POST /repos/{owner}/{repo}/pulls",
        "201",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/pulls", json={"title": "t", "head": "fix", "base": "main", "body": ""}
        ),
    ),
    (
        "POST /repos/{owner}/{repo}/pulls",
        "422",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/pulls", json={"title": "t", "head": "feature", "base": "main"}
        ),
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/pulls/{s['pull']}"),
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}",
        "404",
        lambda c, g, s: c.get(f"/repos/{REPO}/pulls/{s['issue']}"),
    ),
    (
        "PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
        "200",
        lambda c, g, s: c.patch(f"/repos/{REPO}/pulls/{s['pull']}", json={"body": "new"}),
    ),
    (
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
        "201",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/pulls/{s['pull']}/requested_reviewers", json={"reviewers": ["octocat"]}
        ),
    ),
    (
        "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
        "204",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/actions/workflows/agentbot.yml/dispatches",
            json={"ref": "main", "inputs": {"issue": "1"}},
        ),
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
        "200",
        lambda c, g, s: (
            add_review_comment(g, REPO, s["pull"], "nit", user="rev", path="a.py", line=2),
            c.get(f"/repos/{REPO}/pulls/{s['pull']}/comments"),
        )[1],
    ),
    (
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
        "201",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/pulls/{s['pull']}/comments/"
            f"{add_review_comment(g, REPO, s['pull'], 'nit', user='rev', path='a.py').id}/replies",
            json={"body": "done"},
        ),
    ),
    (
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
        "404",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/pulls/{s['pull']}/comments/123/replies", json={"body": "done"}
        ),
    ),
    (
        "POST /repos/{owner}/{repo}/check-runs",
        "201",
        lambda c, g, s: c.post(
            f"/repos/{REPO}/check-runs", json={"name": "agentbot", "head_sha": "a" * 40}
        ),
    ),
    (
        "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
        "200",
        lambda c, g, s: c.patch(
            f"/repos/{REPO}/check-runs/"
            + str(
                c.post(
                    f"/repos/{REPO}/check-runs", json={"name": "agentbot", "head_sha": "a" * 40}
                ).json()["id"]
            ),
            json={"conclusion": "success", "output": {"title": "ok", "summary": "fine"}},
        ),
    ),
    (
        "GET /repos/{owner}/{repo}/installation",
        "200",
        lambda c, g, s: c.get(f"/repos/{REPO}/installation", headers=app_jwt(g)),
    ),
    (
        "GET /repos/{owner}/{repo}/installation",
        "404",
        lambda c, g, s: c.get("/repos/someone/else/installation", headers=app_jwt(g)),
    ),
    (
        "POST /app/installations/{installation_id}/access_tokens",
        "201",
        lambda c, g, s: c.post("/app/installations/22/access_tokens", headers=app_jwt(g)),
    ),
    (
        "POST /app/installations/{installation_id}/access_tokens",
        "404",
        lambda c, g, s: c.post("/app/installations/999/access_tokens", headers=app_jwt(g)),
    ),
    (
        "POST /app/installations/{installation_id}/access_tokens",
        "401",
        lambda c, g, s: c.post("/app/installations/22/access_tokens"),
    ),
]


def validate(endpoint: str, status: str, response: httpx.Response) -> None:
    schema = SCHEMAS[endpoint]["responses"][status]
    if schema is None:
        assert response.content == b""
        return
    jsonschema.Draft4Validator(schema).validate(response.json())


@pytest.mark.parametrize(
    ("endpoint", "status", "probe"),
    PROBES,
    ids=[f"{status}-{endpoint}" for endpoint, status, _ in PROBES],
)
def test_responses_follow_the_openapi_schemas(
    gh: FakeGitHub, http: httpx.Client, endpoint: str, status: str, probe: Probe
) -> None:
    response = probe(http, gh, seeded(gh))
    assert str(response.status_code) == status, response.text
    validate(endpoint, status, response)


def test_every_extracted_schema_is_probed() -> None:
    probed = {(endpoint, status) for endpoint, status, _ in PROBES}
    extracted = {(e, s) for e, spec in SCHEMAS.items() for s in spec["responses"]}
    assert extracted == probed


def test_the_schemas_catch_a_missing_required_field(gh: FakeGitHub, http: httpx.Client) -> None:
    ids = seeded(gh)
    good = http.get(f"/repos/{REPO}/issues/{ids['issue']}").json()
    schema = SCHEMAS["GET /repos/{owner}/{repo}/issues/{issue_number}"]["responses"]["200"]
    for field in ("number", "html_url", "user"):
        bad = copy.deepcopy(good)
        del bad[field]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft4Validator(schema).validate(bad)
    bad = copy.deepcopy(good)
    bad["user"]["id"] = "not an int"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(bad)
