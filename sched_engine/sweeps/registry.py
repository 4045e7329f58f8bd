"""The sweep kinds, by name, and what every kind supports: check, count, expand, run, gather, summarise.

A spec may describe at most :data:`MAX_POINTS` points; the count is the
product of its lists' lengths (:func:`point_count`), known before a single
point is built, so checking a spec costs the same for ten points or ten
million.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import pandas as pd

from ..core.errors import ScenarioError
from . import batch, calibrate, elastic, libra
from .kind import SweepKind

KINDS: dict[str, SweepKind] = {kind.name: kind for kind in (elastic.KIND, batch.KIND, libra.INTERVALS,
                                                             libra.SENSITIVITY, calibrate.KIND)}
MAX_POINTS = 100_000


def kind_of(spec: Any) -> SweepKind:
    if not isinstance(spec, Mapping):
        raise ScenarioError("", "a sweep spec must be a JSON object with a kind")
    name = spec.get("kind")
    if not isinstance(name, str) or name not in KINDS:
        raise ScenarioError("kind", f"unknown sweep kind {name!r:.40} (known: {', '.join(KINDS)})")
    return KINDS[name]


def normalize_spec(spec: Mapping[str, Any]) -> dict:
    """The spec checked, with every default filled in; raises :class:`ScenarioError` naming the parameter."""
    kind = kind_of(spec)
    normal = kind.normalize(spec)
    count = kind.count(normal)
    if count > MAX_POINTS:
        raise ScenarioError("", f"the sweep has {count:,} points, at most {MAX_POINTS:,}: "
                                "fewer seeds or shorter lists")
    return normal


def point_count(spec: Mapping[str, Any]) -> int:
    """How many points the spec has, from its lists' lengths (no point is built)."""
    normal = normalize_spec(spec)
    return KINDS[normal["kind"]].count(normal)


def spec_hash(spec: Mapping[str, Any]) -> str:
    """SHA-256 of the normalised spec (canonical JSON) and of the contents of the files it reads."""
    normal = normalize_spec(spec)
    payload = {"spec": normal, "inputs": KINDS[normal["kind"]].fingerprint(normal)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def expand(spec: Mapping[str, Any]) -> list[dict]:
    """The spec's points, in order: ``{"kind", "index", <concrete parameters>, "seed"}`` each."""
    normal = normalize_spec(spec)
    return [{"kind": normal["kind"], "index": i, **point} for i, point in enumerate(KINDS[normal["kind"]].points(normal))]


def run_point(point: Mapping[str, Any]) -> dict:
    """Run one point; a flat JSON dict of metrics (numbers)."""
    return kind_of(point).run(point)


def describe(point: Mapping[str, Any]) -> str:
    """A point in a few words, e.g. ``libra-intervals scheme=libra interval_s=0.1 seed=2``."""
    kind = KINDS.get(point.get("kind"))
    if kind is None:
        return f"point {point.get('index')}"
    try:
        fields = kind.parameters(point)
    except (KeyError, TypeError, IndexError):
        fields = {}
    return " ".join([kind.name, *(f"{k}={v}" for k, v in fields.items())])


def gather(points: list[Mapping[str, Any]], results: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point, sorted by point index: ``point``, parameter columns, metric columns."""
    if len(points) != len(results):
        raise ValueError(f"{len(points)} points but {len(results)} results")
    rows = sorted(({"point": p["index"], **kind_of(p).parameters(p), **r} for p, r in zip(points, results)),
                  key=lambda row: row["point"])
    return pd.DataFrame(rows)


def summarise(spec: Mapping[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    """The comparison table of a gathered sweep (mean ± std over seeds, or the Fig. 6 figures)."""
    return kind_of(spec).summarise(table)


def quick_spec(kind: str) -> dict:
    """A kind's small spec (``--quick``): a few seconds to a minute on two cores."""
    return {"kind": kind, **KINDS[kind].quick}
