"""The shared metrics on hand-computed jobs."""

import math

import numpy as np
import pandas as pd
import pytest

from sched_engine.core import metrics
from sched_engine.core.observers import changes_only

JOBS = pd.DataFrame({
    "submit_time": [0.0, 10.0, 20.0, 30.0],
    "start_time": [0.0, 15.0, 40.0, np.nan],
    "end_time": [100.0, 20.0, 45.0, 35.0],
    "run_time": [100.0, 5.0, 5.0, 0.0],
    "procs": [2, 1, 4, 8],
    "status": ["finished", "finished", "killed", "cancelled"],
})


def test_means_over_the_rows_given():
    done = metrics.with_status(JOBS, ["finished"])
    assert metrics.mean_wait(done) == 2.5                       # (0 + 5) / 2
    assert metrics.mean_response(done) == 55.0                  # (100 + 10) / 2
    assert metrics.mean_slowdown(done) == 1.5                   # (100/100 + 10/5) / 2
    assert metrics.mean_bounded_slowdown(done) == 1.0           # max(1, 100/100), max(1, 10/10)
    assert metrics.mean_bounded_slowdown(done, tau=2.0) == 1.5
    assert math.isnan(metrics.mean_wait(JOBS.iloc[:0]))


def test_makespan_counts_the_ends_asked_for_from_the_first_submission():
    assert metrics.makespan(JOBS) == 100.0
    assert metrics.makespan(JOBS.iloc[1:]) == 35.0                                   # the cancelled end counts
    assert metrics.makespan(JOBS.iloc[1:], ended=("finished", "killed")) == 35.0    # 45 - 10
    assert metrics.makespan(JOBS.iloc[3:], ended=("finished", "killed")) == 0.0
    assert metrics.makespan(JOBS.assign(end_time=[np.nan, 20.0, 45.0, 35.0])) == 45.0  # no end: skipped


def test_utilisation_is_used_cpu_time_over_capacity_times_span():
    ran = metrics.with_status(JOBS, ("finished", "killed"))
    # 2 x 100 + 1 x 5 + 4 x 5 = 225 CPU-seconds on 10 CPUs over 100 s
    assert metrics.utilisation(ran, 10, 100.0) == pytest.approx(0.225)
    assert metrics.utilisation(ran, 10, 0.0) == 0.0


def test_time_weighted_mean_of_a_step_function():
    assert metrics.time_weighted_mean([0.0, 2.0], [1.0, 4.0], 4.0) == 2.5   # (1 x 2 + 4 x 2) / 4
    assert metrics.time_weighted_mean([5.0, 6.0], [1.0, 3.0], 9.0) == 2.5   # from t0 = 5: (1 + 3 x 3) / 4
    assert math.isnan(metrics.time_weighted_mean([], [], 1.0))


def test_changes_only_keeps_the_last_sample_of_an_instant_and_drops_repeats():
    times, values = changes_only([0.0, 1.0, 1.0, 2.0, 3.0], [0.0, 5.0, 2.0, 2.0, 1.0])
    assert times.tolist() == [0.0, 1.0, 3.0] and values.tolist() == [0.0, 2.0, 1.0]
