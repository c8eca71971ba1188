"""/cover's model-free part on real history: discovery and mutant generation per commit.

Run by hand: `.venv/bin/python bench/cover_discovery.py [--repo .] [--commits 40] [--runs 3]`.
For each of the last N commits of a repository (this one by default), it maps the
commit's diff onto the syntax trees (what `/cover` does before any model is asked) and
makes the mutants of every changed method. It prints the medians per commit, the methods
and mutants found, and the zones: the cost /cover adds before its first LLM call.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.cover.discovery import SourcePair, changed_lines, discover
from bot.cover.languages import language_for
from bot.cover.mutation import mutants


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=False
    ).stdout


def _sources(repo: Path, sha: str, paths: list[str]) -> dict[str, SourcePair]:
    out: dict[str, SourcePair] = {}
    for path in paths:
        if language_for(path) is None:
            continue
        head = _git(repo, "show", f"{sha}:{path}")
        if not head:
            continue
        base = _git(repo, "show", f"{sha}~1:{path}")
        out[path] = SourcePair(head.encode(), base.encode() or None)
    return out


def main() -> None:
    """Time discovery and mutant generation over recent commits; print medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--commits", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    shas = _git(args.repo, "rev-list", "--no-merges", f"--max-count={args.commits}", "HEAD")
    inputs = []
    for sha in shas.split():
        diff = _git(args.repo, "diff", "-U0", "--no-color", f"{sha}~1", sha)
        files = changed_lines(diff)
        inputs.append((diff, _sources(args.repo, sha, list(files))))
    discovery: list[float] = []
    mutation: list[float] = []
    zones: Counter[str] = Counter()
    methods = made = 0
    for run in range(args.runs):
        for diff, sources in inputs:
            t0 = time.perf_counter()
            found = discover(changed_lines(diff), sources)
            t1 = time.perf_counter()
            count = 0
            for m in found:
                lang = language_for(m.path)
                assert lang is not None
                source = sources[m.path].head
                count += len(mutants(source, lang, m.function.start_line, m.function.end_line))
            t2 = time.perf_counter()
            discovery.append(t1 - t0)
            mutation.append(t2 - t1)
            if run == 0:
                methods += len(found)
                made += count
                zones.update(m.zone for m in found)
    print(f"commits: {len(inputs)}, changed methods: {methods}, mutants: {made}")
    print(f"zones: {dict(zones)}")
    print(f"discovery per commit: median {statistics.median(discovery) * 1000:.1f} ms")
    print(f"mutants per commit:   median {statistics.median(mutation) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
