"""The "Audit" panel: does the log look like the machine? Shown as soon as a trace is chosen or uploaded.

A page places :func:`section` and calls :func:`register` with the inputs
that name its trace and hardware and a ``resolve(*values) -> (Audit,
label)`` of its own (the page knows where its files and clusters come
from; :func:`audit_of` does the rest). One callback fills the sentence,
the table (warnings first and highlighted) and the chart of CPUs in use
(downsampled: the response stays a few hundred KB for any log). A trace
that cannot be read shows the reader's message instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from dash import Input, Output, dash_table, html
from dash.exceptions import PreventUpdate

from sched_engine import ScenarioError
from sched_engine.analysis.audit import Audit, audit
from sched_engine.batch import cluster_cpus

from ..figures import audit as figures
from ..figures.common import blank
from .fields import error, graph

HEIGHT = 320


@dataclass(frozen=True)
class Ids:
    """The panel's component ids on one page: ``<page>-audit-<thing>-<widget>``."""

    page: str

    @property
    def summary(self) -> str:
        return f"{self.page}-audit-summary-text"

    @property
    def table(self) -> str:
        return f"{self.page}-audit-table"

    @property
    def graph(self) -> str:
        return f"{self.page}-audit-usage-graph"


def audit_of(workload, clusters: list[dict] | None, header_lines) -> Audit:
    """The audit of a read workload on ``clusters`` (None: no hardware known)."""
    sizes = [cluster_cpus(c) for c in clusters or []]
    return audit(workload.jobs, sum(sizes) or None, largest_cluster_cpus=max(sizes) if sizes else None,
                 header=workload.header, header_lines=header_lines, dropped=workload.dropped + workload.skipped_lines)


def view(result: Audit, label: str) -> tuple:
    """``(sentence, table rows, figure)`` of an audit."""
    shown = result.grouped   # the checks a log cannot give (no recorded waits, ...) said once, in one row
    return (figures.summary_sentence(shown, label), figures.table_rows(shown),
            figures.usage_figure(result.usage, result.hardware_cpus, result.capacity_cpus, HEIGHT))


def panel(resolve, *values) -> tuple:
    """The callback: the audit of what ``resolve`` finds for the page's values, or the reason there is none."""
    try:
        found = resolve(*values)
    except ScenarioError as exc:
        return error(f"No audit: {exc}"), [], blank("no audit: the trace cannot be read", HEIGHT)
    if found is None:
        raise PreventUpdate
    return view(*found)


def section(ids: Ids) -> html.Section:
    return html.Section(
        [
            html.H3("Audit: does this log look like the machine?"),
            html.P("The log's own schedule (each job from its submission plus its recorded wait) against the "
                   "hardware a run uses; warnings first.", className="hint"),
            html.P(id=ids.summary, className="headline"),
            dash_table.DataTable(
                id=ids.table, columns=[{"name": c, "id": c} for c in figures.COLUMNS], data=[], page_size=15,
                style_data_conditional=figures.WARNING_STYLE, style_table={"overflowX": "auto"},
                style_cell={"fontFamily": "inherit", "padding": "3px", "textAlign": "left", "whiteSpace": "normal",
                            "height": "auto", "maxWidth": "640px"}),
            graph(ids.graph, "The log's CPUs in use show here once a trace is read.", height=HEIGHT),
        ],
        className="panel",
    )


def register(app, ids: Ids, inputs: list[Input], resolve) -> None:
    app.callback(Output(ids.summary, "children"), Output(ids.table, "data"), Output(ids.graph, "figure"),
                 *inputs)(partial(panel, resolve))
