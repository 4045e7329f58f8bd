"""What every figure module shares."""

from __future__ import annotations

import plotly.graph_objects as go


def empty_figure(message: str, height: int = 300) -> go.Figure:
    """A blank figure, ``height`` pixels tall, that says what would fill it."""
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                          font={"color": "#5b6b7b"})
    figure.update_layout(height=height, xaxis={"visible": False}, yaxis={"visible": False},
                         margin={"l": 20, "r": 20, "t": 30, "b": 20}, template="plotly_white")
    return figure
