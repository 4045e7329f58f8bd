"""Baseline check of a simulated run against the log's recorded waits, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sched_engine.analysis.baseline import compare_with_log, headline, recorded_timeline


def _workload():
    return pd.DataFrame({
        "job_id": ["1", "2", "3", "4", "5"],
        "submit_time": [0.0, 0.0, 10.0, 20.0, 30.0],
        "run_time": [100.0, 100.0, 50.0, 50.0, 10.0],
        "procs": [4, 4, 2, 2, 1],
        "recorded_wait": [0.0, 100.0, 1000.0, -1.0, 40.0],   # job 4: unknown (SWF's -1)
        "queue": ["long", "long", "short", "short", "short"],
    })


def _simulated(waits):
    workload = _workload()
    start = workload["submit_time"] + np.asarray(waits, dtype=float)
    return pd.DataFrame({"job_id": workload["job_id"], "submit_time": workload["submit_time"], "start_time": start})


def test_figures_by_hand():
    check = compare_with_log(_workload(), _simulated([0.0, 0.0, 100.0, 5.0, np.nan]))   # job 5 never started
    values = dict(zip(check.summary["metric"], check.summary["value"]))
    # compared: jobs 1, 2, 3 -> recorded (0, 100, 1000), simulated (0, 0, 100), errors (0, -100, -900)
    assert values["compared_jobs"] == 3
    assert values["recorded_mean_wait_s"] == pytest.approx(1100 / 3)
    assert values["simulated_mean_wait_s"] == pytest.approx(100 / 3)
    assert values["median_abs_wait_error_s"] == 100.0
    assert values["share_within_10min"] == pytest.approx(2 / 3)
    assert values["jobs_without_recorded_wait"] == 1
    assert values["jobs_not_started"] == 1
    # ranks: recorded 1, 2, 3; simulated ties 1.5, 1.5, 3 -> Spearman 0.866
    assert values["wait_rank_correlation"] == pytest.approx(0.8660254)
    queues = check.by["queue"].set_index("queue")
    assert queues.loc["short", "mean_error_s"] == -900.0    # the gap comes from the short queue
    assert check.by["queue"]["queue"].iloc[0] == "short"


def test_headline():
    check = compare_with_log(_workload(), _simulated([0.0, 0.0, 100.0, 5.0, 40.0]))
    text = headline(check)
    # recorded mean (0+100+1000+40)/4 = 285, simulated (0+0+100+40)/4 = 35 -> 8.1x lower
    assert text.startswith("simulated mean wait 35 s vs your log's 285 s: 8.1× lower")
    assert "1 jobs without a recorded wait left out" in text


def test_a_log_without_waits_says_so():
    workload = _workload().assign(recorded_wait=np.nan)
    check = compare_with_log(workload, _simulated([0.0] * 5))
    assert headline(check) == "the log records no wait times to compare with"


def test_recorded_timeline_steps():
    timeline = recorded_timeline(_workload())
    used = timeline[timeline["metric"] == "used_cpus"]
    # starts: 0 (4), 100 (4), 1010 (2), 70 (1); ends: 100, 200, 1060, 80
    assert list(zip(used["time"], used["value"])) == [(0.0, 4.0), (70.0, 5.0), (80.0, 4.0), (100.0, 4.0),
                                                        (200.0, 0.0), (1010.0, 2.0), (1060.0, 0.0)]
    queue = timeline[timeline["metric"] == "queue_length"]
    assert queue["value"].iloc[-1] == 0
