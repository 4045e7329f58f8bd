"""Compare's overlay and run labels, the Site charts' lines and a wait reason's blocking job, as a first-time user reads them."""

from __future__ import annotations

import pandas as pd

from components.figures.compare import LINE_NARROWEST, LINE_WIDEST, SUM, overlay_figure


class Run:
    def __init__(self, rows):
        self.timeline = pd.DataFrame(rows, columns=["time", "entity", "metric", "value"])
        self.scenario = {"engine": "batch"}


def _legend(figure) -> list[str]:
    return [trace.name for trace in figure.data if trace.showlegend is not False]


def test_runs_with_the_same_line_are_one_legend_entry_named_by_both():
    same = [(0.0, "q", "queue_length", 1.0), (60.0, "q", "queue_length", 3.0), (120.0, "q", "queue_length", 0.0)]
    other = [(0.0, "q", "queue_length", 2.0), (60.0, "q", "queue_length", 0.0)]
    runs = [("#1 easy", Run(same)), ("#2 cons", Run(same)), ("#3 fcfs", Run(other))]
    figure = overlay_figure(runs, "queue_length", "q")
    assert _legend(figure) == ["#1 easy = #2 cons", "#3 fcfs"]
    assert figure.layout.showlegend is True   # shown even when the runs' lines are one
    assert figure.data[0].hovertemplate.startswith("#1 easy = #2 cons<br>")
    # Widest first: the line on top is narrower, so one that follows another still shows along its edges.
    assert [trace.line.width for trace in figure.data] == [LINE_WIDEST, LINE_NARROWEST]
    assert all(trace.line.shape == "hv" for trace in figure.data)


def test_a_run_without_the_series_gets_no_legend_entry_and_the_title_names_it():
    one = [(0.0, "user_1", "running_jobs", 1.0), (30.0, "user_1", "running_jobs", 0.0)]
    two = [(0.0, "user_2", "running_jobs", 4.0)]
    figure = overlay_figure([("#1 easy", Run(one)), ("#2 cons", Run(two))], "running_jobs", "user_1")
    assert _legend(figure) == ["#1 easy"]
    assert "(not in #2 cons)" in figure.layout.title.text
    # Summed over every entity both runs have a line: two entries.
    assert _legend(overlay_figure([("#1 easy", Run(one)), ("#2 cons", Run(two))], "running_jobs", SUM)) == [
        "#1 easy", "#2 cons"]


def test_a_reason_without_a_blocking_job_names_none_whatever_the_column_holds():
    from components.figures.trust import job_reasons

    for missing in (pd.Categorical([None, "b"]), pd.Series([None, "b"], dtype="string"), ["", "b"]):
        pending = pd.DataFrame({"job_id": ["a", "a"], "from_time": [0.0, 50.0], "to_time": [50.0, 100.0],
                                "reason": pd.Categorical(["resources", "reservation"]), "blocking_job": missing})
        tips = {trace.name: list(trace.customdata[:, 2]) for trace in job_reasons(pending, "a").data}
        assert tips == {"resources": [""], "reservation": ["<br>blocking job b"]}


def test_site_charts_draw_a_line_the_same_under_two_runs_once_and_keep_different_ones():
    import plotly.graph_objects as go

    from components.figures.site import one_entry_per_line

    figure = go.Figure([go.Scatter(x=[0, 1], y=[1, 2], name=name, line={"color": colour},
                                   hovertemplate=f"{name}<br>%{{y}}<extra></extra>")
                        for name, colour in (("g · FCFS", "red"), ("g · H-DRF", "red"), ("h · FCFS", "blue"))])
    figure.add_trace(go.Scatter(x=[0, 1], y=[1, 3], name="g · DRF", line={"color": "red"}))
    one_entry_per_line(figure)
    assert [trace.name for trace in figure.data] == ["g · FCFS = H-DRF", "h · FCFS", "g · DRF"]
    assert figure.data[0].hovertemplate.startswith("g · FCFS = H-DRF<br>")


def test_a_run_without_a_name_is_told_by_its_size_not_its_hash_twice():
    from components.pages.compare.table import run_label

    entry = {"engine": "site", "policy": "fcfs", "name": "", "hash": "6145f84c" * 8, "jobs": 400, "seed": 1}
    assert run_label(entry) == "FCFS · 400 jobs · Site study · seed 1 [6145f8]"


def test_compare_with_no_run_chosen_shows_one_sentence_and_no_empty_table():
    from components.pages.compare import callbacks
    from components.pages.compare.paired import PROMPT, QUIET_HEIGHT, paired_view

    class NoRuns:
        def listing(self):
            return []

    data, columns, *_ = callbacks.compared(NoRuns(), [], None)
    assert data == [] and columns == []
    text, histogram, users = paired_view([])
    assert text == PROMPT   # said once, above the charts, which stay small and silent
    assert all(f.layout.height == QUIET_HEIGHT and not f.layout.annotations[0].text for f in (histogram, users))
