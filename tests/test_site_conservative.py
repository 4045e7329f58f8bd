"""Hand-computed conservative backfilling (CONS) in the site engine: every job keeps its planned start, over CPUs
and memory; and the batch engine's conservative schedule where there is nothing to share."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_site_exact import _run, _trace
from test_site_properties import batch_run, jobs_strategy, site_run

from sched_engine.batch.policies import Conservative
from sched_engine.site.order import FCFSOrder

ONE_MACHINE = [{"name": "c", "machines": 1, "cpus_per_machine": 8}]


def _memory_bound_trace(tmp_path):
    # One machine: 8 CPUs (never short) and 4000 MB. A holds 3000 MB until 10, so B (2000 MB) waits for 10 and
    # then runs to 20; C needs the whole 4000 MB; D asks 1000 MB for 30 s at t=3, when 1000 MB are free.
    return _trace(tmp_path, [("A", 0, 10, 1, "a", "g", 3000), ("B", 1, 10, 1, "a", "g", 2000),
                             ("C", 2, 10, 1, "a", "g", 4000), ("D", 3, 30, 1, "a", "g", 1000)])


@pytest.mark.parametrize("policy", ["fcfs", "hdrf"])
def test_cons_keeps_the_second_jobs_start_where_easy_backfills_over_it(tmp_path, policy):
    trace = _memory_bound_trace(tmp_path)
    _, easy = _run(trace, policy, ONE_MACHINE, backfill="easy", memory_per_machine_mb={"c": 4000})
    _, cons = _run(trace, policy, ONE_MACHINE, backfill="cons", memory_per_machine_mb={"c": 4000})
    # EASY protects the head (B) only: at t=3 D fits now and its 1000 MB fit in the 2000 MB left over at B's
    # start (10), so it starts and holds them to 33; C, which needs the whole machine, starts then.
    assert (easy["A"], easy["B"], easy["C"], easy["D"]) == (0, 10, 33, 3)
    # CONS plans every job: B [10, 20), C [20, 30) with all the memory, so D's earliest start is 30.
    assert (cons["A"], cons["B"], cons["C"], cons["D"]) == (0, 10, 20, 30)


def test_cons_counts_memory_where_cpus_alone_would_start_everything(tmp_path):
    _, starts = _run(_memory_bound_trace(tmp_path), "fcfs", ONE_MACHINE, backfill="cons",
                     memory_per_machine_mb={"c": 1_000_000})
    assert (starts["A"], starts["B"], starts["C"], starts["D"]) == (0, 1, 2, 3)


def test_cons_plans_the_fair_order_not_the_arrival_order(tmp_path):
    # 8 CPUs. Group X holds all of them: x0 until 100, x1 until 10. x2 (X, t=1) and y1 (Y, t=2) ask 4 CPUs each:
    # FCFS plans x2 first, at 10; under DRF group X holds half the CPUs or more and Y none, so y1 goes first.
    trace = _trace(tmp_path, [("x0", 0, 100, 4, "x", "X", 0), ("x1", 0, 10, 4, "x", "X", 0),
                              ("x2", 1, 10, 4, "x", "X", 0), ("y1", 2, 10, 4, "y", "Y", 0)])
    clusters = ONE_MACHINE
    _, fcfs = _run(trace, "fcfs", clusters, backfill="cons")
    _, drf = _run(trace, "drf", clusters, backfill="cons")
    assert (fcfs["x2"], fcfs["y1"]) == (10, 20)
    assert (drf["x2"], drf["y1"]) == (20, 10)


def test_a_job_no_machine_can_hold_is_cancelled_under_cons(tmp_path):
    trace = _trace(tmp_path, [("big", 0, 10, 16, "a", "g", 0), ("ok", 1, 10, 8, "a", "g", 0)])
    result, starts = _run(trace, "fcfs", ONE_MACHINE, backfill="cons")
    status = dict(zip(result.jobs["job_id"], result.jobs["status"]))
    assert status == {"big": "cancelled", "ok": "finished"} and starts["ok"] == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machines=st.integers(1, 4), cpus=st.integers(1, 4), jobs=jobs_strategy)
def test_one_group_in_arrival_order_on_one_cluster_is_the_batch_conservative_schedule(machines, cpus, jobs):
    """Nothing to share, no memory asked, one cluster: the batch engine's CONS, job for job (with several
    clusters the batch engine keeps other clusters' reservations when one re-plans; the site re-plans all).
    Estimates are positive: the batch engine plans a zero estimate without taking CPUs in its profile."""
    assume(all(job[1] + job[4] > 0 for job in jobs))
    # Known difference, left open: a job that runs 0 s and ends at its start is no early end to the batch
    # engine (no re-plan), while the site's pass after it re-plans (1 CPU; A 1 s, then B and C of 0 s with
    # estimates 2 and 1: batch starts C at 3, the site at 2; both could start it at 1).
    assume(all(job[1] > 0 for job in jobs))
    clusters = [(machines, cpus, 1.0, 1000)]
    site = site_run(clusters, jobs, [], FCFSOrder(backfill="cons", backfill_depth=0), memory=False)
    batch = batch_run(clusters, jobs, [], Conservative())
    assert site.status == batch.status
    np.testing.assert_array_equal(np.asarray(site.start_time), np.asarray(batch.start_time))
    np.testing.assert_array_equal(np.asarray(site.end_time), np.asarray(batch.end_time))
