"""Setup with a warm package cache: the second job on a repository vs the first (App mode).

Run by hand (needs PyPI): `python -m bench.setup_cache [--jobs 3]`.

A Python repository with a handful of real dependencies (PyPI, through uv) is cloned
into one workspace per job under the data dir, as the App does
(`workspaces/<owner>__<repo>-<job>`), each job in its own bubblewrap sandbox with a
throwaway HOME (network for setup only). Each job's workspace gets a venv of its own;
the package downloads are kept per repository under the data dir
(`packages/<repo>-<hash>/uv`), and the first job's fresh venv is kept
(`envs/<repo>-<hash>/<fingerprint>`), so the second job copies it to its own workspace
(bot.validation.env_reuse). Prints each job's setup time and the first/second ratio
(target >= 3x).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.clock import SystemClock
from bot.config import ValidationConfig
from bot.sandbox import SandboxPolicy, sandbox_status
from bot.validation import prepare

PYPROJECT = """\
[project]
name = "shop"
version = "1.0"
dependencies = ["requests", "rich", "pydantic", "attrs", "click", "jinja2"]

[project.optional-dependencies]
test = ["pytest", "hypothesis", "freezegun"]

[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""
# An application: no build of its own, its dependencies in requirement files.
APP = {
    "requirements.txt": "requests\nrich\npydantic\nattrs\nclick\njinja2\nnumpy\n",
    "requirements-dev.txt": "pytest\nhypothesis\nfreezegun\n",
}
GIT = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b", "PATH": os.environ["PATH"]}  # fmt: skip


def _origin(root: Path, kind: str) -> Path:
    """A bare repository standing in for github.com/octo/<kind>."""
    src = root / f"src-{kind}"
    (src / "src" / "shop").mkdir(parents=True)
    if kind == "library":
        (src / "pyproject.toml").write_text(PYPROJECT)
    else:
        for name, text in APP.items():
            (src / name).write_text(text)
        (src / "conftest.py").write_text("import sys\nsys.path.insert(0, 'src')\n")
    (src / "src" / "shop" / "__init__.py").write_text("def total(xs):\n    return sum(xs)\n")
    (src / "tests").mkdir()
    (src / "tests" / "test_shop.py").write_text(
        "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
    )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "shop"]):
        subprocess.run(["git", *args], cwd=src, check=True, env=GIT)
    bare = root / f"{kind}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return bare


def _job(data: Path, bare: Path, policy: SandboxPolicy, n: int) -> float:
    """One job: a fresh workspace of the repository, its setup in a sandbox; seconds."""
    ws = data / "workspaces" / f"octo__{bare.stem}-job{n}"
    subprocess.run(["git", "clone", "-q", str(bare), str(ws)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(ws),
            "remote",
            "set-url",
            "origin",
            f"https://github.com/octo/{bare.stem}.git",
        ],
        check=True,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    start = time.perf_counter()
    with policy.open("setup") as sandbox:
        ready = prepare(ws, ValidationConfig(), data_dir=data, env=env, clock=SystemClock(),
                        sandbox=sandbox)  # fmt: skip
    took = time.perf_counter() - start
    reused = ready.setup.status == "skipped" and "(cached)" in ready.setup.warning
    if ready.setup.status != "passed" and not reused:
        sys.exit(f"job {n}: setup {ready.setup.status}: {ready.setup.warning}")
    return took


def main() -> None:
    """Print each job's setup time and the first/second ratio, for a library and an app."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    args = parser.parse_args()
    status = sandbox_status()
    print(status.line())
    for kind in ("library", "application"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            data = root / "data"
            bare = _origin(root, kind)
            policy = SandboxPolicy(root=data / "sandbox", hidden=(data,), app=True)
            times = [_job(data, bare, policy, n) for n in range(1, args.jobs + 1)]
            cache = next((data / "packages").iterdir()) / "uv"
            size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) / 1e6
        jobs = ", ".join(f"job {n}: {t:.2f} s" for n, t in enumerate(times, 1))
        print(f"{kind}: setup {jobs}")
        print(
            f"{kind}: first/second {times[0] / times[1]:.1f}x faster with the last job's"
            f" environment kept ({size:.0f} MB in its uv cache; target >= 3x)"
        )


if __name__ == "__main__":
    main()
