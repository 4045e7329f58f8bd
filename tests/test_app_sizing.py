"""The Batch page's "How much hardware do I need?": the search from the shown run, its probes, sentence and CSV."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest

from components.figures import sizing as figures
from components.pages.batch import sizing
from components.services.runs import ResultCache
from sched_engine import run_scenario

DATA = Path(__file__).parent / "data" / "batch"
TRACE = str(DATA / "pending_four.swf")


@pytest.fixture
def shown(tmp_path):
    """A cache holding the 4-job EASY run on the trace header's 10 CPUs, and its run record."""
    cache = ResultCache(tmp_path / "results")
    result, _ = cache.run({"engine": "batch", "policy": "easy", "model": {"trace": {"path": TRACE}}})
    record = {"scenario": "BASIC", "label": "EASY", "seed": 1, "hash": result.scenario_hash, "hardware": "10 CPUs"}
    return cache, [record]


def _search(cache, records, metric="mean_wait_s", bound=0, mode="pool"):
    reports = []
    out = sizing.search(cache, reports.append, 1, metric, bound, mode, records, "BASIC", "EASY")
    return out, reports


def test_the_search_sizes_the_shown_run_and_reports_each_probe_as_it_finishes(shown):
    cache, records = shown
    (record, message), reports = _search(cache, records)
    # Jobs of 6, 8, 4 and 2 CPUs arrive at 0, 1, 2 and 3 s and run 50-300 s: no job waits only when
    # all 20 CPUs fit at once; on 19, job 4 waits.
    assert record["answer"] == 20 and record["today"] == 10
    assert figures.sentence(record) == "A mean wait ≤ 0 s needs 20 CPUs (today 10)."
    assert record["baseline"] == "Baseline: BASIC · EASY · seed 1 on 10 CPUs"
    probes = {p["size"]: p for p in record["probes"]}
    assert probes[20]["holds"] and not probes[19]["holds"] and probes[19]["metric"] > 0
    # The probes went to the page one by one, in the order run, before the search ended.
    counts = [len(live["probes"]) for live, *_ in reports]
    assert counts == sorted(counts) and counts[-1] == len(record["probes"])
    assert [p["size"] for p in reports[-1][0]["probes"]] == [p["size"] for p in record["probes"]]
    assert all(report[0]["metric"] == "mean_wait_s" and report[2] == "100" for report in reports)
    assert "probes:" in message.children and "from the cache" in message.children
    # The answer checked by hand: one CPU fewer misses the target.
    below = run_scenario({"engine": "batch", "policy": "easy", "model": {
        "trace": {"path": TRACE}, "clusters": [{"name": "pool", "machines": 19, "cpus_per_machine": 1}]}})
    assert below.summary_value("mean_wait_s") > 0


def test_a_second_search_comes_from_the_cache(shown):
    cache, records = shown
    first, _ = _search(cache, records)
    (again, message), _ = _search(cache, records)
    assert again == first[0]
    assert message.children.startswith(f"{len(again['probes'])} probes: 0 simulated")


def test_the_load_a_machine_absorbs(shown):
    cache, records = shown
    # As logged the mean wait is 62 s; arrivals spread out (a factor below 1) wait less.
    (record, _), _ = _search(cache, records, bound=30, mode="load")
    assert record["today"] == 1.0
    assert 0.01 < record["answer"] < 1
    probes = sorted(record["probes"], key=lambda p: p["size"])
    assert all(p["holds"] == (p["size"] <= record["answer"]) for p in probes if not p["non_monotone"])
    assert figures.sentence(record).startswith("Today's machine keeps a mean wait ≤ 30 s up to 0.")


@pytest.mark.parametrize("metric, bound, mode, words", [
    ("utilisation", 0.5, "pool", "choose one of Mean wait"),
    ("mean_wait_s", "abc", "pool", "bound: enter a number"),
    ("mean_wait_s", -1, "pool", "at least 0"),
    ("mean_wait_s", 60, "scale", "scaling needs the clusters"),
    ("mean_wait_s", 60, "bigger", "choose one of pool"),
])
def test_a_refused_search_says_why_and_keeps_the_last_answer(shown, metric, bound, mode, words):
    cache, records = shown
    (record, message), reports = _search(cache, records, metric, bound, mode)
    assert record is sizing.no_update
    assert words in message.children and message.className == "error"


def test_without_a_run_there_is_nothing_to_size(tmp_path):
    (record, message), _ = _search(ResultCache(tmp_path / "results"), [])
    assert record is sizing.no_update and "run the matrix first" in message.children


def test_sizing_csv_has_the_size_commands_columns(shown):
    cache, records = shown
    (record, _), _ = _search(cache, records)
    sent = sizing.export(1, record)
    assert sent["filename"] == "sizing.csv"
    frame = pd.read_csv(io.StringIO(sent["content"]))
    assert list(frame.columns) == ["size", "mean_wait_s", "holds", "non_monotone"]
    assert len(frame) == len(record["probes"]) and frame["size"].tolist() == [p["size"] for p in record["probes"]]
    assert sizing.export(1, None) is sizing.no_update


def test_the_figure_draws_probes_target_today_and_answer():
    record = {"metric": "mean_wait_s", "bound": 600.0, "mode": "pool", "today": 8192.0, "answer": 13056.0,
              "message": "", "baseline": "",
              "probes": [{"size": 8192.0, "metric": 36529.0, "holds": False, "non_monotone": False},
                         {"size": 16384.0, "metric": 120.0, "holds": True, "non_monotone": False},
                         {"size": 13056.0, "metric": 598.0, "holds": True, "non_monotone": False},
                         {"size": 13317.0, "metric": 640.0, "holds": False, "non_monotone": True}]}
    figure = figures.probes_figure(record)
    names = [trace.name for trace in figure.data]
    assert names == ["probes", "not monotone", "answer: 13,056 CPUs"]
    assert list(figure.data[0].marker.color) == [figures.MISSES, figures.MEETS, figures.MEETS, figures.MISSES]
    assert figure.data[2].y == (598.0,)
    assert {shape.y0 for shape in figure.layout.shapes if shape.y0 == shape.y1} == {600.0}   # the target line
    assert {shape.x0 for shape in figure.layout.shapes if shape.x0 == shape.x1} == {8192.0, 13056.0}
    # Waits from 120 s to 36,529 s: a log y axis, the target's label placed by log10 as plotly wants it.
    assert figure.layout.yaxis.type == "log" and figure.layout.xaxis.type == "linear"
    label = next(a for a in figure.layout.annotations if a.text.startswith("target"))
    assert label.text == "target: mean wait ≤ 600 s" and label.y == pytest.approx(math.log10(600))
    assert figures.sentence(record) == ("A mean wait ≤ 600 s needs 13,056 CPUs (today 8,192); not monotone near "
                                        "the answer: 13,317 CPUs contradict the trend (marked ◇).")
    running = figures.probes_figure(record, running=True)
    assert "searching" in running.layout.title.text and len(running.data) == 2   # no answer while it runs
    assert "appear here" in figures.probes_figure({**record, "probes": []}, running=True).layout.annotations[0].text
    # Before any probe: one line of text, not a frame of nothing.
    assert figures.probes_figure(None).layout.height == figures.NOTHING_YET_HEIGHT


def test_sentences_of_a_target_not_met_and_of_a_scale_answer():
    base = {"metric": "mean_wait_s", "bound": 60.0, "probes": []}
    assert figures.sentence({**base, "mode": "pool", "today": 10.0, "answer": None,
                             "message": "mean_wait_s<=60 is not met up to 40960"}) == \
        "No size tried meets mean wait ≤ 60 s: mean_wait_s<=60 is not met up to 40960."
    assert figures.sentence({**base, "mode": "scale", "today": 1.0, "answer": 1.59, "message": ""}) == \
        "A mean wait ≤ 60 s needs 1.59× (today 1×)."
    assert figures.sentence(None) == ""


def test_every_target_is_a_lower_is_better_metric_of_the_catalogue():
    from components.figures import catalogue
    assert all(catalogue.describe(m, "batch").direction == catalogue.LOWER for m in sizing.TARGETS)


def test_the_running_search_is_drawn_until_it_ends():
    live = {"metric": "mean_wait_s", "bound": 1.0, "mode": "pool", "today": 10.0,
            "probes": [{"size": 10.0, "metric": 5.0, "holds": False, "non_monotone": False}]}
    figure, text = sizing.live_drawn(live)
    assert text == "Searching…" and "searching" in figure.layout.title.text
    assert sizing.live_drawn(None) == (sizing.no_update, sizing.no_update)   # ended: the finished search draws
    figure, text = sizing.drawn(None)
    assert text == "" and "press Size" in figure.layout.annotations[0].text


def test_probe_runs_are_named_as_probes_in_the_run_index(shown):
    cache, records = shown
    _search(cache, records)
    names = {entry["name"] for entry in cache.listing()}
    assert "sizing probe: pool of 20 CPUs" in names and "sizing probe: pool of 19 CPUs" in names
    assert sizing.probe_name({"model": {"load_factor": 1.25}, "name": "BASIC · log"}, "load") == \
        "sizing probe: load ×1.25 · BASIC · log"
    scaled = {"model": {"clusters": [{"machines": 2, "cpus_per_machine": [4, 8]},
                                     {"machines": 3, "cpus_per_machine": 2}]}}
    assert sizing.probe_name(scaled, "scale") == "sizing probe: clusters scaled to 18 CPUs"


def test_cancel_goes_back_to_the_last_answer_and_says_the_probes_are_kept():
    figure, text, message = sizing.cancelled(1, None)
    assert text == "" and "press Size" in figure.layout.annotations[0].text
    assert message.children == sizing.CANCELLED and "result cache" in message.children


def test_a_finished_answer_names_the_run_it_was_sized_from():
    last = {"metric": "mean_wait_s", "bound": 1800.0, "mode": "pool", "today": 806.0, "answer": 1566.0,
            "message": "", "baseline": "Baseline: BASIC · Conservative · seed 1 on 14 clusters, 806 CPUs",
            "probes": [{"size": 1566.0, "metric": 1700.0, "holds": True, "non_monotone": False}]}
    _, text = sizing.drawn(last)
    assert text.startswith("A mean wait ≤ 1,800 s needs 1,566 CPUs")
    assert text.endswith("Baseline: BASIC · Conservative · seed 1 on 14 clusters, 806 CPUs.")
