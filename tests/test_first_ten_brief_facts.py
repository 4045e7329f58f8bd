"""The brief: one legend entry per line one can see, and the run-time estimates each run used, from its model."""

from __future__ import annotations

import pytest

from components.figures import headlines
from components.services import brief as briefs
from components.services.report import LINE_NARROWEST, LINE_WIDEST, estimates_fact, visible_lines
from components.services.runs import ResultCache

MODEL = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 200}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cache = ResultCache(tmp_path_factory.mktemp("results"))
    found = {}
    for policy, estimates in (("fcfs", "perfect"), ("easy", "trace")):
        result, _ = cache.run({"engine": "batch", "policy": policy, "seed": 1, "name": "est",
                               "model": {**MODEL, "estimates": estimates}})
        found[policy] = result
    return found


def _legend(figure) -> list[str]:
    """The legend entries the figure draws (a trace shows in it unless it says it does not)."""
    return [trace.name for trace in figure.data if trace.name and trace.showlegend is not False]


def test_runs_with_the_same_line_share_one_legend_entry_and_the_others_each_show(runs):
    loaded = [({"label": "FCFS", "hash": runs["fcfs"].scenario_hash}, runs["fcfs"]),
              ({"label": "EASY", "hash": runs["easy"].scenario_hash}, runs["easy"]),
              ({"label": "EASY again", "hash": runs["easy"].scenario_hash}, runs["easy"])]
    brief = briefs.page_brief(loaded, headlines.batch, "http://host", "now")
    timeline = brief.figures[-1]
    assert [trace.name for trace in timeline.data] == ["FCFS", "EASY = EASY again"]
    assert timeline.data[1].hovertemplate.startswith("EASY = EASY again<br>")
    # Widest first: the line drawn on top is narrower, so the one below shows along its edges.
    assert [trace.line.width for trace in timeline.data] == [LINE_WIDEST, LINE_NARROWEST]
    # On the PDF page every chart's lines are one legend entry each, over the whole page.
    assert _legend(briefs.brief_figure(brief)) == ["FCFS", "EASY = EASY again"]


def test_one_run_is_one_line_and_one_entry(runs):
    brief = briefs.run_brief(runs["easy"], "http://host/scenario/x", "now")
    assert _legend(briefs.brief_figure(brief)) == ["est"]
    assert all(len(figure.data) == 1 and figure.data[0].line.width == LINE_NARROWEST for figure in brief.figures)


def test_each_brief_says_which_run_time_estimates_were_used(runs):
    one = dict(briefs.run_brief(runs["easy"], "http://host/scenario/x", "now").facts)
    assert one["Run-time estimates"] == "the users' requested times (from the log)"
    perfect = dict(briefs.run_brief(runs["fcfs"], "http://host/scenario/x", "now").facts)
    assert perfect["Run-time estimates"] == "perfect (each job's actual run time)"
    both = [({"label": "FCFS", "hash": runs["fcfs"].scenario_hash}, runs["fcfs"]),
            ({"label": "EASY", "hash": runs["easy"].scenario_hash}, runs["easy"])]
    page = dict(briefs.page_brief(both, headlines.batch, "http://host", "now").facts)
    assert page["Run-time estimates"] == ("FCFS: perfect (each job's actual run time); "
                                          "EASY: the users' requested times (from the log)")


def test_an_engine_without_estimates_says_nothing_of_them():
    class Result:
        scenario = {"engine": "network", "model": {"machines": 4}}
    assert estimates_fact([("libra", Result())]) == []


def test_a_single_line_keeps_the_narrow_width():
    import plotly.graph_objects as go
    figure = visible_lines(go.Figure(go.Scatter(x=[0, 1], y=[1, 2], name="a", line={"width": 3})))
    assert figure.data[0].line.width == LINE_NARROWEST
