"""A stateful fake of GitHub's REST API on 127.0.0.1, for tests of the whole bot.

with FakeGitHub(clock=FakeClock()) as gh:
    gh.add_repo("octo/app", clone_url=f"file://{bare}")
    n = gh.add_issue("octo/app", title="Crash", labels=["agent-fix"]).number
    gh.set_permission("octo/app", "octocat", "write")
    client = gh.client()                # bot.github.GitHub pointed at the fake
    gh.fail_next("POST", r"/repos/octo/app/issues/\\d+/comments", 502, times=2)
    ...
    assert gh.calls_to("POST", r"/repos/octo/app/pulls")[0].json["base"] == "main"
"""

from tests.fakes.github.keys import AppKey, app_key
from tests.fakes.github.records import Call, Fault
from tests.fakes.github.server import DEFAULT_TOKEN, FakeGitHub, fake_github
from tests.fakes.github.state import (
    CheckRunState,
    CommentState,
    Dispatch,
    IssueState,
    Label,
    PullInfo,
    RepoState,
    User,
)
from tests.fakes.github.store import AppState, InstallationState, IssuedToken

__all__ = [
    "DEFAULT_TOKEN",
    "AppKey",
    "AppState",
    "Call",
    "CheckRunState",
    "CommentState",
    "Dispatch",
    "FakeGitHub",
    "Fault",
    "InstallationState",
    "IssueState",
    "IssuedToken",
    "Label",
    "PullInfo",
    "RepoState",
    "User",
    "app_key",
    "fake_github",
]
