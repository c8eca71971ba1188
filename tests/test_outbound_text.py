"""Text leaving a job: one scanner finds secrets; GitHub writes are redacted and defused."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.errors import GitHubError
from bot.github import GitHub
from bot.outbound.scan import OWN_SECRET, REDACTED, Scanner, variants
from bot.outbound.text import (
    IMAGE_REMOVED,
    ZWSP,
    TextGuard,
    addressing,
    neutralize_mentions,
    remove_remote_images,
)
from tests.fakes.github import FakeGitHub

REPO = "octo/calc"
SECRET = "Zq9-docker-PASS-4417xy"
GHP = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"  # 36 characters after the prefix


# -- the scanner --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"x = '{SECRET}'",
        base64.b64encode(f"user:{SECRET}".encode()).decode(),
        base64.urlsafe_b64encode(f"ab{SECRET}".encode()).decode(),
        SECRET.encode().hex(),
        SECRET.encode().hex().upper(),
        SECRET[::-1],
        "https://x/?p=" + SECRET.replace("-", "%2D"),
        f'p = "{SECRET[:7]}" +\n    "{SECRET[7:15]}" \\\n "{SECRET[15:]}"',
        json.dumps({"p": SECRET}),
    ],
)
def test_the_jobs_own_secret_is_found_in_the_cheap_encodings(text: str) -> None:
    scanner = Scanner([SECRET])
    assert [f.kind for f in scanner.find(text)] == [OWN_SECRET]
    redacted = scanner.redact(text)
    assert SECRET not in redacted and SECRET[::-1] not in redacted
    assert REDACTED in redacted


def test_a_value_too_short_to_tell_apart_is_not_searched() -> None:
    assert Scanner(["true", "8080"]).find("true on port 8080") == []
    assert all(len(v) >= 8 for v in variants(SECRET))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (GHP, "GitHub Token"),
        ("ghs_" + "x" * 36, "GitHub Token"),
        ("github_pat_" + "11ABCDEFG0" * 6, "GitHub Token"),
        ("sk-ant-api03-" + "k" * 40, "Anthropic API Key"),
        ("sk-" + "a" * 20 + "T3BlbkFJ" + "b" * 20, "OpenAI Token"),
        ("AKIAIOSFODNN7EXAMPLE", "AWS Access Key"),
        ("xoxb-1234567890-abcdefghij", "Slack Token"),
        ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "Slack Token"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n-----END OPENSSH PRIVATE KEY-----",
            "Private Key",
        ),
        ("postgres://app:s3cr3t-pw@db:5432/x", "Basic Auth Credentials"),
    ],
)
def test_credential_shapes_are_found_and_named(text: str, kind: str) -> None:
    found = Scanner().find(f"before\n{text}\nafter")
    assert [(f.kind, f.line) for f in found] == [(kind, 2)]
    assert Scanner().redact(text).count(REDACTED) == 1


def test_a_url_keeps_its_host_and_a_key_block_goes_whole() -> None:
    assert Scanner().redact("https://bob:hunter22@example.com/x") == (
        f"https://bob:{REDACTED}@example.com/x"
    )
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\ntail"
    assert Scanner().redact(block) == f"{REDACTED}\ntail"


def test_an_allowlist_pragma_in_the_text_does_not_hide_a_secret() -> None:
    assert Scanner().find(f"token = '{GHP}'  # pragma: allowlist secret") != []


def test_ordinary_code_has_no_findings() -> None:
    code = (Path(__file__).parents[1] / "bot" / "outbound" / "limits.py").read_text()
    code += "sha = 'da39a3ee5e6b4b0d3255bfef95601890afd80709'\nuuid = '123e4567-e89b-12d3'\n"
    assert Scanner([SECRET]).find(code) == []


# -- mentions and images -------------------------------------------------------------------------


def test_mentions_are_defused_but_emails_and_the_actor_are_not() -> None:
    text = "cc @mallory and @octo/admins, thanks @Alice; mail bob@example.com; @@x"
    out = neutralize_mentions(text, ["alice"])
    assert f"@{ZWSP}mallory" in out and f"@{ZWSP}octo/admins" in out
    assert "@Alice" in out and "bob@example.com" in out
    assert "@mallory" not in out


@pytest.mark.parametrize(
    "text", ["_@mallory_", "see.@mallory", "a/@mallory", "+@mallory", "-@mallory"]
)
def test_a_mention_after_punctuation_is_defused(text: str) -> None:
    # The hostile-model trial's H4: github.com reads these as mentions.
    assert f"@{ZWSP}mallory" in neutralize_mentions(text)


def test_remote_images_go_and_relative_ones_stay() -> None:
    text = (
        "a ![px](https://t.example/p.gif?u=1) b ![local](docs/x.png)\n"
        '<img src="https://t.example/q.png"> ![ref][1]\n<picture><source srcset="//x/y"></picture>'
    )
    out = remove_remote_images(text)
    assert "t.example" not in out and "//x/y" not in out
    assert "![local](docs/x.png)" in out
    assert out.count(IMAGE_REMOVED) == 5


# -- the GitHub write path -----------------------------------------------------------------------

EVIL = (
    f"done. password {SECRET}, token {GHP}. @mallory please look "
    "![](https://tracker.example/p.gif) <img src=https://tracker.example/i.png>"
)

Write = Callable[[GitHub], object]
WRITES: dict[str, Write] = {
    "create_comment": lambda gh: gh.create_comment(REPO, 7, EVIL),
    "update_comment": lambda gh: gh.update_comment(REPO, 1, EVIL),
    "create_pull": lambda gh: gh.create_pull(REPO, title=EVIL, head="b", base="main", body=EVIL),
    "update_pull": lambda gh: gh.update_pull(REPO, 1, title=EVIL, body=EVIL),
    "update_check_run": lambda gh: gh.update_check_run(
        REPO, 1, status="completed", conclusion="failure", title=EVIL, summary=EVIL
    ),
    "dispatch_workflow": lambda gh: gh.dispatch_workflow(
        REPO, "agentbot.yml", ref="main", inputs={"params": json.dumps({"reply": EVIL})}
    ),
}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(clock=FakeClock()) as gh:
        gh.add_repo(REPO)
        gh.add_issue(REPO, number=7, title="t", labels=[])
        gh.add_pull(REPO, head="b", user="alice")
        yield gh


@pytest.mark.parametrize("name", sorted(WRITES))
def test_every_write_is_cleaned_before_it_is_sent(name: str, fake: FakeGitHub) -> None:
    client = fake.client()
    client.outbound = TextGuard(secrets=lambda: [SECRET])
    if name == "update_comment":
        client.create_comment(REPO, 7, "seed")
    if name == "update_check_run":
        client.create_check_run(REPO, name="agentbot", head_sha="a" * 40)
    fake.reset_calls()
    with contextlib.suppress(GitHubError):  # what matters is what the fake received
        WRITES[name](client)
    sent = [json.dumps(c.json, ensure_ascii=False) for c in fake.writes()]
    assert sent, "nothing was sent"
    for body in sent:
        assert SECRET not in body and GHP not in body
        if name != "dispatch_workflow":  # inputs are data for a workflow, not rendered text
            assert "tracker.example" not in body and "@mallory" not in body


def test_the_actor_may_be_mentioned(fake: FakeGitHub) -> None:
    with addressing("alice"):
        fake.client().create_comment(REPO, 7, "@alice agentbot needs more information; @bob too")
    [call] = fake.calls_to("POST", rf"/repos/{REPO}/issues/7/comments")
    assert call.json["body"].startswith("@alice agentbot")
    assert f"@{ZWSP}bob" in call.json["body"]


def test_a_write_that_skips_the_door_is_not_sent(fake: FakeGitHub) -> None:
    client = fake.client()
    kit = client._shared.kit
    with pytest.raises(GitHubError, match="skipped the outbound check"):
        client._call(
            "POST",
            lambda h: kit.rest.issues.create_comment("octo", "calc", 7, body=EVIL, headers=h),
        )
    assert fake.writes() == []


@pytest.mark.parametrize("at", ["&#64;", "&#x40;", "&commat;", "&#064;"])
def test_a_mention_spelled_with_an_entity_is_defused(at: str) -> None:
    assert neutralize_mentions(f"hey {at}mallory") == f"hey @{ZWSP}mallory"


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(base64.b64encode(SECRET.encode()).decode()[i : i + 8] for i in range(0, 32, 8)),
        f"{SECRET[:5]}\u200b{SECRET[5:]}",
        "".join(f"\\x{b:02x}" for b in SECRET.encode()),
        "".join(f"\\u{b:04x}" for b in SECRET.encode()),
        SECRET.encode("utf-16-le").decode("latin-1"),
        ".".join(SECRET),
    ],
)
def test_the_jobs_secret_is_found_when_split_or_escaped(text: str) -> None:
    assert [f.kind for f in Scanner([SECRET]).find(f"x = '{text}'")] == [OWN_SECRET]
