"""Dependency waves (seed 002): callees first, each wave's methods independent of each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def waves(calls: Mapping[str, frozenset[str] | set[str]], order: Sequence[str]) -> list[list[str]]:
    """Group the ids of `order` into waves: a method comes after every method it calls.

    `calls[id]` holds the ids it calls (only edges among `order` count). Methods calling
    each other in a cycle share one wave. Within a wave, `order` is kept.
    """
    known = set(order)
    deps = {m: {c for c in calls.get(m, ()) if c in known and c != m} for m in order}
    placed: set[str] = set()
    result: list[list[str]] = []
    while len(placed) < len(order):
        ready = [m for m in order if m not in placed and deps[m] <= placed]
        if not ready:
            ready = _smallest_cycle_group(deps, placed, order)
        result.append(ready)
        placed.update(ready)
    return result


def _smallest_cycle_group(
    deps: Mapping[str, set[str]], placed: set[str], order: Sequence[str]
) -> list[str]:
    """The first cycle (strongly connected group) whose other callees are all placed."""
    for first in (m for m in order if m not in placed):
        reach = _reachable(deps, first, placed)
        group = {m for m in reach if first in _reachable(deps, m, placed)} | {first}
        outside = set().union(*(deps[m] for m in group)) - group
        if outside <= placed:
            return [m for m in order if m in group]
    raise AssertionError("a dependency graph always has a group with nothing left to wait for")


def _reachable(deps: Mapping[str, set[str]], start: str, placed: set[str]) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for nxt in deps[stack.pop()] - placed:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen
