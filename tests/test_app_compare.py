"""The compare page's pure helpers (no browser)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.figures.compare import SUM, overlay_figure, step_series
from components.pages.compare import table as page
from components.services.runs import ResultCache

BASE = {"engine": "batch", "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}, "name": "cve"}


@pytest.fixture
def runs(tmp_path):
    cache = ResultCache(tmp_path)
    easy, _ = cache.run({**BASE, "policy": "easy"})
    cons, _ = cache.run({**BASE, "policy": "cons"})
    return cache, [("EASY", easy), ("CONS", cons)]


def test_differences_are_relative_to_the_first_run(runs):
    _, pairs = runs
    table, deltas = page.comparison_table(pairs)
    assert deltas == ["Δ% CONS"] and list(table.columns[:3]) == ["metric", "unit", "EASY"]
    wait = table.set_index("metric").loc["mean_wait_s"]
    # Hand-computed (tests/data/batch/cons_vs_easy.swf): EASY waits 0,9,18,0 -> 6.75; CONS 0,9,8,17 -> 8.5.
    assert (wait["EASY"], wait["CONS"]) == (6.75, 8.5)
    assert wait["Δ% CONS"] == pytest.approx(100 * (8.5 - 6.75) / 6.75, abs=0.01)
    killed = table.set_index("metric").loc["killed"]
    assert math.isnan(killed["Δ% CONS"])                 # reference 0: no relative difference


def test_metrics_common_to_all_runs_and_sum_over_entities(runs):
    _, pairs = runs
    assert "queue_length" in page.metric_options(pairs)
    options = page.entity_options(pairs, "used_cpus")
    assert [o["value"] for o in options] == ["cluster"]      # one entity: no "sum" choice
    timeline = pd.DataFrame({"time": [0.0, 5.0, 2.0], "entity": ["a", "a", "b"], "metric": ["m"] * 3,
                             "value": [1.0, 3.0, 10.0]})
    summed = step_series(timeline, "m", SUM)
    assert summed.values.tolist() == [[0.0, 1.0], [2.0, 11.0], [5.0, 13.0]]


def test_overlay_draws_one_line_per_run_and_labels_are_unique(runs):
    cache, pairs = runs
    figure = overlay_figure(pairs, "queue_length", "queue")
    assert [t.name for t in figure.data] == ["EASY", "CONS"]
    labels = [page.run_label(e) for e in cache.listing()]
    assert len(set(labels)) == 2 and all("cve" in label for label in labels)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 6), st.integers(-3, 5)), min_size=1, max_size=25))
def test_the_sum_of_step_functions_holds_each_entitys_last_value(rows):
    timeline = pd.DataFrame({"time": [float(t) for _, t, _ in rows], "entity": [e for e, _, _ in rows],
                             "metric": "m", "value": [float(v) for _, _, v in rows]})
    total = step_series(timeline, "m", SUM).set_index("time")["value"]
    for instant in sorted(set(timeline["time"])):
        upto = timeline[timeline["time"] <= instant].sort_values("time", kind="stable")
        expected = sum(float(part["value"].iloc[-1]) for _, part in upto.groupby("entity"))
        assert total[instant] == expected


def test_two_runs_of_one_workload_are_compared_job_by_job(runs):
    from components.pages.compare.paired import paired_view

    _, pair = runs
    text, histogram, users = paired_view(pair)
    assert text.startswith("CONS vs EASY: mean wait")
    assert "% of jobs unchanged" in text
    assert users.data and users.data[0].orientation == "h"
    assert len(histogram.to_json()) < 50_000   # binned here: the browser gets bars, not jobs


def test_one_run_or_two_workloads_ask_for_a_pair(runs, tmp_path):
    from components.pages.compare.paired import PROMPT, paired_view

    cache, pair = runs
    assert paired_view(pair[:1])[0] == PROMPT
    other, _ = cache.run({"engine": "fairshare", "policy": "drf",
                          "model": {"resources": [{"name": "cpu", "capacity": 2}],
                                    "tree": {"name": "root", "children": [
                                        {"name": "a", "demand": {"cpu": 1}, "tasks": 1, "duration": 1}]}}})
    assert "share no jobs" in paired_view([pair[0], ("DRF", other)])[0]
