"""The baseline steps on a page: the background callback, its progress, its record and what is drawn from it."""

from __future__ import annotations

import json

import pytest
from dash import no_update

from components.services.runs import ResultCache
from components.services.uploads import UploadStore
from components.widgets import baseline_steps as widget
from sched_engine.analysis.baseline_steps import STEPS

# The hand-computed log of tests/test_analysis_baseline_steps.py: a and b (2 CPUs) ran together from 0 and 10 on a
# 2-CPU machine, c (1 CPU) from 100. The steps' mean waits: 100 on the hardware, 33.3 on the 4 CPUs the log used
# (queues and limits change nothing), 40 with the CPUs above the hardware the log was not using held back.
LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user,queue,requested_time\n"
       "a,0,0,100,2,u,q1,100\nb,0,10,100,2,v,q2,100\nc,0,100,10,1,u,q1,1000\n")
TWO_CPUS = [{"name": "c", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]
STATEMENT = "Baseline: BASIC · EASY · seed 1"


@pytest.fixture
def shown(tmp_path):
    trace = tmp_path / "log.csv"
    trace.write_text(LOG)
    cache = ResultCache(tmp_path / "results")
    result, _ = cache.run({"engine": "batch", "policy": "easy", "name": "BASIC",
                           "model": {"trace": {"path": str(trace)}, "clusters": TWO_CPUS, "estimates": "perfect"}})
    return cache, UploadStore(tmp_path / "uploads"), result


def _explain(cache, uploads, result, capacity="log", last=None):
    reports = []
    out = widget.run_steps(cache, uploads, lambda: (STATEMENT, result), reports.append, capacity, last)
    return out, reports


def test_the_steps_run_through_the_cache_and_come_back_as_a_small_record(shown):
    cache, uploads, result = shown
    (record, message), reports = _explain(cache, uploads, result)
    waits = [step["simulated_mean_wait_s"] for step in record["steps"]]
    assert [step["step"] for step in record["steps"]] == list(STEPS)
    assert waits == pytest.approx([100, 100 / 3, 100 / 3, 100 / 3, 40, 40])
    assert record["steps"][0]["recorded_mean_wait_s"] == pytest.approx(110 / 3)
    assert record["run"] == result.scenario_hash and record["capacity"] == "log"
    assert "the step that moved it most is on the capacity the log used" in record["sentence"]
    assert len(json.dumps(record)) < 10_000                      # numbers and words only, never frames
    # The progress went up to 6 of 6 steps, step by step, each step's end sent.
    values = [int(value) for value, _, _ in reports]
    assert values == sorted(values) and values[-1] == 600 and all(total == "600" for _, total, _ in reports)
    assert reports[-1][2].startswith("step 6 of 6: with the users' estimates")
    # The shown run was not run again; the others are in the cache, named for their step; the down-time step's
    # workload is an upload, named by content.
    assert "from the cache" in message.children
    names = {entry["name"]: entry["hash"] for entry in cache.listing()}
    assert "baseline step: capacity · BASIC" in names
    downtime = cache.get(names["baseline step: downtime · BASIC"])
    assert downtime.scenario["model"]["trace"]["path"].startswith("upload:")
    assert any(entry["label"] == "log.csv with its down time" for entry in uploads.listing())


def test_the_same_run_and_capacity_are_not_run_again_and_another_capacity_is(shown):
    cache, uploads, result = shown
    (record, _), _ = _explain(cache, uploads, result)
    (again, message), reports = _explain(cache, uploads, result, last=record)
    assert again is no_update and "nothing to run again" in message.children and not reports
    (peak99, _), _ = _explain(cache, uploads, result, capacity="log_p99", last=record)
    assert peak99["capacity"] == "log_p99" and peak99["steps"][1]["cpus"] == 4


def test_the_page_draws_the_table_the_chart_and_the_sentence_naming_its_run(shown):
    cache, uploads, result = shown
    (record, _), _ = _explain(cache, uploads, result)
    rows, figure, box, text = widget.drawn(record)
    assert [row["mean_wait"] for row in rows] == ["100 s", "33 s", "33 s", "33 s", "40 s", "40 s"]
    assert rows[0]["ratio"] == f"{100 / (110 / 3):.2f}" and rows[-1]["rho"] == "0.50"
    assert rows[2]["setting"].startswith("queues in order q2 > q1")
    assert list(figure.data[0].y) == pytest.approx([100, 100 / 3, 100 / 3, 100 / 3, 40, 40])
    assert text.endswith(f"{STATEMENT}.") and "left unexplained" in text
    assert len(figure.to_json()) + len(json.dumps(rows)) < 50_000     # what the page is sent: six bars, six rows
    assert box["height"] == f"{widget.figures.STEPS_HEIGHT}px"
    # Before any steps: no rows, and one line of text in a box of its height, not a frame of empty axes.
    rows, figure, box, text = widget.drawn(None)
    assert rows == [] and text == "" and box["height"] == f"{widget.ONE_LINE}px"
    assert figure.layout.height == widget.ONE_LINE and not figure.data


def test_a_run_whose_log_records_no_waits_is_refused_with_a_reason(shown, tmp_path):
    cache, uploads, _ = shown
    trace = tmp_path / "nowait.csv"
    trace.write_text("job_id,submit_time,run_time,procs\na,0,10,1\nb,5,10,1\n")
    result, _ = cache.run({"engine": "batch", "policy": "easy", "model": {"trace": {"path": str(trace)},
                                                                           "clusters": TWO_CPUS}})
    (record, message), _ = _explain(cache, uploads, result)
    assert record is no_update and "records no wait times" in message.children
    record, message = widget.run_steps(cache, uploads, lambda: (None, None), [].append, "log", None)
    assert record is no_update and "run the matrix first" in message.children
