"""The runs compared: their labels, the summary table with differences from the reference, the overlay's choices."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...figures.compare import SUM
from ...services.report import summary_table

HIGHLIGHT_PERCENT = 1.0


def run_label(entry: dict) -> str:
    """A short unique label: engine · policy · name (or hash) · seed."""
    name = entry.get("name") or entry["hash"][:8]
    return f"{entry['engine']} · {entry['policy']} · {name} · seed {entry['seed']} [{entry['hash'][:6]}]"


def run_options(entries: list[dict]) -> list[dict]:
    return [{"label": f"{run_label(e)} — {e['finished'].replace('T', ' ')[:16]}", "value": e["hash"]}
            for e in entries]


def comparison_table(runs: list[tuple[str, object]]) -> tuple[pd.DataFrame, list[str]]:
    """Summary metrics side by side plus ``Δ% <label>`` columns against the first run.

    Returns the table and the names of its difference columns. The relative
    difference is ``100 · (value − reference) / |reference|``; it is empty
    where the reference is 0 or a run lacks the metric.
    """
    table = summary_table(runs)
    if not runs:
        return table, []
    reference = table[runs[0][0]].astype(float)
    columns, deltas = ["metric", "unit", runs[0][0]], []
    for label, _ in runs[1:]:
        delta = f"Δ% {label}"
        values = table[label].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            table[delta] = np.where(reference != 0, 100 * (values - reference) / reference.abs(), np.nan).round(2)
        columns += [label, delta]
        deltas.append(delta)
    return table[columns], deltas


def delta_styles(deltas: list[str]) -> list[dict]:
    """DataTable styles that highlight relative differences above :data:`HIGHLIGHT_PERCENT`."""
    return [{"if": {"filter_query": f"{{{d}}} > {HIGHLIGHT_PERCENT} || {{{d}}} < -{HIGHLIGHT_PERCENT}",
                    "column_id": d}, "backgroundColor": "#fde8d7", "fontWeight": 600} for d in deltas]


def metric_options(runs: list[tuple[str, object]]) -> list[str]:
    """Timeline metrics present in every run (in the first run's order)."""
    if not runs:
        return []
    common = None
    for _, result in runs:
        metrics = list(dict.fromkeys(result.timeline["metric"]))
        common = metrics if common is None else [m for m in common if m in set(metrics)]
    return common or []


def entity_options(runs: list[tuple[str, object]], metric: str | None) -> list[dict]:
    entities = []
    for _, result in runs:
        timeline = result.timeline
        entities += list(timeline.loc[timeline["metric"] == metric, "entity"])
    unique = list(dict.fromkeys(entities))
    options = [{"label": str(e), "value": str(e)} for e in unique]
    return ([{"label": "sum over all", "value": SUM}] if len(unique) > 1 else []) + options


def short_label(position: int, entry: dict) -> str:
    """``#1 easy``: the run's place in the choice and its policy (full labels are listed above the table)."""
    return f"#{position} {entry['policy']}"


def loaded(results, hashes) -> tuple[list[tuple[str, object]], list[str]]:
    """``(short label, result)`` of the chosen runs still cached, and their full labels."""
    entries = {e["hash"]: e for e in results.listing()}
    runs, full = [], []
    for value in hashes or []:
        result = results.get(value)
        if result is not None and value in entries:
            runs.append((short_label(len(runs) + 1, entries[value]), result))
            full.append(f"{runs[-1][0]}: {run_label(entries[value])}")
    return runs, full
