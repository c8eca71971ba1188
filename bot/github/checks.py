"""Actions workflow dispatches and check runs."""

from __future__ import annotations

from typing import Any, Unpack

from bot.github.core import RestCore
from bot.models.github import CheckRunStart, CheckRunUpdate


class ChecksAPI(RestCore):
    """Workflow dispatch and check run calls."""

    # --- actions and checks ----------------------------------------------------------------

    def dispatch_workflow(
        self, repo: str, workflow: str, *, ref: str, inputs: dict[str, str]
    ) -> None:
        """Start a `workflow_dispatch` run of `workflow` (file name or id) on `ref`."""
        endpoint = self._shared.kit.rest.actions.create_workflow_dispatch
        self._on_repo("POST", repo, endpoint, workflow, ref=ref, inputs=dict(inputs))

    def create_check_run(self, repo: str, **run: Unpack[CheckRunStart]) -> int:
        """Create a check run on a commit; returns its id."""
        data = {"status": "in_progress", **run}
        if not data.get("details_url"):
            data.pop("details_url", None)
        resp = self._on_repo("POST", repo, self._shared.kit.rest.checks.create, data=data)
        return int(resp.json()["id"])

    def update_check_run(
        self, repo: str, check_run_id: int, **update: Unpack[CheckRunUpdate]
    ) -> None:
        """Move a check run on (and conclude it when `status` is completed)."""
        body: dict[str, Any] = {"status": update["status"]}
        if update.get("conclusion") is not None:
            body["conclusion"] = update["conclusion"]
        title, summary = update.get("title", ""), update.get("summary", "")
        if title or summary:
            body["output"] = {"title": title or summary[:60], "summary": summary or title}
        self._on_repo("PATCH", repo, self._shared.kit.rest.checks.update, check_run_id, data=body)
