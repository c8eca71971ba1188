"""Validation pipeline overhead: `run_validation` vs the same four commands run by hand.

Run by hand: `.venv/bin/python bench/validation_overhead.py [--runs 5] [--modules 12]`.
It builds a Python project in a temporary directory, lets the pipeline's own zero-config
setup prepare its venv (offline, from wheels repacked from this venv, as the tests do),
then times, alternately, the whole pipeline (setup cached) and the four stage commands
run with `subprocess.run` in the same environment. It prints the median of each and the
ratio; the target is <= 1.1x.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import ValidationConfig
from bot.validation import detect_profile, run_validation
from bot.validation.environment import build_stage_env
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


def main() -> None:
    """Prepare, then time both ways and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modules", type=int, default=12)
    args = parser.parse_args()
    config = ValidationConfig()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = offline_env(build_wheelhouse(root / "wheels"))
        repo = make_project(root, args.modules)
        data = root / "data"
        t0 = time.perf_counter()
        first = run_validation(repo, config, data_dir=data, env=env)
        print(f"first run (venv + setup): {time.perf_counter() - t0:.1f}s, passed={first.passed}")
        assert first.passed, first
        profile = detect_profile(repo)
        senv = build_stage_env(repo, profile, data.resolve(), env, use_venv=True)
        commands = [profile.command(s) for s in ("format", "lint", "typecheck", "test")]
        argvs = [c.split() for c in commands if c is not None]

        def by_hand() -> float:
            start = time.perf_counter()
            for argv in argvs:
                subprocess.run(argv, cwd=repo, env=senv.env, capture_output=True, check=True)
            return time.perf_counter() - start

        def pipeline() -> float:
            start = time.perf_counter()
            report = run_validation(repo, config, data_dir=data, env=env)
            assert report.passed and report.tests and report.tests.test_count == 6 * args.modules
            return time.perf_counter() - start

        by_hand(), pipeline()  # warm caches (mypy, pyc) for both
        hand, pipe = [], []
        for _ in range(args.runs):
            hand.append(by_hand())
            pipe.append(pipeline())
        h, p = statistics.median(hand), statistics.median(pipe)
        print(f"commands: {' | '.join(c or '-' for c in commands)}")
        print(f"by hand : median {h:.3f}s  runs {[round(x, 3) for x in hand]}")
        print(f"pipeline: median {p:.3f}s  runs {[round(x, 3) for x in pipe]}")
        pairs = statistics.median(b / a for a, b in zip(hand, pipe, strict=True))
        print(f"overhead: {p / h:.3f}x ({(p - h) * 1000:+.0f} ms per run); target <= 1.1x")
        print(f"median of the per-pair ratios (runs alternate, so load hits both): {pairs:.3f}x")


if __name__ == "__main__":
    main()
