"""Pure figure builders for the fair-sharing page: frames in, figures out.

Dominant shares are drawn as one step line per leaf while a tree has at
most :data:`LINE_LIMIT` leaves; larger trees get one heatmap per policy
(tree nodes × time, cells the time-averaged share) of at most
:data:`HEATMAP_CELLS` cells, whatever the run's length. Line points are
reduced by M4 (:mod:`.downsample`) so every figure stays within a few
thousand points per trace.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from dash import Patch
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .common import empty_figure
from .downsample import step_points

PALETTE = qualitative.D3 + qualitative.Set2
#: Trees with more leaves than this are drawn as heatmaps, not lines.
LINE_LIMIT = 24
#: Points of all share lines of one figure together (each line gets an equal part, M4-reduced).
LINE_POINTS = 60_000
#: Rows of a share heatmap (beyond, neighbouring nodes share a row), its most time columns, and its most cells
#: (rows x columns: columns shrink when rows grow).
HEATMAP_ROWS = 1024
HEATMAP_COLUMNS = 240
HEATMAP_CELLS = 60_000
#: Heatmaps of at most this many rows name every row on the axis (larger ones only on hover).
LABELLED_ROWS = 64
HIGHLIGHT = "#d62728"


def leaf_colors(leaves: list[str]) -> dict[str, str]:
    """One stable colour per leaf, shared by every panel."""
    return {leaf: PALETTE[i % len(PALETTE)] for i, leaf in enumerate(leaves)}


def step_value(timeline: pd.DataFrame, entity: str, metric: str, time: float) -> float:
    """Value of a timeline step function at ``time`` (0 before its first row)."""
    rows = timeline[(timeline.entity == entity) & (timeline.metric == metric) & (timeline.time <= time)]
    return float(rows.value.iloc[-1]) if len(rows) else 0.0


def values_at(timeline: pd.DataFrame, entities: list[str], metric: str, time: float) -> np.ndarray:
    """:func:`step_value` of every entity at once (0 for an entity without rows by ``time``)."""
    rows = timeline[(timeline.metric == metric) & (timeline.time <= time)]
    last = rows.groupby("entity", sort=False)["value"].last()
    return last.reindex(entities, fill_value=0.0).to_numpy(dtype=float)


def entity_series(timeline: pd.DataFrame, metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each entity's step series of ``metric``: ``{entity: (times, values)}``, times ascending."""
    rows = timeline[timeline.metric == metric].sort_values("time", kind="stable")
    return {entity: (group.time.to_numpy(dtype=float), group.value.to_numpy(dtype=float))
            for entity, group in rows.groupby("entity", sort=False)}


def bin_means(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time-weighted mean of a step function (0 before its first time) over each bin between ``edges``."""
    knots = np.concatenate([[min(edges[0], times[0])], times, [max(edges[-1], times[-1])]])
    levels = np.concatenate([[0.0], values])  # levels[i] holds on [knots[i], knots[i + 1])
    area = np.concatenate([[0.0], np.cumsum(levels * np.diff(knots))])
    return np.diff(np.interp(edges, knots, area)) / np.diff(edges)


def _end(runs: list[tuple[str, pd.DataFrame]]) -> float:
    """The last time of any run's timeline (0 without rows)."""
    return max((float(timeline.time.max()) for _, timeline in runs if len(timeline)), default=0.0)


def _line_style(leaf: str, highlight: str | None) -> tuple[float, float]:
    """``(line width, opacity)`` of a leaf's share line given the highlighted leaf."""
    return (4 if leaf == highlight else 2), (0.25 if highlight is not None and leaf != highlight else 1.0)


def share_timelines(runs: list[tuple[str, pd.DataFrame]], leaves: list[str], highlight: str | None = None,
                    nodes: list[str] | None = None) -> go.Figure:
    """Dominant share over time per leaf, one subplot per policy, shared axes.

    ``runs`` is ``[(policy label, timeline frame)]``. Up to
    :data:`LINE_LIMIT` leaves: a step line per leaf whose ``customdata`` is
    the leaf name (hovering one is linked to the tree); more leaves:
    :func:`share_heatmaps` of ``nodes`` (tree nodes, default the leaves).
    """
    if not runs:
        return empty_figure("Run policies to see dominant shares over time.", 260)
    if len(leaves) > LINE_LIMIT:
        return share_heatmaps(runs, nodes or leaves, highlight)
    figure = make_subplots(
        rows=len(runs), cols=1, shared_xaxes=True, shared_yaxes=True, vertical_spacing=0.06,
        subplot_titles=[label for label, _ in runs],
    )
    colors = leaf_colors(leaves)
    bins = max(50, LINE_POINTS // (4 * len(runs) * max(1, len(leaves))))
    for row, (label, timeline) in enumerate(runs, start=1):
        series = entity_series(timeline, "dominant_share")
        end = float(timeline.time.max()) if len(timeline) else 0.0
        for leaf in leaves:
            times, values = series.get(leaf, (np.zeros(0), np.zeros(0)))
            last = values[-1] if len(values) else 0.0
            times, values = step_points(np.append(times, end), np.append(values, last), bins=bins)
            width, opacity = _line_style(leaf, highlight)
            figure.add_trace(
                go.Scatter(
                    x=times, y=values, mode="lines", line_shape="hv", name=leaf, legendgroup=leaf,
                    showlegend=row == 1, customdata=[leaf] * len(times),
                    line={"color": colors[leaf], "width": width}, opacity=opacity,
                    hovertemplate=f"{label}<br>{leaf}: %{{y:.3f}} at %{{x:.0f}} s<extra></extra>",
                ),
                row=row, col=1,
            )
        figure.update_yaxes(title_text="dominant share", range=[0, 1.05], row=row, col=1)
    figure.update_xaxes(title_text="time (s)", row=len(runs), col=1)
    figure.update_layout(
        height=max(260, 200 * len(runs) + 80), margin={"l": 60, "r": 20, "t": 40, "b": 40},
        hovermode="closest", legend={"orientation": "h", "y": 1.08 + 0.02 * len(runs)}, uirevision="shares",
    )
    return figure


def _row_groups(count: int) -> list[np.ndarray]:
    """Node indices of each heatmap row: one node per row up to :data:`HEATMAP_ROWS`, else neighbours together."""
    return np.array_split(np.arange(count), min(count, HEATMAP_ROWS))


def heatmap_rows(nodes: list[str]) -> tuple[list[str], dict[str, int]]:
    """Row labels of a share heatmap and the row of each node.

    One row per node up to :data:`HEATMAP_ROWS`; beyond, runs of neighbouring
    nodes (in tree order) share a row labelled ``"first … last"``.
    """
    groups = _row_groups(len(nodes))
    labels = [nodes[g[0]] if len(g) == 1 else f"{nodes[g[0]]} … {nodes[g[-1]]}" for g in groups]
    return labels, {nodes[i]: row for row, group in enumerate(groups) for i in group}


def share_matrix(timeline: pd.DataFrame, nodes: list[str], edges: np.ndarray) -> np.ndarray:
    """Dominant share per heatmap row (see :func:`heatmap_rows`) and time bin between ``edges`` (float32).

    A cell is the time-averaged share over its bin, averaged over the row's nodes.
    """
    series = entity_series(timeline, "dominant_share")
    per_node = np.zeros((len(nodes), len(edges) - 1))
    for index, node in enumerate(nodes):
        if node in series:
            per_node[index] = bin_means(*series[node], edges)
    return np.array([per_node[group].mean(axis=0) for group in _row_groups(len(nodes))], dtype=np.float32)


def _axis(kind: str, panel: int) -> str:
    """Reference of a subplot's axis: ``x``, ``x2``, ..."""
    return kind if panel == 1 else f"{kind}{panel}"


def _highlight_shapes(nodes: list[str], panels: int, highlight: str | None, end: float) -> list[dict]:
    """An outline around the highlighted node's row in every heatmap panel (none without a highlight)."""
    row = heatmap_rows(nodes)[1].get(highlight)
    if row is None:
        return []
    return [{"type": "rect", "xref": _axis("x", panel), "yref": _axis("y", panel), "x0": 0, "x1": end,
             "y0": row - 0.5, "y1": row + 0.5, "line": {"color": HIGHLIGHT, "width": 2}}
            for panel in range(1, panels + 1)]


def share_heatmaps(runs: list[tuple[str, pd.DataFrame]], nodes: list[str], highlight: str | None = None) -> go.Figure:
    """Dominant share per tree node (rows, tree order) and time (columns), one heatmap per policy.

    Cells are the time-averaged share over equal time bins (at most
    :data:`HEATMAP_COLUMNS`, fewer for many rows: :data:`HEATMAP_CELLS`);
    one colour scale, up to the highest cell of any panel. Hovering names
    the node (the row label); the highlighted node's row is outlined.
    """
    end = _end(runs) or 1.0
    labels, _ = heatmap_rows(nodes)
    edges = np.linspace(0.0, end, min(HEATMAP_COLUMNS, max(1, HEATMAP_CELLS // len(labels))) + 1)
    matrices = [share_matrix(timeline, nodes, edges) for _, timeline in runs]
    top = max(max(float(matrix.max()) for matrix in matrices), 0.01)
    figure = make_subplots(rows=len(runs), cols=1, shared_xaxes=True, vertical_spacing=0.06,
                           subplot_titles=[label for label, _ in runs])
    for row, ((label, _), matrix) in enumerate(zip(runs, matrices), start=1):
        figure.add_trace(go.Heatmap(
            x=edges, y=labels, z=matrix, zmin=0, zmax=top, colorscale="Blues", showscale=row == 1,
            colorbar={"title": "dominant share", "tickformat": ".0%", "len": 0.9},
            hovertemplate=f"{label}<br>%{{y}}: %{{z:.1%}} at %{{x:.0f}} s<extra></extra>",
        ), row=row, col=1)
        figure.update_yaxes(type="category", autorange="reversed", showticklabels=len(labels) <= LABELLED_ROWS,
                            tickfont={"size": 9}, title_text=None if len(labels) <= LABELLED_ROWS else f"{len(nodes)} nodes",
                            row=row, col=1)
    figure.update_xaxes(title_text="time (s)", row=len(runs), col=1)
    figure.update_layout(
        height=120 + 260 * len(runs), margin={"l": 100, "r": 20, "t": 40, "b": 40}, hovermode="closest",
        uirevision="shares", shapes=_highlight_shapes(nodes, len(runs), highlight, end),
    )
    return figure


def share_highlight(runs: list[tuple[str, pd.DataFrame]], leaves: list[str], highlight: str | None,
                    nodes: list[str] | None = None) -> Patch:
    """The change to a :func:`share_timelines` figure (same arguments) that moves the highlight to ``highlight``.

    Lines: every trace's width and opacity; heatmaps: the row outlines.
    """
    patch = Patch()
    if len(leaves) > LINE_LIMIT:
        patch["layout"]["shapes"] = _highlight_shapes(nodes or leaves, len(runs), highlight, _end(runs) or 1.0)
        return patch
    for index in range(len(runs) * len(leaves)):
        width, opacity = _line_style(leaves[index % len(leaves)], highlight)
        patch["data"][index]["line"]["width"] = width
        patch["data"][index]["opacity"] = opacity
    return patch


def tasks_at(runs: list[tuple[str, pd.DataFrame]], leaves: list[str], time: float) -> go.Figure:
    """Running tasks per leaf at one instant, grouped by policy.

    Beyond :data:`LINE_LIMIT` leaves only those running tasks under some
    policy at that instant are drawn (the x axis says how many of all).
    """
    if not runs:
        return empty_figure("Run policies to see the running tasks per leaf at an instant.", 300)
    counts = [(label, values_at(timeline, leaves, "running_tasks", time)) for label, timeline in runs]
    shown, note = np.arange(len(leaves)), None
    if len(leaves) > LINE_LIMIT and counts:
        shown = np.flatnonzero(np.any([values > 0 for _, values in counts], axis=0))
        note = f"{len(shown)} of {len(leaves)} jobs running"
    names = [leaves[i] for i in shown]
    figure = go.Figure([go.Bar(name=label, x=names, y=values[shown]) for label, values in counts])
    figure.update_layout(
        barmode="group", title=f"Running tasks at {time:.0f} s", height=300,
        margin={"l": 50, "r": 20, "t": 40, "b": 40}, yaxis_title="tasks", xaxis_title=note,
    )
    return figure


def decision_cost(summaries: list[tuple[str, pd.DataFrame]]) -> go.Figure:
    """Scheduler time and decisions per second per policy (from ``summary``)."""
    if not summaries:
        return empty_figure("Decision cost per policy appears after a run.", 260)
    labels = [label for label, _ in summaries]
    values = [s.set_index("metric").value for _, s in summaries]
    figure = make_subplots(rows=1, cols=2, subplot_titles=["scheduler time (ms)", "decisions per second"])
    figure.add_trace(go.Bar(x=labels, y=[v["scheduler_cpu_s"] * 1000 for v in values], showlegend=False), 1, 1)
    figure.add_trace(go.Bar(x=labels, y=[v["decisions_per_second"] for v in values], showlegend=False), 1, 2)
    figure.update_layout(height=280, margin={"l": 50, "r": 20, "t": 40, "b": 40})
    return figure


def fig4_table(timelines: dict[str, pd.DataFrame], paper_shares: dict, paper_weights: dict,
               at: float, after: float) -> list[dict]:
    """Rows "leaf | paper share | share per policy | paper weight | our MCH weight".

    ``timelines`` maps a policy label to its timeline; shares are read at
    ``at`` (all leaves active) and, for the ``after`` column, after n12 left.
    """
    rows = []
    mch = timelines.get("MCH")
    for leaf, paper in paper_shares.items():
        row = {"leaf": leaf, "paper share": round(paper, 3)}
        for label, timeline in timelines.items():
            row[label] = round(step_value(timeline, leaf, "dominant_share", at), 3)
        row["paper MCH weight"] = paper_weights[leaf]
        row["our MCH weight"] = round(step_value(mch, leaf, "flat_weight", at), 3) if mch is not None else None
        row[f"MCH at {after:.0f} s"] = round(step_value(mch, leaf, "dominant_share", after), 3) if mch is not None else None
        rows.append(row)
    return rows
