"""The Sweeps page's layout: the sweep form with its point count and run controls, then the comparison."""

from __future__ import annotations

from dataclasses import replace

from dash import dash_table, dcc, html

from sched_engine.core.inputs import UPLOAD
from sched_engine.sweeps import KINDS

from ...services import prepared
from ...widgets.fields import error, graph
from . import ids
from .form import FORM, Param, form_values, linked_trace


def widget(kind: str, param: Param, value):
    component_id = {"type": ids.PARAM, "kind": kind, "name": param.name}
    if param.widget in ("number", "integer"):
        return dcc.Input(id=component_id, type="number", value=value, debounce=True, persistence=True,
                         step=1 if param.widget == "integer" else "any", min=0)
    if param.widget in ("numbers", "limits"):
        return dcc.Input(id=component_id, type="text", value=value, debounce=True, persistence=True)
    if param.widget == "checklist":
        return dcc.Checklist(id=component_id, options=param.options, value=value, persistence=True,
                             className="checklist inline")
    if param.widget == "radio":
        return dcc.RadioItems(id=component_id, options=param.options, value=value, persistence=True,
                              className="checklist inline")
    return dcc.Dropdown(id=component_id, options=param.options, value=value, clearable=False, persistence=True,
                        className="narrow")


def param_field(kind: str, param: Param, value):
    children = [html.Span(param.label), widget(kind, param, value)]
    if param.hint:
        children.append(html.Small(param.hint, className="hint"))
    wide = {"gridColumn": "span 2"} if param.widget == "dropdown" else None
    return html.Label(children, className="field", style=wide)


def shown(shown: bool) -> dict:
    """A parameter box's style: the grid's own display, or none (a class's display would beat ``hidden``)."""
    return {} if shown else {"display": "none"}


def sweep_table(component_id, **kwargs):
    return dash_table.DataTable(id=component_id, data=[], columns=[], sort_action="native",
                                style_cell={"fontFamily": "inherit", "textAlign": "right"},
                                style_header={"whiteSpace": "normal", "fontWeight": "600"},
                                style_table={"overflowX": "auto"}, **kwargs)


def layout(kind: str | None = None, trace: str | None = None, sweep: str | None = None) -> html.Div:
    """The page; ``kind`` (from ``/sweeps?kind=...``, e.g. a gallery card's link) is the sweep shown first,
    with ``trace`` (``sample:<name>`` or, where the kind takes uploads, ``upload:<sha256>``: the batch page's
    Calibrate link) as its workload. Which uploads the user may choose, a callback tells
    (:func:`.callbacks.workload_choices`): the layout knows no user. ``sweep`` (``/sweeps?sweep=<key>``, the
    Workspace's link) a stored sweep to show."""
    first = kind if kind in FORM else next(iter(FORM))
    values = {name: form_values(name) for name in FORM}
    workload, link_message = linked_trace(first, trace)
    params = dict(FORM)
    if workload is not None:
        values[first]["trace"] = workload
    if workload is not None and workload.startswith(UPLOAD):   # named so until the user's choices arrive
        option = {"label": f"upload {workload[len(UPLOAD):][:12]}…", "value": workload}
        params[first] = [replace(p, options=[*p.options, option]) if p.name == "trace" else p for p in FORM[first]]
    return html.Div(
        [
            dcc.Store(id=ids.LAST, storage_type="local", data=None),
            dcc.Store(id=ids.OPEN, data={"key": sweep} if isinstance(sweep, str) else None),
            html.Div(
                [
                    html.H2("Sweeps"),
                    html.P("Run one experiment over many parameter values -- the YARN-ME Table 2 sweep, Local "
                           "Search over seeds, Libra over arrival intervals or over data volume and slots, the "
                           "batch model's settings against your own log's waits -- on local processes (Celery "
                           "workers when REDIS_URL is set), then compare the runs in one table and plot."),
                ],
                className="page-head",
            ),
            html.Section(
                [
                    html.H3("Sweep"),
                    dcc.RadioItems(id=ids.KIND, value=first, persistence=True, className="checklist inline",
                                   options=[{"label": k.label, "value": k.name} for k in KINDS.values()]),
                    html.P(id=ids.KIND_HINT, className="hint"),
                    html.Div(link_message and error(link_message), id=ids.LINK_MSG, className="message"),
                    *[html.Div([param_field(kind, p, values[kind][p.name]) for p in fields],
                               id={"type": ids.PARAM_BOX, "kind": kind}, className="inline-fields",
                               style=shown(kind == first))
                      for kind, fields in params.items()],
                    html.Div(id=ids.POINTS, className="message"),
                    html.Div([html.Button("Run", id=ids.RUN, className="primary"),
                              html.Button("Cancel", id=ids.CANCEL, disabled=True)], className="button-row"),
                    html.Div([html.Progress(id=ids.PROGRESS, value="0", max="1"),
                              html.Span(id=ids.PROGRESS_TEXT, className="hint")], className="button-row"),
                    html.Div(id=ids.RUN_MSG, className="message"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3(id=ids.HEADING, children="Comparison"),
                    html.P(id=ids.VERDICT, className="headline"),
                    sweep_table(ids.SUMMARY),
                    html.Div([html.Span("Plot:", className="hint"),
                              dcc.Dropdown(id=ids.METRIC, clearable=False, className="wide")], className="button-row"),
                    html.Div(graph(ids.GRAPH), className="graph-box"),
                    html.Details([html.Summary("Every point"), sweep_table(ids.TABLE, page_size=15)]),
                    html.Div([html.Span("Export:", className="hint"),
                              html.Button("sweep.csv (points)", id={"type": ids.EXPORT_BUTTONS, "table": "points"}),
                              html.Button("summary.csv (comparison)", id={"type": ids.EXPORT_BUTTONS, "table": "summary"}),
                              prepared.link(ids.DOWNLOAD)],   # beside the buttons: why a file was not saved
                             className="button-row export"),
                ],
                className="panel",
            ),
        ],
        className="sweep-page",
    )
