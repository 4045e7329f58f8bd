"""Charts that behave in front of an audience: a sentence instead of bare axes, reports that carry the charts."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from components.figures.compare import overlay_figure
from components.figures.fairshare import tasks_at
from components.services import brief as briefs
from components.services.report import html_report
from components.services.runs import ResultCache
from components.widgets.fields import PLACEHOLDER, graph

BASE = {"engine": "batch", "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}, "name": "cve"}


def _sentence(figure) -> str:
    assert not figure.data and figure.layout.xaxis.visible is False   # no bare axes
    return figure.layout.annotations[0].text


def test_charts_say_what_would_fill_them_before_anything_ran():
    assert _sentence(overlay_figure([], None, None)).startswith("Choose runs")
    assert _sentence(tasks_at([], ["a", "b"], 0.0)).startswith("Run policies")
    chart = graph("some-chart")   # plain figure data in a page's layout: a valid figure once Plotly reads it
    assert _sentence(go.Figure(chart.figure)) == PLACEHOLDER
    assert chart.figure["layout"]["template"]["layout"]["plot_bgcolor"] == "white"   # no bare axes on grey


@pytest.fixture
def easy(tmp_path):
    result, _ = ResultCache(tmp_path).run({**BASE, "policy": "easy"})
    return result


def test_a_permalinks_report_carries_the_runs_charts_and_opens_offline(easy):
    figures = briefs.timeline_figures([("cve", easy)], 2)
    assert len(figures) == 2 and all(figure.data for figure in figures)
    text = html_report("EASY", [("EASY", easy)], figures, "now")
    charts = text.split("<h2>Charts</h2>")[1].split("<h2>Scenarios</h2>")[0]
    assert charts.count('class="plotly-graph-div"') == 2
    # plotly.js inlined once; nothing fetched from the network
    assert text.count("plotly.js v") >= 1 and not re.search(r"<script[^>]+src=", text)
    assert "cdn.plot.ly" not in text.split("<h2>Charts</h2>")[0]


def test_the_brief_carries_the_headline_the_scenario_in_words_charts_and_the_permalink(easy):
    text = briefs.brief_html(briefs.run_brief(easy, f"http://host/scenario/{easy.scenario_hash}", "now"))
    assert "<title>EASY · cve</title>" in text
    assert "EASY: mean wait 6.8 s, mean bounded slowdown" in text and "CPU utilisation 75.8%" in text
    assert "<dt>Workload</dt><dd>4 jobs (cve)</dd>" in text and "<dt>Hardware</dt><dd>4 CPUs, 1 cluster</dd>" in text
    assert text.count('class="plotly-graph-div"') == 2     # the metrics that change: CPUs in use, queue length
    assert f"href='http://host/scenario/{easy.scenario_hash}'" in text
    assert not re.search(r"<script[^>]+src=", text)


def test_overlay_titles_and_axes_read_as_words(easy):
    figure = overlay_figure([("EASY", easy)], "used_cpus", "__sum__")
    assert figure.layout.title.text == "CPUs in use · all together"
    assert figure.layout.yaxis.title.text == "CPUs in use"
