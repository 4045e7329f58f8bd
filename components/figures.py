"""Pure figure builders for the fair-sharing page: frames in, figures out."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

PALETTE = qualitative.D3 + qualitative.Set2


def leaf_colors(leaves: list[str]) -> dict[str, str]:
    """One stable colour per leaf, shared by every panel."""
    return {leaf: PALETTE[i % len(PALETTE)] for i, leaf in enumerate(leaves)}


def step_value(timeline: pd.DataFrame, entity: str, metric: str, time: float) -> float:
    """Value of a timeline step function at ``time`` (0 before its first row)."""
    rows = timeline[(timeline.entity == entity) & (timeline.metric == metric) & (timeline.time <= time)]
    return float(rows.value.iloc[-1]) if len(rows) else 0.0


def empty_figure(message: str) -> go.Figure:
    """A blank figure that says what to do to fill it."""
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_layout(height=260, xaxis={"visible": False}, yaxis={"visible": False},
                         margin={"l": 20, "r": 20, "t": 20, "b": 20})
    return figure


def share_timelines(runs: list[tuple[str, pd.DataFrame]], leaves: list[str], highlight: str | None = None) -> go.Figure:
    """Dominant share over time per leaf, one subplot per policy, shared axes.

    ``runs`` is ``[(policy label, timeline frame)]``; traces carry the leaf
    name in ``customdata`` so hovering one can be linked to the tree.
    """
    if not runs:
        return empty_figure("Run policies to see dominant shares over time.")
    figure = make_subplots(
        rows=len(runs), cols=1, shared_xaxes=True, shared_yaxes=True, vertical_spacing=0.06,
        subplot_titles=[label for label, _ in runs],
    )
    colors = leaf_colors(leaves)
    for row, (label, timeline) in enumerate(runs, start=1):
        shares = timeline[timeline.metric == "dominant_share"]
        end = float(timeline.time.max()) if len(timeline) else 0.0
        for leaf in leaves:
            rows = shares[shares.entity == leaf]
            times = list(rows.time) + [end]
            values = list(rows.value) + ([float(rows.value.iloc[-1])] if len(rows) else [0.0])
            faded = highlight is not None and leaf != highlight
            figure.add_trace(
                go.Scatter(
                    x=times, y=values, mode="lines", line_shape="hv", name=leaf, legendgroup=leaf,
                    showlegend=row == 1, customdata=[leaf] * len(times),
                    line={"color": colors[leaf], "width": 4 if leaf == highlight else 2},
                    opacity=0.25 if faded else 1.0,
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


def tasks_at(runs: list[tuple[str, pd.DataFrame]], leaves: list[str], time: float) -> go.Figure:
    """Running tasks per leaf at one instant, grouped by policy."""
    figure = go.Figure()
    for label, timeline in runs:
        figure.add_trace(
            go.Bar(name=label, x=leaves, y=[step_value(timeline, leaf, "running_tasks", time) for leaf in leaves])
        )
    figure.update_layout(
        barmode="group", title=f"Running tasks at {time:.0f} s", height=300,
        margin={"l": 50, "r": 20, "t": 40, "b": 40}, yaxis_title="tasks",
    )
    return figure


def decision_cost(summaries: list[tuple[str, pd.DataFrame]]) -> go.Figure:
    """Scheduler time and decisions per second per policy (from ``summary``)."""
    if not summaries:
        return empty_figure("Decision cost per policy appears after a run.")
    labels = [label for label, _ in summaries]
    values = [s.set_index("metric").value for _, s in summaries]
    figure = make_subplots(rows=1, cols=2, subplot_titles=["scheduler time (ms)", "decisions per second"])
    figure.add_trace(go.Bar(x=labels, y=[v["scheduler_seconds"] * 1000 for v in values], showlegend=False), 1, 1)
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
