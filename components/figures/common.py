"""What every figure module shares."""

from __future__ import annotations

import plotly.graph_objects as go

#: The height (px) of a figure with nothing to draw yet that says so in one line: never a frame of empty axes.
ONE_LINE = 80


def blank(message: str, height: int = 300) -> dict:
    """A blank figure as plain data, ``height`` pixels tall, that says what would fill it: a chart's placeholder
    in a page's layout (no ``go.Figure`` validation: about 0.05 ms instead of 1 ms per chart).

    Its template is what ``plotly_white`` gives a figure with no data and hidden axes (white paper and plot,
    its text colour), not ``plotly_white`` itself: copying that template into a figure costs about 13 ms of CPU
    and 6.5 KB of JSON, and every page's layout holds one blank figure per chart (bench/page_cpu.py: the Batch
    page's 13 charts took 200 ms of CPU per page load).
    """
    template = {"layout": {"paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}}}
    return {"data": [], "layout": {
        "annotations": [{"text": message, "showarrow": False, "x": 0.5, "y": 0.5, "xref": "paper", "yref": "paper",
                         "font": {"color": "#5b6b7b"}}],
        "height": height, "xaxis": {"visible": False}, "yaxis": {"visible": False},
        "margin": {"l": 20, "r": 20, "t": 30, "b": 20}, "template": template}}


def empty_figure(message: str, height: int = 300) -> go.Figure:
    """:func:`blank` as a figure, for a figure builder that has nothing to draw."""
    return go.Figure(blank(message, height))
