"""The Gallery's small charts: the paper's numbers and ours side by side, one panel per quantity's unit.

A card's chart is a list of :class:`Point` (a quantity, the paper's number
where the paper gives one, ours, and whether they agree) and of
:class:`Reference` lines (a bound the paper states, "≤ 1", rather than a
number). Ours is coloured by agreement: blue agrees, red does not, amber
under a reading of the paper named on the card; grey bars are the paper's.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

PAPER_COLOUR = "#9aa5b1"
AGREES, DISAGREES, READING = "#2f7bbf", "#b42318", "#9a6700"
HEIGHT = 260


class Point(NamedTuple):
    """One bar pair: ``quantity`` on the ``panel`` (its axis title), the paper's value (or None) and ours."""

    panel: str
    quantity: str
    paper: float | None
    ours: float
    agrees: bool | None = True      #: None: a reading of the paper differs (amber)


class Reference(NamedTuple):
    """A horizontal line on ``panel`` at ``value``: a bound the paper states, named by ``text``."""

    panel: str
    value: float
    text: str


def _colour(agrees: bool | None) -> str:
    return AGREES if agrees else (READING if agrees is None else DISAGREES)


def paper_vs_ours(points: Sequence[Point], references: Sequence[Reference] = (), *,
                  log_panels: Sequence[str] = ()) -> go.Figure:
    """Grouped bars, paper (grey) beside ours (coloured by agreement), one subplot per panel in first-seen order.

    ``log_panels`` are drawn on a log axis (values spanning decades, e.g. slowdowns).
    """
    panels = list(dict.fromkeys([p.panel for p in points] + [r.panel for r in references]))
    if not panels:
        figure = go.Figure()
        figure.add_annotation(text="The paper's numbers and ours, once the card's runs are done.", showarrow=False,
                              x=0.5, y=0.5, xref="paper", yref="paper", font={"color": "#5b6b7b"})
        figure.update_layout(height=HEIGHT, xaxis={"visible": False}, yaxis={"visible": False},
                             template="plotly_white", margin={"l": 10, "r": 10, "t": 10, "b": 10})
        return figure
    figure = make_subplots(rows=1, cols=len(panels), horizontal_spacing=0.14 if len(panels) > 1 else 0.0)
    legend = {"paper": False, "ours": False}
    for column, panel in enumerate(panels, start=1):
        own = [p for p in points if p.panel == panel]
        quantities = [p.quantity for p in own]
        with_paper = [p for p in own if p.paper is not None]
        if with_paper:
            figure.add_trace(go.Bar(
                x=[p.quantity for p in with_paper], y=[p.paper for p in with_paper], name="paper",
                marker_color=PAPER_COLOUR, legendgroup="paper", showlegend=not legend["paper"],
                hovertemplate="%{x}<br>paper: %{y:.4g}<extra></extra>"), row=1, col=column)
            legend["paper"] = True
        if own:
            figure.add_trace(go.Bar(
                x=quantities, y=[p.ours for p in own], name="ours", marker_color=[_colour(p.agrees) for p in own],
                legendgroup="ours", showlegend=not legend["ours"],
                hovertemplate="%{x}<br>ours: %{y:.4g}<extra></extra>"), row=1, col=column)
            legend["ours"] = True
        for reference in (r for r in references if r.panel == panel):
            figure.add_hline(y=reference.value, line={"dash": "dash", "color": "#5b6b7b", "width": 1},
                             annotation_text=reference.text, annotation_position="top right",
                             annotation_font={"size": 10, "color": "#1b2733"},
                             annotation_bgcolor="rgba(255,255,255,0.85)", row=1, col=column)
        figure.update_yaxes(title_text=panel, title_font={"size": 11}, row=1, col=column,
                            **({"type": "log", "dtick": 1} if panel in log_panels else {"type": "linear"}))
        figure.update_xaxes(tickfont={"size": 10}, tickangle=0 if len(quantities) <= 4 else -40, row=1, col=column)
    figure.update_layout(height=HEIGHT, template="plotly_white", barmode="group", bargap=0.25,
                         margin={"l": 50, "r": 10, "t": 10, "b": 40},
                         legend={"orientation": "h", "x": 0, "y": 1.12, "font": {"size": 11}})
    return figure
