"""What the page shows of the last sweep: the comparison table, every point, the plot, the CSV files."""

from __future__ import annotations

import pandas as pd

from sched_engine.sweeps import KINDS, calibrate, mean_std_text, summarise

from ...figures import catalogue
from ...figures import sweeps as figures
from ...services.csv_export import csv_text
from .store import SweepStore

#: The engine each sweep kind runs: whose catalogue names its metrics and policies.
ENGINE_OF_KIND = {"elastic-fig6": "elastic", "batch-ls-seeds": "batch", "libra-intervals": "network",
                  "libra-sensitivity": "network"}
#: A sweep's parameters, as a table header says them.
PARAMETERS = {"policy": "Policy", "scheme": "Scheme", "seed": "Seed", "variant": "Variant",
              "interval_s": "Mean arrival gap (s)", "volume_gb": "Data per flow (Gb)", "slots": "Slots per machine",
              "distribution": "Distribution", "penalty": "Spill penalty", "configuration": "Configuration",
              "trace": "Trace"}
#: Columns whose values are policy names (shown as the registry spells them: ``drf`` -> ``DRF``).
POLICY_COLUMNS = ("policy", "scheme")


def _header(column: str, engine: str | None, raw: bool) -> str:
    """A column's header: a parameter's name, a catalogue metric's (``raw``: values kept on their own scale)."""
    if column in PARAMETERS:
        return PARAMETERS[column]
    if column in figures.METRIC_LABELS and catalogue.entry(column, engine) is None:
        return figures.METRIC_LABELS[column]
    return catalogue.axis_title(column, engine) if raw else catalogue.column(column, engine)


def _cell(column: str, value, engine: str | None):
    value = value.item() if hasattr(value, "item") else value   # numpy scalars -> Python numbers for the table
    if column in POLICY_COLUMNS and isinstance(value, str):
        return catalogue.policy_label(engine, value)
    if column in PARAMETERS or not isinstance(value, float):
        return value
    return catalogue.rounded(column, value, engine)


def summary_rows(kind: str, summary: pd.DataFrame) -> list[dict]:
    """The comparison table for display: catalogue names, ``mean ± std`` cells, shares in percent."""
    engine = ENGINE_OF_KIND.get(kind)
    rows = []
    for record in summary.to_dict("records"):
        if kind == "elastic-fig6":
            rows.append({
                "distribution": record["distribution"], "penalty": f"{record['penalty']:g}×",
                "configurations": record["configurations"], "traces": record["traces"],
                "median YARN-ME / YARN": f"{record['median_ratio']:.3f}",
                "worst": f"{record['worst_ratio']:.3f}",
                "configurations ≤ 0.7": f"{record['share_le_0_7']:.0%}",
                "beats Meganode": f"{record['beats_meganode']:.0%}",
                "median YARN-ME / Meganode": f"{record['median_vs_meganode']:.3f}",
            })
            continue
        row = {}
        for column, value in record.items():
            if column.endswith("_std"):
                continue
            if column.endswith("_mean"):
                metric = column[: -len("_mean")]
                row[_header(metric, engine, raw=True)] = mean_std_text(value, record.get(f"{metric}_std"))
            else:
                row[_header(column, engine, raw=True)] = _cell(column, value, engine)
        rows.append(row)
    return rows


def point_rows(table: pd.DataFrame, kind: str | None = None) -> list[dict]:
    """Every point of the sweep: catalogue names and units, numbers to sensible precision (shares in percent)."""
    engine = ENGINE_OF_KIND.get(kind)
    columns = [(column, _header(column, engine, raw=False)) for column in table.columns]
    return [{header: _cell(column, value, engine) for (column, header), value in zip(columns, values)}
            for values in table.itertuples(index=False)]


def columns(rows: list[dict]) -> list[dict]:
    return [{"name": k, "id": k} for k in (rows[0] if rows else {})]


def results(store: SweepStore, last: dict | None, metric: str | None):
    """``(summary rows, point rows, figure, heading)`` of the last sweep, or empty ones."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return [], [], figures.sweep_figure("", pd.DataFrame()), "No sweep yet."
    kind = record["spec"]["kind"]
    table = record["table"]
    heading = f"{KINDS[kind].label}: {len(table)} points"
    return (summary_rows(kind, summarise(record["spec"], table)), point_rows(table, kind),
            figures.sweep_figure(kind, table, metric), heading)


def verdict(store: SweepStore, last: dict | None, labels: dict[str, str]) -> str:
    """The calibrate sweep's sentence: on which log, which setting reproduces it best and by how much
    (:func:`sched_engine.sweeps.calibrate.verdict`); empty for other kinds. ``labels`` names uploads."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None or record["spec"]["kind"] != calibrate.KIND_NAME:
        return ""
    spec = record["spec"]
    trace = spec["trace"]
    workload = labels.get(trace) or (f"upload {trace[len('upload:'):][:12]}…" if trace.startswith("upload:")
                                     else trace.rsplit("/", 1)[-1])
    ranked = calibrate.rank(record["table"])
    compared = int(ranked["compared_jobs"].max()) if not ranked.empty else 0
    sentence = calibrate.verdict(ranked)
    return (f"{workload} ({compared:,} jobs compared), {catalogue.policy_label('batch', spec['policy'])}: "
            f"{sentence[0].upper()}{sentence[1:]}.")


def export_csv(store: SweepStore, last: dict | None, which: str):
    """``(file name, CSV text)`` of the last sweep's points or comparison table, or ``None``."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return None
    kind = record["spec"]["kind"]
    frame = record["table"] if which == "points" else summarise(record["spec"], record["table"])
    return f"{kind}-{'sweep' if which == 'points' else 'summary'}.csv", csv_text(frame)
