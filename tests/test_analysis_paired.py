"""Paired comparison of two runs: hand-computed shares, bootstrap intervals on a known difference, the headline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sched_engine.analysis.paired import across_seeds, bootstrap, compare_runs, headline, paired_jobs, size_class


def _jobs(waits, users=None, procs=None, started=None):
    n = len(waits)
    submit = np.arange(n, dtype=float) * 100
    start = submit + np.asarray(waits, dtype=float)
    if started is not None:
        start = np.where(started, start, np.nan)
    return pd.DataFrame({
        "job_id": [str(i) for i in range(n)],
        "user": users or ["u1"] * n,
        "procs": procs or [1] * n,
        "submit_time": submit,
        "start_time": start,
    })


def test_shares_and_differences_by_hand():
    a = _jobs([0, 10, 20, 30], users=["7", "7", "9", "9"])
    b = _jobs([0, 5, 25, 30.5], users=["7", "7", "9", "9"])
    result = compare_runs(a, b, np.random.default_rng(0), resamples=200)
    # d = [0, -5, +5, +0.5]: one better, one worse, two within the 1 s tolerance
    assert (result.better, result.worse, result.unchanged) == (0.25, 0.25, 0.5)
    assert result.mean_difference.estimate == pytest.approx(0.125)
    assert result.median_difference.estimate == pytest.approx(0.25)
    assert result.mean_change.estimate == pytest.approx((60.5 / 4 - 60 / 4) / (60 / 4))
    users = result.by_group["user"].set_index("user")
    assert users.loc["9", "total_difference"] == pytest.approx(5.5)
    assert users.loc["7", "total_difference"] == pytest.approx(-5.0)
    assert result.by_group["user"]["user"].tolist() == ["9", "7"]   # who loses most comes first


def test_jobs_that_did_not_start_in_both_runs_are_counted_and_left_out():
    a = _jobs([0, 10, 20], started=[True, True, False])
    b = _jobs([0, 10, 20], started=[True, False, True])
    jobs, unpaired = paired_jobs(a, b)
    assert jobs["job_id"].tolist() == ["0"]
    assert unpaired == 2


def test_bootstrap_interval_covers_a_known_shift_and_excludes_zero():
    rng = np.random.default_rng(42)
    wait_a = rng.exponential(600.0, size=2000)
    wait_b = wait_a - 60.0 + rng.normal(0.0, 30.0, size=2000)     # B saves 60 s per job, with noise
    mean, median, change = bootstrap(wait_a, wait_b, np.random.default_rng(1), resamples=500)
    assert mean.low < -60.0 < mean.high
    assert mean.high < 0
    assert median.low < -60.0 < median.high
    assert change.high < 0 and change.low < change.estimate < change.high


def test_bootstrap_is_reproducible_from_the_generator():
    a, b = np.arange(50.0), np.arange(50.0)[::-1]
    first = bootstrap(a, b, np.random.default_rng(3), resamples=100)
    second = bootstrap(a, b, np.random.default_rng(3), resamples=100)
    assert first == second


def test_identical_runs_give_a_zero_interval():
    a = _jobs([5, 10, 15, 20])
    result = compare_runs(a, a, np.random.default_rng(0), resamples=100)
    assert result.unchanged == 1.0
    assert (result.mean_change.low, result.mean_change.high) == (0.0, 0.0)


def test_across_seeds_is_a_student_t_interval():
    interval = across_seeds([0.1, 0.2, 0.3])
    # mean 0.2, s = 0.1, t(0.975, 2) = 4.3027 -> half width 0.1 * 4.3027 / sqrt(3)
    assert interval.estimate == pytest.approx(0.2)
    assert interval.high - interval.estimate == pytest.approx(0.1 * 4.302652729911275 / 3 ** 0.5)
    assert np.isnan(across_seeds([0.5]).low)


def test_size_classes():
    assert size_class([1, 2, 4, 5, 64, 65, 300]).tolist() == [
        "1 CPU", "2-4 CPUs", "2-4 CPUs", "5-16 CPUs", "17-64 CPUs", "65-256 CPUs", "over 256 CPUs"]


def test_headline_names_the_change_the_unchanged_share_and_the_losers():
    a = _jobs([100, 100, 100, 100], users=["17", "42", "5", "5"])
    b = _jobs([160, 130, 100, 10], users=["17", "42", "5", "5"])
    text = headline("EASY", "CONS", compare_runs(a, b, np.random.default_rng(0), resamples=100))
    assert text.startswith("CONS vs EASY: mean wait 0% [\u2212")  # (400 -> 400): no change on the mean
    assert "25% of jobs unchanged" in text
    assert "users 17 and 42 lose most" in text
