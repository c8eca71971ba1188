"""From an Action job's start to agentbot's first model request (issue #31 item 5).

Run by hand: `.venv/bin/python -m bench.action_start [--repeat 3]`.

Simulates what action.yml does on a runner, on this machine, with the fakes for GitHub and
the model (nothing leaves the machine):

- cold: a fresh venv, agentbot installed with pip from a local wheel and a wheelhouse of
  its dependencies (a warm pip cache: nothing downloaded), then `agentbot run` on a
  labelled issue;
- warm: the venv restored as `actions/cache` restores it (a tar of it, extracted to the same
  path), then `agentbot run` with the repository's package cache kept from the cold run.

It prints, per mode, the install (or restore) time and the time from the job's start to the
first model request. Target: warm <= 20 s. setup-python (the tool cache) and the cache
service's download are not simulated; the note in docs/operations.md says what they add.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.e2e import REPO, fast_validation_yaml, world
from tests.fakes.gitrepo import clone_branch
from tests.test_cli_run import actions_env, labeled_payload
from tests.test_fix_issue import fix_script
from tests.test_validation import _repack

ROOT = Path(__file__).resolve().parent.parent


def wheelhouse(dest: Path) -> Path:
    """agentbot's wheel and its dependencies' (repacked from this venv: no network)."""
    dest.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest), str(ROOT)],
        check=True,
    )
    for dist in closure("agentbot"):
        if dist.metadata["Name"].lower() != "agentbot":
            _repack(dist, dest)
    return dest


def closure(name: str) -> list[metadata.Distribution]:
    """The installed distributions `name` needs, extras included (pip resolves those too)."""
    seen: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        item = todo.pop()
        if item in done:
            continue
        done.add(item)
        key, extras = canonicalize_name(item[0]), item[1]
        dist = seen.setdefault(key, metadata.distribution(key))
        for line in dist.requires or []:
            req = Requirement(line)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": e}) for e in (extras or {""})
            )
            if wanted:
                todo.append((req.name, frozenset(req.extras)))
    return list(seen.values())


def install(venv: Path, wheels: Path) -> float:
    """A fresh venv with agentbot from the wheelhouse; seconds taken."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
         "--find-links", str(wheels), "--disable-pip-version-check", "agentbot"],
        check=True,
    )  # fmt: skip
    return time.perf_counter() - start


def restore(venv: Path, archive: Path) -> float:
    """The venv removed and extracted again from its tar, as a cache hit restores it."""
    shutil.rmtree(venv)
    start = time.perf_counter()
    with tarfile.open(archive) as tar:
        tar.extractall(venv.parent, filter="tar")
    return time.perf_counter() - start


def to_first_request(venv: Path, tmp: Path, data: Path, started: float) -> float:
    """`agentbot run` on a labelled issue; seconds from `started` to the first model request."""
    with world(tmp, fix_script(), repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        checkout = clone_branch(w.remote, "main", tmp / "checkout")
        env = actions_env(tmp, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        env["AGENTBOT_DATA_DIR"] = str(data)
        env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
        proc = subprocess.Popen(
            [str(venv / "bin" / "agentbot"), "run"], cwd=checkout, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        while not w.llm.requests and proc.poll() is None:
            time.sleep(0.005)
        first = time.perf_counter() - started
        out, _ = proc.communicate(timeout=300)
        assert w.llm.requests, out
        return first


def main() -> None:
    """Print the cold and warm figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="warm runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        wheels = wheelhouse(tmp / "wheels")
        venv, data = tmp / "agentbot-venv", tmp / "data"
        started = time.perf_counter()
        installed = install(venv, wheels)
        cold = to_first_request(venv, tmp / "cold", data, started)
        archive = tmp / "venv.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(venv, arcname=venv.name)
        warm: list[tuple[float, float]] = []
        for i in range(args.repeat):
            started = time.perf_counter()
            restored = restore(venv, archive)
            warm.append((restored, to_first_request(venv, tmp / f"warm{i}", data, started)))
        size_mb = archive.stat().st_size / 1e6
        count = len(list(wheels.glob("*.whl")))
    print(f"agentbot and {count - 1} dependencies; the venv's tar is {size_mb:.0f} MB")
    print(f"cold: install {installed:.1f}s, first model request at {cold:.1f}s")
    print(
        f"warm (median of {len(warm)}): restore {statistics.median(r for r, _ in warm):.1f}s,"
        f" first model request at {statistics.median(f for _, f in warm):.1f}s (target <= 20 s)"
    )


if __name__ == "__main__":
    main()
