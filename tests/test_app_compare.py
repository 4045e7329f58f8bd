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


def test_random_parts_name_what_the_seed_changes():
    from components.pages.compare.seeds import random_parts

    batch = {"engine": "batch", "policy": "easy", "model": {"failures": {"kind": "none"}}}
    assert random_parts(batch) == []
    assert random_parts({**batch, "policy": "ls"}) == ["Local Search"]
    assert random_parts({**batch, "model": {"failures": {"kind": "synthetic"},
                                            "synthetic_requirements": {"share": 0.5}}}) == [
        "synthetic failures", "synthetic requirements"]
    assert random_parts({"engine": "network", "policy": "libra", "model": {"generate": {"count": 3}}}) == [
        "generated applications"]
    assert random_parts({"engine": "batch", "policy": "gone", "model": {}}) == []   # a policy of another build


def test_seeds_give_an_interval_across_seeds_of_the_first_two_runs(tmp_path):
    from scipy import stats

    from components.pages.compare import seeds
    from sched_engine import run_scenario

    base = {"engine": "batch", "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 100}}}
    cache = ResultCache(tmp_path)
    easy, _ = cache.run({**base, "policy": "easy", "seed": 1})
    local, _ = cache.run({**base, "policy": "ls", "seed": 1})
    hashes = [easy.scenario_hash, local.scenario_hash]
    style, hint = seeds.offer(cache, hashes)
    assert style == {} and "random parts (Local Search)" in hint
    assert seeds.offer(cache, hashes[:1])[0] == seeds.HIDDEN
    assert seeds.offer(cache, [easy.scenario_hash, easy.scenario_hash])[0] == seeds.HIDDEN   # deterministic

    reports = []
    record, message = seeds.run_seeds(cache, reports.append, 1, 3, hashes)
    assert "6 run(s)" in message.children and "2 from the cache" in message.children   # seed 1 ran already
    assert reports and reports[-1] == (600, 600)
    # By hand: each seed's EASY and LS runs, the relative change of the mean wait over the jobs both started.
    changes = []
    for seed in (1, 2, 3):
        a, b = (run_scenario({**base, "policy": p, "seed": seed}).jobs for p in ("easy", "ls"))
        wait_a, wait_b = a["start_time"] - a["submit_time"], b["start_time"] - b["submit_time"]
        changes.append(wait_b.mean() / wait_a.mean() - 1)
    assert record["changes"] == pytest.approx(changes)
    half = stats.t.ppf(0.975, 2) * pd.Series(changes).std() / 3 ** 0.5
    assert (record["estimate"], record["low"], record["high"]) == pytest.approx(
        (sum(changes) / 3, sum(changes) / 3 - half, sum(changes) / 3 + half))
    assert record["pair"] == hashes
    line = seeds.sentence(record, hashes)
    assert line.startswith(f"Across 3 seeds: mean wait {seeds.percent(record['estimate'])} [")
    assert seeds.sentence(record, hashes[::-1]) == ""                  # another pair chosen: not its interval
    for count in (1, 21, None, "x"):
        refused, why = seeds.run_seeds(cache, reports.append, 1, count, hashes)
        assert refused is seeds.no_update and "from 2 to 20" in why.children


def test_seed_percentages_read_as_the_headline_does():
    from components.pages.compare.seeds import percent

    assert [percent(v) for v in (-0.123, 0.004, 0.5, None, float("nan"))] == ["\u221212%", "0%", "+50%", "n/a", "n/a"]


def _entry(name, hash_, finished, policy="easy"):
    return {"name": name, "hash": hash_ * 64, "engine": "batch", "policy": policy, "seed": 1, "jobs": 100,
            "wall_seconds": 0.5, "finished": finished}


PROBES_AND_RUNS = [
    _entry("sizing probe: pool of 400 CPUs · mine", "a", "2026-01-02T10:05:00"),
    _entry("sizing probe: pool of 300 CPUs · mine", "b", "2026-01-02T10:04:00"),
    _entry("mine", "c", "2026-01-02T10:00:00"),
    _entry("other", "d", "2026-01-01T09:00:00", policy="fcfs"),
]


def test_sizing_probes_are_listed_under_their_search_after_the_runs():
    from components.pages.workspace import lists

    options = page.run_options(PROBES_AND_RUNS)
    assert [o["value"] for o in options[:2]] == ["c" * 64, "d" * 64]          # the runs first
    heading, *probes = options[2:]
    assert heading["disabled"] and "Sizing search from mine" in heading["label"] and "2 probe(s)" in heading["label"]
    assert [p["value"] for p in probes] == ["a" * 64, "b" * 64]
    assert "pool of 400 CPUs" in probes[0]["label"]
    rows = lists.run_rows(PROBES_AND_RUNS)
    assert len(rows) == 3 and rows[2]["run"].startswith("Sizing search from mine, 2 probe(s): [pool of 400 CPUs]")
    assert rows[2]["wall (s)"] == 1.0


def test_the_overlay_draws_runs_of_hours_in_hours_and_short_ones_in_seconds(runs):
    _, pairs = runs
    short = overlay_figure(pairs, "queue_length", "queue")
    assert short.layout.xaxis.title.text == "time (s)"
    timeline = pd.DataFrame({"time": [0.0, 7200.0, 36000.0], "entity": "queue", "metric": "queue_length",
                             "value": [1.0, 2.0, 0.0]})
    long = overlay_figure([("A", type("Run", (), {"timeline": timeline, "scenario": {"engine": "batch"}})())],
                          "queue_length", "queue")
    assert long.layout.xaxis.title.text == "hours since first submission" and max(long.data[0].x) == 10.0
