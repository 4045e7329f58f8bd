"""What a sweep kind declares; :mod:`.registry` lists the kinds, as the policy registry lists policies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pandas as pd


def no_inputs(spec: dict) -> None:
    """The fingerprint of a kind that reads no files."""
    del spec
    return None


@dataclass(frozen=True)
class SweepKind:
    """One kind of sweep.

    ``normalize(spec)`` checks a spec over ``defaults`` (raising
    :class:`~sched_engine.core.errors.ScenarioError` naming the parameter);
    ``count(normal)`` is the number of points, computed from the lists'
    lengths; ``points(normal)`` builds them (exactly ``count`` of them);
    ``run(point)`` returns a point's metrics; ``parameters(point)`` the
    columns that say which point a row is; ``summarise(table)`` the
    comparison table; ``fingerprint(normal)`` the contents of the files the
    spec reads (part of its hash).
    """

    name: str
    label: str
    defaults: Mapping[str, Any]
    quick: Mapping[str, Any]        # a small spec for --quick
    normalize: Callable[[Mapping[str, Any]], dict]
    count: Callable[[dict], int]
    points: Callable[[dict], list[dict]]
    run: Callable[[Mapping[str, Any]], dict]
    parameters: Callable[[Mapping[str, Any]], dict]
    summarise: Callable[[pd.DataFrame], pd.DataFrame]
    fingerprint: Callable[[dict], Any] = no_inputs
