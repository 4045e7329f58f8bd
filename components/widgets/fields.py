"""Form pieces every page builds the same way: a labelled field, an upload box, a chart, message spans."""

from __future__ import annotations

from dash import dcc, html

from ..chart_config import GRAPH_CONFIG
from ..figures.common import blank

#: What a chart says before anything ran, instead of bare axes.
PLACEHOLDER = "Nothing to show yet: this chart fills in after a run."


def field(label: str, component, hint: str | None = None) -> html.Label:
    """``component`` under its ``label``, with an optional ``hint`` below it."""
    children = [html.Span(label), component]
    if hint:
        children.append(html.Small(hint, className="hint"))
    return html.Label(children, className="field")


def upload_box(component_id, text: str) -> dcc.Upload:
    """A drop zone for one file, saying what it takes."""
    return dcc.Upload(id=component_id, children=html.Div([text, html.Br(), html.Small("drag and drop or click")]),
                      className="upload-box", multiple=False)


def graph(component_id, placeholder: str = PLACEHOLDER, height: int | None = None,
          placeholder_height: int = 300) -> dcc.Graph:
    """A chart with the mode bar every chart shows (:data:`components.chart_config.GRAPH_CONFIG`).

    Until a callback draws it, it shows ``placeholder`` instead of empty axes
    (``placeholder_height`` pixels tall).
    With ``height`` (pixels) its box is that tall whatever Plotly draws in it,
    and clips the rest: a plot laid out before its figure's height arrived
    (seen at 804 px) cannot spill over, or take the clicks of, what lies below.
    """
    if height is None:
        return dcc.Graph(id=component_id, config=GRAPH_CONFIG, figure=blank(placeholder, placeholder_height))
    return dcc.Graph(id=component_id, config=GRAPH_CONFIG, figure=blank(placeholder, height),
                     style={"height": f"{height}px", "overflow": "hidden"})


def error(text) -> html.Span:
    """A message saying what went wrong (red)."""
    return html.Span(str(text), className="error")


def ok(text) -> html.Span:
    """A message saying what was done (green)."""
    return html.Span(str(text), className="ok")
