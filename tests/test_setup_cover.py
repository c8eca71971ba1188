"""/cover on a repository that declares neither pytest nor coverage: setup and agentbot bring them.

`validation.test: "python -m pytest -q"` (the documented form) with nothing declared:
setup installs pytest (the command calls it), the venv is uv's (no pip in it), and
coverage.py goes in with uv: the report shows real changed-line coverage, not n/a.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.models import JobStatus
from bot.workflows.cover.story import cover
from tests.cover_script import team
from tests.e2e import world
from tests.test_cover_python import BASE, FIRST, job, seed
from tests.test_validation import _closure, _repack, offline_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CONFIG = """\
validation:
  format: null
  lint: null
  typecheck: null
  test: python -m pytest -q
  fix_rounds: 1
"""


def test_cover_measures_real_coverage_without_coverage_or_pytest_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for dist in _closure(("pytest", "coverage", "setuptools")):
        _repack(dist, wheels)
    for name, value in offline_env(wheels).items():
        if name.startswith(("UV_", "PIP_")):
            monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith(("UV_", "PIP_"))]:
        if name not in offline_env(wheels):
            monkeypatch.delenv(name)
    _, script = team(FIRST)
    with world(tmp_path / "w", script, files=BASE) as w:
        number = seed(w)
        result = cover(job(number), w.env(RepoConfig.from_text(CONFIG)))
        assert result.status == JobStatus.SUCCESS, result.error
        items = {i["id"].split("::")[1]: i for i in result.items}
        assert (items["clamp"]["before"], items["clamp"]["after"]) == ("67%", "100%")
        assert (items["double"]["before"], items["double"]["after"]) == ("50%", "100%")
        venvs = list((w.tmp / "data" / "packages").glob("*/venvs/*"))
        assert venvs and not (venvs[0] / "bin" / "pip").exists()  # uv's venv: no pip in it
