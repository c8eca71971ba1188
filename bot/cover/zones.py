"""Complexity zones (seed 002): green, yellow or red by a method's size and decision points.

Seed 002 zones whole files by lines (85 green, 180 yellow); /cover zones each method, so
the thresholds are a method's: lines of the definition and cyclomatic complexity
(decision points + 1), the usual 10/20 bands of McCabe's measure. Red new code is too big
to cover well and stops the pipeline (`red_zone_new_code`) unless forced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Zone = Literal["green", "yellow", "red"]


@dataclass(frozen=True)
class Thresholds:
    """The upper bounds of green and yellow; above yellow's is red."""

    green_loc: int = 50
    green_complexity: int = 10
    yellow_loc: int = 150
    yellow_complexity: int = 20


DEFAULT = Thresholds()


def zone(loc: int, complexity: int, limits: Thresholds = DEFAULT) -> Zone:
    """The zone of a method with `loc` lines and cyclomatic complexity `complexity`."""
    if loc > limits.yellow_loc or complexity > limits.yellow_complexity:
        return "red"
    if loc > limits.green_loc or complexity > limits.green_complexity:
        return "yellow"
    return "green"
