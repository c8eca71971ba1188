"""/cover's stops: red-zone new code, a deleted fork, a failing stage, nothing to test."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.models import Job, JobKind, JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import Method, team
from tests.e2e import BUGGY_FILES, REPO, fast_validation_yaml, world
from tests.fakes.gitrepo import branch_sha, clone_branch, commits, push_files, server_url
from tests.test_cli_run import AGENTBOT, actions_env
from tests.test_cover_python import config
from tests.test_events import comment

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # many real test runs

BRANCH = "feature/x"
BASE = {**BUGGY_FILES, "calc.py": BUGGY_FILES["calc.py"].replace("a - b", "a + b")}
BIG = (
    "\n\ndef big(x: int) -> int:\n"
    + "".join(f"    if x == {i}:\n        return {i * 3}\n" for i in range(100))
    + "    return -1\n"
)


def _job(number: int, **params: object) -> Job:
    return Job(kind=JobKind.COVER, repo=REPO, number=number, actor="alice", params=dict(params))


def test_new_red_zone_code_stops_unless_forced(tmp_path: Path) -> None:
    t, script = team({"big": Method("tests/test_calc.py", "", testable=False)})
    with world(tmp_path, script, files=BASE) as w:
        push_files(w.remote, BRANCH, {"calc.py": BASE["calc.py"] + BIG}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        stopped = cover(_job(number), w.env(config()))
        assert stopped.status == JobStatus.NEUTRAL
        assert stopped.error == "red_zone_new_code: calc.py::big"
        comment = w.gh.comments_on(REPO, number)[-1].body
        assert "`red_zone_new_code`" in comment and "`big` in `calc.py`: 202 lines" in comment
        assert "/cover --force" in comment
        assert w.llm.requests == []

        forced = cover(_job(number, force=True), w.env(config()))
        assert forced.status == JobStatus.NEUTRAL, forced.error  # analysed, nothing to test
        assert t.calls("big") == 1
        assert forced.items[0]["zone"] == "red"
        assert forced.items[0]["stages"]["analyzer"] == "skipped: nothing testable: it only logs"


def test_a_deleted_forks_pull_request_is_refused_with_a_comment(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE) as w:
        pr = w.gh.add_pull(REPO, head=BRANCH, head_repo="", user="mallory")
        result = cover(_job(pr.number), w.env(config()))
        assert result.status == JobStatus.NEUTRAL
        comments = w.gh.comments_on(REPO, pr.number)
        assert len(comments) == 1 and "fork" in comments[0].body and "/cover" in comments[0].body
        assert w.llm.requests == []


THREE = '''

def log_it(x: int) -> None:
    """Only logs."""
    print(x)


def triple(x: int) -> int:
    return x * 3


def ninefold(x: int) -> int:
    return triple(triple(x))
'''


def test_a_failing_stage_stops_the_pipeline_and_a_skip_lets_the_next_run(tmp_path: Path) -> None:
    broken = (
        "\n\ndef test_triple() -> None:\n    from calc import triple\n\n    assert triple(2) == 7\n"
    )
    t, script = team(
        {
            "log_it": Method("tests/test_calc.py", "", testable=False),
            "triple": Method("tests/test_calc.py", broken),
            "ninefold": Method("tests/test_calc.py", ""),
        }
    )
    with world(tmp_path, script, files=BASE) as w:
        head = push_files(w.remote, BRANCH, {"calc.py": BASE["calc.py"] + THREE}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        result = cover(_job(number), w.env(config()))
        assert result.status == JobStatus.FAILED
        assert result.error.startswith("reviewer failed for calc.py::triple: 1 test(s) fail")
        stages = {i["id"].split("::")[1]: i["stages"] for i in result.items}
        assert stages["log_it"]["analyzer"] == "skipped: nothing testable: it only logs"
        assert stages["log_it"]["reviewer"].startswith("skipped: test_writer skipped")
        assert stages["triple"]["test_writer"] == "done"
        assert stages["triple"]["reviewer"].startswith("failed: 1 test(s) fail on the PR head")
        assert stages["ninefold"] == {}  # its wave never started
        assert t.calls("ninefold") == 0 and t.calls("triple") == 4 and t.calls("log_it") == 1
        comment = w.gh.comments_on(REPO, number)[-1].body
        assert "**Stopped: the reviewer stage failed** for `calc.py::triple`" in comment
        assert "analyzer skipped: nothing testable: it only logs" in comment
        assert (
            branch_sha(w.remote, BRANCH) == head
            and len(commits(w.remote, BRANCH, base="main")) == 1
        )


def _comment_payload(number: int, body: str) -> dict[str, Any]:
    """A real `issue_comment.created` delivery on our pull request `number`."""
    payload = comment(body, on_pr=True)
    owner, name = REPO.split("/")
    payload["repository"].update(full_name=REPO, name=name, default_branch="main")
    payload["repository"]["owner"]["login"] = owner
    payload["issue"].update(number=number, state="open", locked=False)
    payload["sender"].update(login="alice", type="User")
    payload["comment"]["user"].update(login="alice", type="User")
    return payload


def test_agentbot_run_routes_a_cover_comment_in_the_actions_checkout(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE, repo_yaml=fast_validation_yaml()) as w:
        push_files(w.remote, BRANCH, {"calc.py": BASE["calc.py"] + BIG}, start="main")
        w.gh.set_permission(REPO, "alice", "write")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")  # Actions checks out main
        payload = _comment_payload(number, "/cover calc.py")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issue_comment", payload)
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 78, proc.stdout + proc.stderr
        assert "agentbot cover: neutral" in proc.stdout
        assert "red_zone_new_code" in w.gh.comments_on(REPO, number)[-1].body
        assert w.llm.requests == []


def test_agentbot_cover_needs_a_clean_pushed_branch(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE) as w:
        checkout = clone_branch(w.remote, "main", tmp_path / "checkout")
        (checkout / "calc.py").write_text("x = 1\n")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issue_comment", {})
        env["GITHUB_SERVER_URL"] = server_url(tmp_path / "server")  # where origin is
        proc = subprocess.run(
            [AGENTBOT, "cover", "--repo", str(checkout)], env=env, capture_output=True, text=True
        )
        assert proc.returncode == 2
        assert "uncommitted changes" in proc.stderr


def test_a_dry_run_posts_nothing_and_prints_the_comment(tmp_path: Path) -> None:
    with world(tmp_path, [], files=BASE) as w:
        push_files(w.remote, BRANCH, {"calc.py": BASE["calc.py"] + BIG}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        result = cover(_job(number), w.env(config(), dry_run=True))
        assert result.status == JobStatus.NEUTRAL
        assert w.gh.writes() == []
        assert any("red_zone_new_code" in line for line in w.echoed)


def test_a_writer_that_says_its_work_is_not_done_fails_its_stage(tmp_path: Path) -> None:
    tests = (
        "\n\ndef test_triple() -> None:\n    from calc import triple\n\n    assert triple(2) == 6\n"
    )
    _, script = team({"triple": Method("tests/test_calc.py", tests, writer_done=False)})
    with world(tmp_path, script, files=BASE) as w:
        source = BASE["calc.py"] + "\n\ndef triple(x: int) -> int:\n    return x * 3\n"
        push_files(w.remote, BRANCH, {"calc.py": source}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        result = cover(_job(number), w.env(config()))
        assert result.status == JobStatus.FAILED
        assert result.error.startswith("test_writer failed for calc.py::triple: the agent reported")
        assert "reviewer" not in result.items[0]["stages"]


def test_a_test_runner_that_is_not_installed_stops_cover_with_the_reason(tmp_path: Path) -> None:
    """No test can run (the runner is missing and cannot be installed offline): /cover stops
    before any agent works, saying why, instead of accepting unverified tests (issue #25)."""
    t, script = team({"triple": Method("tests/test_calc.py", "")})
    cfg = config()
    missing = cfg.model_copy(
        update={"validation": cfg.validation.model_copy(update={"test": "no-such-test-runner -q"})}
    )
    with world(tmp_path, script, files=BASE) as w:
        head = push_files(w.remote, BRANCH, {"calc.py": BASE["calc.py"] + THREE}, start="main")
        number = w.gh.add_pull(REPO, head=BRANCH, user="alice").number
        result = cover(_job(number), w.env(missing))
        assert result.status == JobStatus.UNVERIFIED, (result.error, result.summary)
        assert "no-such-test-runner" in (result.error or ""), result.error
        assert "no-such-test-runner" in w.gh.comments_on(REPO, number)[-1].body
        assert w.llm.requests == [] and t.calls("triple") == 0
        assert branch_sha(w.remote, BRANCH) == head
