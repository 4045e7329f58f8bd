"""The runs compared: their labels, the summary table with differences from the reference, the overlay's choices."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...figures import catalogue
from ...figures.compare import SUM
from ...services.report import summary_table
from ...services.runs import runs_and_searches

HIGHLIGHT_PERCENT = 1.0


def run_label(entry: dict) -> str:
    """A readable unique label: policy · workload and its size · engine · seed, and the hash's start.

    A run without a name (the Site page's) is told by its size alone: its hash is already in the brackets.
    """
    readable = catalogue.run_label(entry["engine"], entry["policy"], entry.get("name") or None, entry.get("jobs"))
    return f"{readable} · {catalogue.engine_label(entry['engine'])} · seed {entry['seed']} [{entry['hash'][:6]}]"


def run_options(entries: list[dict]) -> list[dict]:
    """The picker's choices: the runs, newest first; then each sizing search, a heading with its probes under it."""
    runs, searches = runs_and_searches(entries)
    options = [{"label": f"{run_label(e)} — {_when(e)}", "value": e["hash"]} for e in runs]
    for search in searches:
        probes = search["probes"]
        options.append({"label": f"Sizing search from {search['label']} · "
                                 f"{catalogue.policy_label(search['engine'], search['policy'])}: "
                                 f"{len(probes)} probe(s) — {_when(search)}",
                        "value": f"search:{probes[0]['hash']}", "disabled": True})
        options += [{"label": f"    probe: {p['varied']} [{p['hash'][:6]}]", "value": p["hash"]} for p in probes]
    return options


def _when(entry: dict) -> str:
    return entry["finished"].replace("T", " ")[:16]


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


#: Cell colours of a difference that is better / worse by the metric's direction.
BETTER = {"backgroundColor": "#dff3e4", "color": "#1d6b34", "fontWeight": 600}
WORSE = {"backgroundColor": "#fbe3e1", "color": "#9b2c22", "fontWeight": 600}


def direction_styles(table: pd.DataFrame, deltas: list[str], engine: str | None) -> list[dict]:
    """DataTable styles colouring each difference past :data:`HIGHLIGHT_PERCENT` green when better, red when worse.

    Better follows the metric's direction in the catalogue ("lower is
    better" for waits, "higher" for utilisation); metrics without a
    direction (counts of the workload) stay uncoloured.
    """
    styles = []
    for metric in table["metric"] if "metric" in table else []:
        direction = catalogue.describe(metric, engine).direction
        if direction is None:
            continue
        for delta in deltas:
            down, up = (BETTER, WORSE) if direction == catalogue.LOWER else (WORSE, BETTER)
            row = f'{{metric}} = "{catalogue.column(metric, engine)}"'   # the row as shown (:func:`shown`)
            styles += [{"if": {"filter_query": f"{row} && {{{delta}}} < -{HIGHLIGHT_PERCENT}", "column_id": delta}, **down},
                       {"if": {"filter_query": f"{row} && {{{delta}}} > {HIGHLIGHT_PERCENT}", "column_id": delta}, **up}]
    return styles


def shown(table: pd.DataFrame, labels: list[str], engine: str | None) -> pd.DataFrame:
    """The comparison table as the page shows it: each metric named and rounded as the catalogue says.

    ``metric`` becomes its readable name with its unit (``Mean wait (s)``;
    shares read as percent) and the ``unit`` column goes; the runs' values
    are rounded by kind; the relative differences stay as computed.
    """
    if "metric" not in table:
        return table
    out = table.drop(columns=["unit"], errors="ignore").copy()
    metrics = list(table["metric"])
    for label in labels:
        out[label] = [catalogue.rounded(metric, value, engine) for metric, value in zip(metrics, table[label])]
    out["metric"] = [catalogue.column(metric, engine) for metric in metrics]
    return out


#: Summary metrics that describe what was run (the workload and the hardware), not how it went.
SETTING = {"jobs": "workload", "applications": "workload", "tasks": "workload", "cpus": "hardware",
           "clusters": "hardware"}


def setting_warning(runs: list[tuple[str, object]]) -> str | None:
    """A warning when the compared runs differ in engine, workload or hardware; ``None`` when they match."""
    if len(runs) < 2:
        return None
    engines = {result.scenario["engine"] for _, result in runs}
    if len(engines) > 1:
        return ("These runs come from different engines (" + ", ".join(sorted(map(catalogue.engine_label, engines)))
                + "): their numbers measure different things.")
    differ = []
    for metric, what in SETTING.items():
        values = {label: result.summary_value(metric) for label, result in runs
                  if metric in set(result.summary["metric"])}
        if len(set(values.values())) > 1:
            shown = ", ".join(f"{label}: {catalogue.formatted(metric, value, next(iter(engines)))}"
                              for label, value in values.items())
            differ.append(f"{what} ({catalogue.label(metric).lower()}: {shown})")
    if not differ:
        return None
    return ("Not like for like: the runs differ in " + "; ".join(differ)
            + ". Differences below mix the policy's effect with that change.")


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
