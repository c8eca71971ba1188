"""Actions workflow dispatches and check runs."""

from __future__ import annotations

from typing import Any, cast

from bot.github.core import RestCore, split_repo


class ChecksAPI(RestCore):
    """Workflow dispatch and check run calls."""

    # --- actions and checks ----------------------------------------------------------------

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Start a `workflow_dispatch` run of `workflow` (file name or id) on `ref`."""
        owner, name = split_repo(repo)
        self._call(
            "POST",
            lambda h: self._shared.kit.rest.actions.create_workflow_dispatch(
                owner, name, workflow, ref=ref, inputs=dict(inputs), headers=h
            ),
        )

    def create_check_run(
        self, repo: str, *, name: str, head_sha: str, status: str = "in_progress"
    ) -> int:
        """Create a check run on a commit; returns its id."""
        owner, repo_name = split_repo(repo)
        resp = self._call(
            "POST",
            lambda h: self._shared.kit.rest.checks.create(
                owner,
                repo_name,
                data=cast(Any, {"name": name, "head_sha": head_sha, "status": status}),
                headers=h,
            ),
        )
        return int(resp.json()["id"])

    def update_check_run(
        self,
        repo: str,
        check_run_id: int,
        *,
        status: str,
        conclusion: str | None = None,
        title: str = "",
        summary: str = "",
    ) -> None:
        """Move a check run on (and conclude it when `status` is completed)."""
        owner, name = split_repo(repo)
        body: dict[str, Any] = {"status": status}
        if conclusion is not None:
            body["conclusion"] = conclusion
        if title or summary:
            body["output"] = {"title": title or summary[:60], "summary": summary or title}
        self._call(
            "PATCH",
            lambda h: self._shared.kit.rest.checks.update(
                owner, name, check_run_id, data=cast(Any, body), headers=h
            ),
        )
