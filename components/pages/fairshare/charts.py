"""What the page's charts and tables show of loaded runs (``[(run record, result)]``), built from cached frames."""

from __future__ import annotations

from sched_engine.core import content_hash
from sched_engine.fairshare import (
    FIG4_AFTER_N12_AT,
    FIG4_ALL_ACTIVE_AT,
    FIG4_PAPER_SHARES,
    FIG4_PAPER_WEIGHTS,
    fig4_model,
    normalize_model,
)

from ...figures import catalogue
from ...figures import fairshare as figures
from .tree import share_nodes

FIG4_MODEL_HASH = content_hash(normalize_model(fig4_model()))


def _share_inputs(loaded) -> tuple[list[tuple[str, object]], list[str], list[str]]:
    """``([(policy label, timeline)], leaves in tree order, heatmap nodes)`` of loaded runs."""
    first = loaded[0][1]
    return ([(r["label"], res.timeline) for r, res in loaded], list(first.jobs.job_id),
            share_nodes(first.scenario["model"]))


def chart_outputs(loaded, hovered: str | None) -> tuple:
    """The run charts and tables of ``[(run record, result)]``, in the ``_charts`` callback's output order.

    Shares figure (``hovered`` highlighted), decision cost, summary rows and
    columns, paper table rows, columns and style, export choices.
    """
    if not loaded:
        return (figures.share_timelines([], []), figures.decision_cost([]), [], [], [], [], {"display": "none"}, [])
    runs, leaves, nodes = _share_inputs(loaded)
    summary, summary_cols = _table(summary_rows(loaded))
    paper_rows, paper_cols, paper_style = [], [], {"display": "none"}
    if all(r["model_hash"] == FIG4_MODEL_HASH for r, _ in loaded):
        paper_rows, paper_cols = _table(figures.fig4_table(
            dict(runs), FIG4_PAPER_SHARES, FIG4_PAPER_WEIGHTS, FIG4_ALL_ACTIVE_AT, FIG4_AFTER_N12_AT))
        paper_style = {"display": "block"}
    return (figures.share_timelines(runs, leaves, hovered, nodes),
            figures.decision_cost([(r["label"], res.summary) for r, res in loaded]),
            summary, summary_cols, paper_rows, paper_cols, paper_style,
            [{"label": r["label"], "value": r["hash"]} for r, _ in loaded])


def tasks_figure(loaded, instant):
    """Running tasks per leaf at ``instant`` (default: half the longest makespan)."""
    if not loaded:
        return figures.tasks_at([], [], 0)
    runs, leaves, _ = _share_inputs(loaded)
    end = max(float(res.summary_value("makespan_s")) for _, res in loaded)
    return figures.tasks_at(runs, leaves, end / 2 if instant is None else float(instant))


def share_highlight(loaded, hovered: str | None):
    """The patch of the shares figure that highlights ``hovered`` instead (see :func:`figures.share_highlight`)."""
    runs, leaves, nodes = _share_inputs(loaded)
    return figures.share_highlight(runs, leaves, hovered, nodes)


def hovered_leaf(hover: dict | None) -> str | None:
    """The node under the pointer in the shares figure: a line's leaf (``customdata``), a heatmap row's label."""
    points = (hover or {}).get("points") or []
    if not points:
        return None
    name = points[0].get("customdata", points[0].get("y"))
    return name if isinstance(name, str) else None


#: The summary table's metrics, in its order.
SUMMARY = ("makespan_s", "decisions", "scheduler_cpu_s", "decisions_per_second")


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)`` pair for the summary table."""
    return [
        {"policy": record["label"], **catalogue.cells(result.summary_value, SUMMARY, "fairshare"),
         "wall (s)": round(record["wall_seconds"], 3), "source": "cached" if record["cached"] else "simulated"}
        for record, result in loaded
    ]


def _table(rows):
    return rows, [{"name": key, "id": key} for key in (rows[0] if rows else {})]
