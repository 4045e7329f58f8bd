"""Compare warns when runs are not like for like, and colours differences by the metric's direction."""

from __future__ import annotations

import pytest

from components.figures import catalogue
from components.pages.compare import table as page
from components.services.runs import ResultCache
from sched_engine.elastic.presets import two_job_model

BASE = {"engine": "batch", "name": "cve"}
SMALL = {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}


@pytest.fixture
def cache(tmp_path):
    return ResultCache(tmp_path)


def test_runs_on_one_workload_and_hardware_raise_no_warning(cache):
    easy, _ = cache.run({**BASE, "model": SMALL, "policy": "easy"})
    cons, _ = cache.run({**BASE, "model": SMALL, "policy": "cons"})
    assert page.setting_warning([("#1 easy", easy), ("#2 cons", cons)]) is None


def test_runs_on_different_workloads_say_so(cache):
    easy, _ = cache.run({**BASE, "model": SMALL, "policy": "easy"})
    other, _ = cache.run({**BASE, "model": {"trace": {"path": "tests/data/batch/easy_spare.swf"}}, "policy": "easy"})
    warning = page.setting_warning([("#1 easy", easy), ("#2 easy", other)])
    assert warning.startswith("Not like for like") and "workload" in warning
    assert "#1 easy: 4 jobs" in warning and "#2 easy: 3 jobs" in warning
    assert "hardware" not in warning     # both on the traces' 4 CPUs


def test_runs_of_different_engines_say_so(cache):
    easy, _ = cache.run({**BASE, "model": SMALL, "policy": "easy"})
    yarn, _ = cache.run({"engine": "elastic", "policy": "yarn", "model": two_job_model()})
    assert "different engines" in page.setting_warning([("a", easy), ("b", yarn)])


def test_better_is_green_and_worse_red_by_direction(cache):
    easy, _ = cache.run({**BASE, "model": SMALL, "policy": "easy"})
    cons, _ = cache.run({**BASE, "model": SMALL, "policy": "cons"})
    frame, deltas = page.comparison_table([("EASY", easy), ("CONS", cons)])
    styles = page.direction_styles(frame, deltas, "batch")
    # Rows are matched by the names the page shows (the catalogue's), as the shown table holds them.
    shown = page.shown(frame, ["EASY", "CONS"], "batch")
    assert "Mean wait (s)" in set(shown["metric"]) and "unit" not in shown
    wait = [s for s in styles if '"Mean wait (s)"' in s["if"]["filter_query"]]
    lower, higher = (next(s for s in wait if op in s["if"]["filter_query"]) for op in ("< -", "> "))
    assert lower["backgroundColor"] == page.BETTER["backgroundColor"]     # wait went down: better
    assert higher["backgroundColor"] == page.WORSE["backgroundColor"]
    util = [s for s in styles if '"CPU utilisation (%)"' in s["if"]["filter_query"]]
    assert next(s for s in util if "> " in s["if"]["filter_query"])["backgroundColor"] == page.BETTER["backgroundColor"]
    jobs = f'"{catalogue.column("jobs", "batch")}"'
    assert not [s for s in styles if jobs in s["if"]["filter_query"]]   # no direction: no colour
