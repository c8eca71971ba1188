"""The pull-request step: open ours or update the one a re-run finds, flag it, ask for review."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.errors import GitHubError
from bot.models.github import PullRequest
from bot.ports import GitHubPort, GitHubReads, JobEnv
from bot.workflows.steps.flow import Refused

log = logging.getLogger("agentbot.job")


def same_repo_pull(github: GitHubReads, repo: str, number: int, command: str) -> PullRequest:
    """Pull request `number` if its branch is in `repo`; Refused for a fork's or a deleted one's."""
    pr = github.get_pull(repo, number)
    if pr.head_repo != repo:
        raise Refused(
            f"`{command}` runs only on branches of {repo}; this pull request"
            f" comes from {pr.head_repo or 'a deleted fork'}. On a fork's pull request, ask"
            " for `/fix <instructions>` or `/cover` (docs/forks.md)."
        )
    return pr


def open_pull(github: GitHubPort, repo: str, branch: str) -> int | None:
    """The number of the open pull request from `branch` of `repo`, if there is one."""
    owner = repo.split("/")[0]
    existing = github.list_pulls(repo, head=f"{owner}:{branch}", state="open")
    return existing[0].number if existing else None


def publish_pull(
    env: JobEnv,
    repo: str,
    *,
    head: str,
    title: str,
    body: str,
    number: int | None = None,
    draft: bool = False,
    retitle: bool = True,
    concerns: Sequence[str] = (),
    new_head: bool = False,
) -> tuple[PullRequest, bool]:
    """Update pull request `number` (or the open one from `head`), else open one; True if new.

    An agent's security concerns make a new pull request a draft, and label it (new or not)
    with `labels.security_review`; the body names them. `retitle` False keeps a person's
    title on a pull request the job only works on. A `new_head` (not on origin before this
    job pushed it) has no open pull request, so none is looked for.
    """
    github = env.github
    if env.instructions_used:
        used = ", ".join(f"`{p}`" for p in env.instructions_used)
        body = f"{body.rstrip()}\n\nRepository instructions used (default branch): {used}\n"
    if number is None and not new_head:
        number = open_pull(github, repo, head)
    if number is None:
        base = github.default_branch(repo)
        pr = github.create_pull(
            repo, title=title, head=head, base=base, body=body, draft=draft or bool(concerns)
        )
    else:
        pr = github.update_pull(repo, number, title=title if retitle else None, body=body)
    if concerns:
        github.add_labels(repo, pr.number, [env.config.labels.security_review])
    return pr, number is None


def request_review(env: JobEnv, repo: str, pr: PullRequest, actor: str, *, needed: bool) -> None:
    """Ask `actor` to review `pr` (reviewers: initiator, or an agent `needed` one).

    GitHub refuses a request to the PR's own author, and bots review nothing; a refusal
    (not a collaborator) is only logged.
    """
    if env.config.pull_request.reviewers != "initiator" and not needed:
        return
    if not actor or actor.endswith("[bot]") or actor.casefold() == pr.user.casefold():
        return
    try:
        env.github.request_reviewers(repo, pr.number, [actor])
    except GitHubError as exc:
        log.warning("could not request a review from @%s: %s", actor, exc)
