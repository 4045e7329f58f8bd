"""The Batch page's trust panels: the log vs the simulation, why jobs waited, one job's reasons."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pytest

from components.figures import trust as figures
from components.pages.batch import ids, trust
from components.services.runs import ResultCache

DATA = Path(__file__).parent / "data" / "batch"


@pytest.fixture
def shown(tmp_path):
    """A cache holding the 4-job EASY run, with the log's recorded waits, and its run record."""
    trace = tmp_path / "log.swf"
    lines = (DATA / "pending_four.swf").read_text().splitlines()
    # The log recorded waits 0, 120, 400 and 0 s (field 3) for the four jobs.
    rows = [line.split() for line in lines if not line.startswith(";")]
    for row, wait in zip(rows, ("0", "120", "400", "0")):
        row[2] = wait
    trace.write_text("; MaxProcs: 10\n" + "".join(" ".join(row) + "\n" for row in rows))
    cache = ResultCache(tmp_path / "results")
    result, _ = cache.run({"engine": "batch", "policy": "easy",
                           "model": {"trace": {"path": str(trace)}, "estimates": "trace"}})
    record = {"scenario": "BASIC", "policy": "easy", "label": "EASY", "seed": 1, "hash": result.scenario_hash,
              "hardware": "10 CPUs"}
    return cache, [record]


def test_the_log_panel_states_the_gap_and_its_baseline(shown):
    cache, records = shown
    sentence, baseline, timeline, breakdown, why, by_group = trust.log_panel(cache, records, "BASIC", "EASY", None)
    # Simulated waits 0, 99, 148, 0 (mean 61.75) vs the log's 0, 120, 400, 0 (mean 130): 2.1x lower.
    assert sentence.startswith("Simulated mean wait 62 s vs your log's 130 s: 2.1× lower")
    assert baseline == "Baseline: BASIC · EASY · seed 1 on 10 CPUs"
    names = {trace.name for trace in timeline.data}
    assert names == {"your log", "simulation"}
    log_cpus = next(t for t in timeline.data if t.name == "your log" and t.yaxis == "y")
    # The log's schedule: job 1 on 0-100, job 4 from 3, job 2 from 121, job 3 from 402.
    assert max(log_cpus.y) == 10 and log_cpus.x[0] == 0
    assert {trace.type for trace in breakdown.data} == {"bar"}
    assert {trace.name for trace in why.data} == {"resources", "reservation"}
    # One group (the log's group 1): its 247 s of waiting, 1 s for job 2's reservation (until job 4 is
    # backfilled and leaves job 3 too few CPUs), the rest for CPUs.
    assert {trace.name: list(trace.x) for trace in by_group.data} == {"resources": [pytest.approx(100 * 246 / 247)],
                                                                     "reservation": [pytest.approx(100 * 1 / 247)]}
    assert list(by_group.data[0].y) == ["1 · 0.1 h"]


def test_a_run_without_recorded_waits_says_so(tmp_path):
    cache = ResultCache(tmp_path / "results")
    result, _ = cache.run({"engine": "batch", "policy": "fcfs",
                           "model": {"trace": {"path": str(DATA / "pending_four.swf")}}})
    records = [{"scenario": "BASIC", "label": "FCFS", "seed": 1, "hash": result.scenario_hash}]
    sentence, _, timeline, breakdown, why, by_group = trust.log_panel(cache, records, "BASIC", "FCFS", None)
    assert sentence.startswith("This log records no wait times")
    # The sentence says it: no empty frames below it, and nothing to calibrate against.
    assert all(not figure.data and figure.layout.height == trust.NOTHING_HEIGHT for figure in (timeline, breakdown))
    assert trust.calibrate_link(cache, records, "BASIC", "FCFS") == (None, trust.HIDDEN)
    assert {trace.name for trace in why.data} == {"resources", "priority"}
    assert {trace.name for trace in by_group.data} == {"resources", "priority"}


def test_a_jobs_reasons_name_its_blocking_jobs_as_links(shown):
    cache, records = shown
    figure, links = trust.job_panel(cache, "3", records, "BASIC", "EASY")
    assert {trace.name for trace in figure.data} == {"reservation", "resources"}
    buttons = [child.id["job"] for child in links if getattr(child, "id", None)]
    assert buttons == ["2", "3", "2"]      # blocked by job 2; the longest waits: job 3 (148 s), job 2 (99 s)
    figure, links = trust.job_panel(cache, "1", records, "BASIC", "EASY")
    assert "did not wait" in figure.layout.annotations[0].text
    figure, links = trust.job_panel(cache, "", records, "BASIC", "EASY")
    assert [child.id["job"] for child in links if getattr(child, "id", None)] == ["3", "2"]
    assert figure.layout.height == trust.ONE_LINE and not figure.data   # no job chosen: one line, no frame


def test_a_click_in_the_gantt_chooses_the_job():
    click = {"points": [{"customdata": ["42", 4, "cluster", 0, 0.0, 10.0]}]}
    assert trust.job_from(ids.GANTT, click, []) == "42"
    link = {"type": ids.BLOCKING_LINK, "job": "7"}
    assert trust.job_from(link, click, [1]) == "7"


def test_waiting_shares_split_each_bin_by_reason():
    # Two jobs wait: a for resources over [0, 100), b for a reservation over [50, 100).
    pending = pd.DataFrame({"job_id": ["a", "b"], "from_time": [0.0, 50.0], "to_time": [100.0, 100.0],
                            "reason": ["resources", "reservation"], "blocking_job": ["", "a"]})
    edges, shares = figures.waiting_shares(pending, bins=2)
    assert list(edges) == [0.0, 50.0, 100.0]
    assert shares["resources"].tolist() == [1.0, 0.5]
    assert shares["reservation"].tolist() == [0.0, 0.5]


def test_waiting_time_per_group_keeps_the_groups_that_waited_most_and_sums_the_rest():
    # a and b (group g1) wait 100 s for CPUs and 50 s for a reservation; c (g2) 30 s behind a higher
    # priority; d, of no group, 10 s for CPUs.
    pending = pd.DataFrame({"job_id": ["a", "b", "c", "d"], "from_time": [0.0, 50.0, 0.0, 10.0],
                            "to_time": [100.0, 100.0, 30.0, 20.0],
                            "reason": ["resources", "reservation", "priority", "resources"],
                            "blocking_job": ["", "a", "a", ""]})
    jobs = pd.DataFrame({"job_id": ["a", "b", "c", "d"], "group": ["g1", "g1", "g2", ""]})
    table = figures.waiting_by_group(pending, jobs, top=1)
    assert table.to_dict("records") == [
        {"group": "g1", "reason": "resources", "seconds": 100.0, "share": pytest.approx(2 / 3)},
        {"group": "g1", "reason": "reservation", "seconds": 50.0, "share": pytest.approx(1 / 3)},
        {"group": "other (2 groups)", "reason": "priority", "seconds": 30.0, "share": 0.75},
        {"group": "other (2 groups)", "reason": "resources", "seconds": 10.0, "share": 0.25}]
    assert set(figures.waiting_by_group(pending, jobs)["group"]) == {"g1", "g2", "(none)"}
    # A window clips the intervals: over [60, 100) only a and b wait, 40 s each.
    windowed = figures.waiting_by_group(pending, jobs, window=(60.0, 100.0))
    assert windowed[["group", "reason", "seconds"]].values.tolist() == [["g1", "resources", 40.0],
                                                                        ["g1", "reservation", 40.0]]
    figure = figures.why_waited_by_group(pending, jobs)
    assert [trace.name for trace in figure.data] == ["resources", "reservation", "priority"]
    assert list(figure.layout.yaxis.categoryarray) == ["g1 · 0.0 h", "g2 · 0.0 h", "(none) · 0.0 h"]
    assert "no job waited" in figures.why_waited_by_group(pending.iloc[:0], jobs).layout.annotations[0].text


def test_total_series_sums_clusters_step_by_step():
    timeline = pd.DataFrame({"time": [0.0, 5.0, 0.0, 3.0], "entity": ["a", "a", "b", "b"],
                             "metric": ["used_cpus"] * 4, "value": [2.0, 0.0, 1.0, 4.0]})
    times, values = figures.total_series(timeline, "used_cpus")
    assert times.tolist() == [0.0, 3.0, 5.0] and values.tolist() == [3.0, 6.0, 4.0]
    assert np.all(np.diff(times) > 0)


def test_pending_csv_streams_from_the_download_route(shown, tmp_path):
    from flask import Flask

    from components.pages.batch import charts
    from components.services import downloads

    cache, records = shown
    href, name = charts.frame_links(records, "BASIC", "EASY")["pending"]
    assert name == "batch-BASIC-easy-pending.csv" and href.startswith(f"/download/{records[0]['hash']}/pending.csv")
    server = Flask(__name__)
    downloads.register(server, cache)
    response = server.test_client().get(href)
    assert response.status_code == 200 and response.is_streamed
    assert f'filename="{name}"' in response.headers["Content-Disposition"]
    # EASY on the 4-job trace: job 2 waits for CPUs over [1, 100); job 3 first for job 2's reservation,
    # then (job 4 backfilled at 3) for CPUs.
    assert response.get_data(as_text=True).splitlines() == [
        "job_id,from_time,to_time,reason,blocking_job", "2,1.0,100.0,resources,", "3,2.0,3.0,reservation,2",
        "3,3.0,150.0,resources,"]
    # A run stored without the frame (an engine that records none) answers 404, as an unknown frame does.
    other, _ = cache.run({"engine": "fairshare", "policy": "drf",
                          "model": {"resources": [{"name": "cpu", "capacity": 2}],
                                    "tree": {"name": "root", "children": [
                                        {"name": "a", "demand": {"cpu": 1}, "tasks": 1, "duration": 1}]}}})
    assert server.test_client().get(f"/download/{other.scenario_hash}/pending.csv").status_code == 404
    assert server.test_client().get(f"/download/{records[0]['hash']}/secrets.csv").status_code == 404


def test_the_calibrate_link_opens_the_sweeps_page_on_the_shown_trace_when_the_kind_exists(shown, monkeypatch):
    from sched_engine import sweeps

    cache, records = shown
    monkeypatch.delitem(sweeps.KINDS, trust.CALIBRATE, raising=False)
    assert trust.calibrate_link(cache, records, "BASIC", "EASY") == (None, trust.HIDDEN)
    monkeypatch.setitem(sweeps.KINDS, trust.CALIBRATE, object())
    # A trace given by a path of this machine is left out of the link; a sample or an upload is named.
    assert trust.calibrate_link(cache, records, "BASIC", "EASY") == ("/sweeps?kind=calibrate", {})
    sample, _ = cache.run({"engine": "batch", "policy": "easy",
                           "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 20}}})
    records = [{**records[0], "hash": sample.scenario_hash}]
    assert trust.calibrate_link(cache, records, "BASIC", "EASY") == (
        f"/sweeps?kind=calibrate&trace={quote('sample:hpc2n-excerpt.swf', safe='')}", {})
    assert trust.calibrate_link(cache, records, "BASIC", "FCFS") == (None, trust.HIDDEN)   # no run shown


def test_a_reason_without_a_blocking_job_says_none_in_its_tooltip():
    pending = pd.DataFrame({"job_id": ["a", "a"], "from_time": [0.0, 50.0], "to_time": [50.0, 100.0],
                            "reason": ["resources", "reservation"], "blocking_job": ["", "b"]})
    figure = figures.job_reasons(pending, "a")
    tips = {trace.name: list(trace.customdata[:, 2]) for trace in figure.data}
    assert tips == {"resources": [""], "reservation": ["<br>blocking job b"]}
    assert all("blocking job" not in trace.hovertemplate for trace in figure.data)
