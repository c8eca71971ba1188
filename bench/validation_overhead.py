"""Validation overhead: the gate vs the repository's own commands by hand; setup, uv vs pip.

Run by hand: `python -m bench.validation_overhead [--runs 5] [--modules 12] [--setup-runs 3]`.

1. Overhead (offline). A Python project in a temporary directory; the pipeline's own
   zero-config setup prepares its venv (from wheels repacked from this venv, as the tests
   do). Then, alternately, the whole pipeline (setup cached) and the very commands it
   chose for the four stages, run with `subprocess.run` in the same environment. Prints
   the medians and the ratio; the target is <= 1.1x.
2. Setup (PyPI). A real release (scripts/realrepos.py, cached by version) set up from
   nothing, with uv and with pip: a fresh venv each run, download caches warm after a
   first run of each. Prints both medians.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import ValidationConfig
from bot.validation import prepare, run_validation
from scripts.realrepos import PROJECTS
from scripts.realrepos import prepare as prepare_repo
from tests.test_validation import (
    BACKEND,
    PYPROJECT,
    build_wheelhouse,
    commit,
    git,
    offline_env,
    write,
)

MODULE = '''\
"""Module {i}."""


def scale_{i}(values: list[int], factor: int) -> list[int]:
    """Multiply every value."""
    return [v * factor for v in values]


def total_{i}(values: list[int]) -> int:
    """Add them up."""
    return sum(values)
'''
TEST = """\
import pytest

from demo.mod{i} import scale_{i}, total_{i}


@pytest.mark.parametrize("n", range(5))
def test_scale(n):
    assert scale_{i}([n], 2) == [2 * n]


def test_total():
    assert total_{i}([1, 2, 3]) == 6
"""


def make_project(root: Path, modules: int) -> Path:
    """A src-layout package with `modules` modules and 6 tests each, committed."""
    repo = root / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    files = {
        "pyproject.toml": PYPROJECT,
        "_build/backend.py": BACKEND,
        "src/demo/__init__.py": '"""Demo package."""\n',
    }
    for i in range(modules):
        files[f"src/demo/mod{i}.py"] = MODULE.format(i=i)
        files[f"tests/test_mod{i}.py"] = TEST.format(i=i)
    write(repo, files)
    commit(repo, "project")
    return repo


def overhead(runs: int, modules: int) -> None:
    """The pipeline against the commands it runs, by hand, alternately."""
    config = ValidationConfig()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = offline_env(build_wheelhouse(root / "wheels"))
        repo = make_project(root, modules)
        data = root / "data"
        t0 = time.perf_counter()
        first = run_validation(repo, config, data_dir=data, env=env)
        print(f"first run (venv + setup): {time.perf_counter() - t0:.1f}s, passed={first.passed}")
        assert first.passed, first.problems()
        stage_env = prepare(repo, config, data_dir=data, env=env).senv.env
        commands = [g.command for g in first.gates[1:] if g.command and g.command_result]

        def by_hand() -> float:
            start = time.perf_counter()
            for command in commands:
                subprocess.run(
                    shlex.split(command), cwd=repo, env=stage_env, capture_output=True, check=True
                )
            return time.perf_counter() - start

        own: list[float] = []

        def pipeline() -> float:
            start = time.perf_counter()
            report = run_validation(repo, config, data_dir=data, env=env)
            took = time.perf_counter() - start
            assert report.passed and report.tests and report.tests.test_count == 6 * modules
            # The gate's own time: the run minus its commands' (less sensitive to load).
            stages = sum(
                g.command_result.duration_seconds for g in report.gates if g.command_result
            )
            own.append(took - stages)
            return took

        by_hand(), pipeline()  # warm caches (mypy, pyc) for both
        hand, pipe = [], []
        for _ in range(runs):
            hand.append(by_hand())
            pipe.append(pipeline())
        h, p = statistics.median(hand), statistics.median(pipe)
        print(f"commands: {' | '.join(commands)}")
        print(f"by hand : median {h:.3f}s  runs {[round(x, 3) for x in hand]}")
        print(f"pipeline: median {p:.3f}s  runs {[round(x, 3) for x in pipe]}")
        pairs = statistics.median(b / a for a, b in zip(hand, pipe, strict=True))
        print(f"overhead: {p / h:.3f}x ({(p - h) * 1000:+.0f} ms per run); target <= 1.1x")
        print(f"median of the per-pair ratios (runs alternate, so load hits both): {pairs:.3f}x")
        gate_ms = statistics.median(own) * 1000
        print(f"the gate's own time (run minus its commands): median {gate_ms:.0f} ms")


def setup_speed(runs: int, name: str) -> None:
    """Setup of a real release from nothing, uv against pip (fresh venv, warm caches)."""
    config = ValidationConfig()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo, _ = prepare_repo(PROJECTS[name], root)
        times: dict[str, list[float]] = {"uv": [], "pip": []}
        for i in range(runs + 1):  # the first of each warms the download caches
            for installer in ("uv", "pip"):
                env = {**os.environ, "AGENTBOT_INSTALLER": installer}
                start = time.perf_counter()
                done = prepare(repo, config, data_dir=root / f"data-{installer}-{i}", env=env)
                took = time.perf_counter() - start
                assert done.setup.status == "passed", done.setup
                if i:
                    times[installer].append(took)
        uv, pip = statistics.median(times["uv"]), statistics.median(times["pip"])
        print(
            f"setup of {name} {PROJECTS[name].version} (fresh venv, warm caches), median of {runs}:"
        )
        print(f"uv : {uv:.2f}s  runs {[round(x, 2) for x in times['uv']]}")
        print(f"pip: {pip:.2f}s  runs {[round(x, 2) for x in times['pip']]}")
        print(f"pip / uv: {pip / uv:.1f}x")


def main() -> None:
    """Both measurements, as the docstring says."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modules", type=int, default=12)
    parser.add_argument("--setup-runs", type=int, default=3)
    parser.add_argument("--project", default="itsdangerous", choices=sorted(PROJECTS))
    args = parser.parse_args()
    overhead(args.runs, args.modules)
    if args.setup_runs:
        setup_speed(args.setup_runs, args.project)


if __name__ == "__main__":
    main()
