"""Every chart keeps a site's data on the machine: no "Share chart" (Plotly Cloud) button anywhere."""

from __future__ import annotations

import pytest
from dash import dcc

from components.chart_config import GRAPH_CONFIG
from components.pages import batch as batch_page
from components.pages import compare as compare_page
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from components.pages import scenario as scenario_page
from components.pages import sweeps as sweep_page
from components.services import report


def graphs(component):
    if isinstance(component, dcc.Graph):
        yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            yield from graphs(child)


@pytest.mark.parametrize("layout", [batch_page.layout.layout, compare_page.layout.layout, elastic_page.layout.layout,
                                    fairshare_page.layout.layout, network_page.layout.layout, sweep_page.layout.layout,
                                    lambda: scenario_page.layout.found("0" * 64)])
def test_every_chart_on_a_page_has_no_cloud_button(layout):
    found = list(graphs(layout()))
    assert found and all(graph.config == GRAPH_CONFIG for graph in found)
    assert GRAPH_CONFIG["showSendToCloud"] is False and GRAPH_CONFIG["displaylogo"] is False


def test_report_charts_have_no_cloud_button():
    import plotly.graph_objects as go

    text = report.html_report("t", [], [go.Figure(go.Scatter(x=[0], y=[1]))], "now")
    assert '"showSendToCloud": false' in text.replace("\\u0022", '"') or '"showSendToCloud":false' in text
