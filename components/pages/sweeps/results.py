"""What the page shows of the last sweep: the comparison table, every point, the plot, the CSV files."""

from __future__ import annotations

import pandas as pd

from sched_engine.sweeps import KINDS, mean_std_text, summarise

from ...figures import sweeps as figures
from ...services.csv_export import csv_text
from .store import SweepStore


def summary_rows(kind: str, summary: pd.DataFrame) -> list[dict]:
    """The comparison table for display: ``mean ± std`` cells, shares in percent."""
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
                row[figures.METRIC_LABELS.get(metric, metric)] = mean_std_text(value, record.get(f"{metric}_std"))
            else:
                row[column] = value
        rows.append(row)
    return rows


def point_rows(table: pd.DataFrame) -> list[dict]:
    return table.round(4).to_dict("records")


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
    return (summary_rows(kind, summarise(record["spec"], table)), point_rows(table),
            figures.sweep_figure(kind, table, metric), heading)


def export_csv(store: SweepStore, last: dict | None, which: str):
    """``(file name, CSV text)`` of the last sweep's points or comparison table, or ``None``."""
    record = store.get(last["key"]) if last and last.get("key") else None
    if record is None:
        return None
    kind = record["spec"]["kind"]
    frame = record["table"] if which == "points" else summarise(record["spec"], record["table"])
    return f"{kind}-{'sweep' if which == 'points' else 'summary'}.csv", csv_text(frame)
