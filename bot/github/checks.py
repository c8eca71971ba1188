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
        data: dict[str, Any] = {"name": run["name"], "head_sha": run["head_sha"]}
        data.update(_state(run.get("status", "in_progress"), run))
        if run.get("details_url"):
            data["details_url"] = run.get("details_url")
        resp = self._on_repo("POST", repo, self._shared.kit.rest.checks.create, data=data)
        return int(resp.json()["id"])

    def update_check_run(
        self, repo: str, check_run_id: int, **update: Unpack[CheckRunUpdate]
    ) -> None:
        """Move a check run on (and conclude it when `status` is completed)."""
        body = _state(update["status"], update)
        self._on_repo("PATCH", repo, self._shared.kit.rest.checks.update, check_run_id, data=body)


def _state(status: str, fields: CheckRunStart | CheckRunUpdate) -> dict[str, Any]:
    """A check run's status, conclusion and output as the API takes them."""
    body: dict[str, Any] = {"status": status}
    if fields.get("conclusion") is not None:
        body["conclusion"] = fields.get("conclusion")
    title, summary = fields.get("title", ""), fields.get("summary", "")
    if title or summary:
        body["output"] = {"title": title or summary[:60], "summary": summary or title}
    return body
