"""Options the job commands share, as typed aliases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

GitHubRepoOption = Annotated[
    str | None,
    typer.Option(
        "--github-repo",
        help="OWNER/REPO (default: from the origin remote, which must be on GitHub).",
    ),
]
CheckoutDryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Commit locally; push and post nothing.")
]
CheckoutOption = Annotated[
    Path,
    typer.Option("--repo", exists=True, file_okay=False, help="The checkout (its branch is used)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
