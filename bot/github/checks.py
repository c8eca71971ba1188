"""Actions workflow dispatches and check runs."""

from __future__ import annotations

from typing import Any

from bot.github.core import RestCore


class ChecksAPI(RestCore):
    """Workflow dispatch and check run calls."""

    # --- actions and checks ----------------------------------------------------------------

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Start a `workflow_dispatch` run of `workflow` (file name or id) on `ref`."""
        endpoint = self._shared.kit.rest.actions.create_workflow_dispatch
        self._on_repo("POST", repo, endpoint, workflow, ref=ref, inputs=dict(inputs))

    def create_check_run(
        self,
        repo: str,
        *,
        name: str,
        head_sha: str,
        status: str = "in_progress",
        details_url: str = "",
    ) -> int:
        """Create a check run on a commit; returns its id."""
        data = {"name": name, "head_sha": head_sha, "status": status}
        if details_url:
            data["details_url"] = details_url
        resp = self._on_repo("POST", repo, self._shared.kit.rest.checks.create, data=data)
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
        body: dict[str, Any] = {"status": status}
        if conclusion is not None:
            body["conclusion"] = conclusion
        if title or summary:
            body["output"] = {"title": title or summary[:60], "summary": summary or title}
        self._on_repo("PATCH", repo, self._shared.kit.rest.checks.update, check_run_id, data=body)
