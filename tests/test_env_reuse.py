"""The next job on a repository starts from the environment the last one set up (#24, #31).

Real git (a bare origin, one clone per job as the App makes them), real uv installs from a
local wheelhouse, the demo project installed editable by its own build backend.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.config import ValidationConfig
from bot.validation import prepare
from bot.validation.env_reuse import KEEP
from tests import test_validation as tv
from tests.test_validation import (
    BACKEND,
    CODE,
    PYPROJECT,
    TESTS,
    git,
    write,
)

# The offline wheelhouse and its environment (test_validation's session fixtures).
wheelhouse, base_env = tv.wheelhouse, tv.base_env


def _origin(root: Path) -> Path:
    src = root / "src-demo"
    src.mkdir(parents=True)
    git(src, "init", "-q", "-b", "main")
    files = {"pyproject.toml": PYPROJECT, "_build/backend.py": BACKEND,
             "src/demo/__init__.py": CODE, "tests/test_demo.py": TESTS}  # fmt: skip
    write(src, files)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "demo")
    bare = root / "demo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return bare


def _job(data: Path, bare: Path, n: int, env: dict[str, str]) -> tuple[Path, Path, str, str]:
    """A job's workspace, set up: (workspace, venv, setup status, setup warning)."""
    ws = data / "workspaces" / f"octo__demo-{n}"
    subprocess.run(["git", "clone", "-q", str(bare), str(ws)], check=True)
    ready = prepare(ws, ValidationConfig(), data_dir=data, env=env)
    assert ready.senv.venv is not None
    return ws, ready.senv.venv, ready.setup.status, ready.setup.warning


def _run(venv: Path, code: str) -> str:
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def test_the_second_job_gets_a_copy_moved_to_its_own_workspace(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    data = tmp_path / "data"
    bare = _origin(tmp_path)
    ws1, venv1, status1, _ = _job(data, bare, 1, base_env)
    assert status1 == "passed"
    ws2, venv2, status2, warning2 = _job(data, bare, 2, base_env)
    assert status2 == "skipped"
    assert "an earlier job set up for these dependency files, copied" in warning2
    assert "not pinned by the repo, latest used: ruff, mypy" in warning2  # the first job's notes
    assert venv2 != venv1
    # The first job's workspace and venv are gone (the App removes them): the copy stands alone.
    subprocess.run(["rm", "-rf", str(ws1), str(venv1)], check=True)
    # The editable install points at this job's checkout, and scripts run this job's venv.
    assert _run(venv2, "import demo; print(demo.__file__)") == str(ws2 / "src/demo/__init__.py")
    script = (venv2 / "bin" / "pytest").read_text()
    assert f"{venv2}/bin/python" in script and str(venv1) not in script
    tests = subprocess.run(
        [str(venv2 / "bin" / "pytest"), "-q", "-p", "no:cacheprovider"],
        cwd=ws2, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert tests.returncode == 0 and " passed" in tests.stdout, tests.stdout + tests.stderr
    # The copy is no hardlink into the writable uv cache or into another job's venv.
    init = next(venv2.glob("lib/python*/site-packages/pytest/__init__.py"))
    assert init.stat().st_nlink == 1


def test_what_a_job_does_to_its_venv_does_not_reach_the_next_job(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    data = tmp_path / "data"
    bare = _origin(tmp_path)
    _job(data, bare, 1, base_env)
    _, venv2, _, _ = _job(data, bare, 2, base_env)
    # A test run that plants code in its venv (a .pth runs at every interpreter start).
    site = next(venv2.glob("lib/python*/site-packages"))
    (site / "zz_planted.pth").write_text("import os; os.environ['PLANTED'] = '1'\n")
    (site / "pytest" / "__init__.py").write_text("raise SystemExit('forged')\n")
    _, venv3, status3, _ = _job(data, bare, 3, base_env)
    assert status3 == "skipped"
    assert _run(venv3, "import os; print(os.environ.get('PLANTED', '-'))") == "-"
    assert _run(venv3, "import pytest; print(pytest.__name__)") == "pytest"


def test_a_checkout_the_default_branch_does_not_hold_leaves_nothing_to_reuse(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    data = tmp_path / "data"
    bare = _origin(tmp_path)
    # A job on a branch with a commit of its own (a pull request's head): its setup ran that
    # commit's build code, so what it made is nobody else's to start from.
    ws = data / "workspaces" / "octo__demo-1"
    subprocess.run(["git", "clone", "-q", str(bare), str(ws)], check=True)
    git(ws, "checkout", "-q", "-b", "feature")
    write(ws, {"src/demo/extra.py": "X = 1\n"})
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q", "-m", "feature")
    assert prepare(ws, ValidationConfig(), data_dir=data, env=base_env).setup.status == "passed"
    assert not (data / "envs").exists()
    # An untracked file in an otherwise clean checkout of main: not kept either.
    ws2 = data / "workspaces" / "octo__demo-2"
    subprocess.run(["git", "clone", "-q", str(bare), str(ws2)], check=True)
    (ws2 / "sitecustomize.py").write_text("print('planted')\n")
    assert prepare(ws2, ValidationConfig(), data_dir=data, env=base_env).setup.status == "passed"
    assert not (data / "envs").exists()
    # The next job on main sets up from scratch, and only then leaves a copy.
    _, _, status, _ = _job(data, bare, 3, base_env)
    assert status == "passed"
    assert len(list((data / "envs").iterdir())) == 1


def test_a_new_dependency_file_sets_up_again_and_few_copies_are_kept(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    data = tmp_path / "data"
    bare = _origin(tmp_path)
    statuses = []
    for n in range(1, KEEP + 3):
        work = tmp_path / f"push{n}"
        subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
        write(work, {"pyproject.toml": PYPROJECT + f"# revision {n}\n"})
        git(work, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qam", f"r{n}")
        git(work, "push", "-q", "origin", "HEAD:main")
        statuses.append(_job(data, bare, n, base_env)[2])
    assert statuses == ["passed"] * (KEEP + 2)  # each pyproject is new: nothing to reuse
    kept = list((data / "envs").iterdir())
    assert len(kept) == 1  # one repository
    assert len(list(kept[0].iterdir())) == KEEP
