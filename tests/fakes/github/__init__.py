r"""A stateful fake of GitHub's REST API on 127.0.0.1, for tests of the whole bot.

    clock = FakeClock()
    with FakeGitHub(clock=clock) as gh:                   # or: yield from fake_github(clock=...)
        gh.add_repo("octo/app", clone_url=f"file://{bare}")  # branches/files then come from git
        n = gh.add_issue("octo/app", title="Crash", labels=["agent-fix"], user="alice").number
        gh.add_comment("octo/app", n, "/implement", user="alice")
        gh.set_permission("octo/app", "alice", "write")
        gh.set_file("octo/app", ".github/agentbot.yml", "...")  # contents API, default branch
        client = gh.client()          # bot.github.GitHub on gh.url, token auth, the fake's clock
        gh.fail_next("POST", r"/repos/octo/app/issues/\d+/comments", 502, times=2)
        ...
        assert gh.calls_to("POST", r"/repos/octo/app/pulls")[0].json["base"] == "main"
        assert [c.body for c in gh.comments_on("octo/app", n)] == [...]

Pass the same FakeClock to the fake and the client: writes are paced >= 1 s apart on the
client's clock, so a client on the real clock really sleeps. App auth: `key =
gh.install_app("octo")` then `gh.app_client(4242, key).for_installation(777)`.
A module-scoped server can be reused with `gh.reset(clock=FakeClock())` per test.
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
