"""Hand-computed cases for the YARN-ME paper's definitions (Iorgulescu et al., ATC'17), issue 20.

Each case is small enough to follow on paper; the comments give the arithmetic.
"""

import math

import pytest

from sched_engine import ScenarioError, normalize_scenario, run_scenario


def _one_node(*jobs, penalty=3.0):
    """One node of 16 cores and 10 GB, a step penalty; ``jobs`` as (id, arrival, memory_mb, duration)."""
    return {
        "nodes": [{"count": 1, "cores": 16, "memory_mb": 10_000}],
        "memory_step_mb": 100,
        "penalty": {"kind": "step", "factor": penalty},
        "trace": {"kind": "jobs", "jobs": [
            {"job_id": j, "arrival": a, "tasks": [{"count": 1, "memory_mb": m, "duration": d}]}
            for j, a, m, d in jobs]},
    }


def _jobs(policy, model, **params):
    result = run_scenario({"engine": "elastic", "policy": policy, "policy_params": params, "model": model})
    return result.jobs.set_index("job_id")


# --- §3.3 "Node reservations" ------------------------------------------------------------------------------------
# A 6000 MB x 100 s at 0 holds the node until 100. B 8000 MB x 100 s arrives at 1: 4000 MB are free, so B
# does not fit regularly; elastically (3x step) it would end at 1 + 300 = 301, after its regular estimate
# 100 + 100 = 200, so YARN-ME declines (Alg. 1, l. 9) and reserves the node for B. B's task can start at
# 100, when A's 6000 MB come back. YARN-ME "allows tasks of other jobs to be allocated on a reserved node,
# but only if this does not hinder the tasks of the reserved job" (§3.3): a task of another job that ends
# by 100 does not.
RESERVED = [("a", 0.0, 6000, 100.0), ("b", 1.0, 8000, 100.0)]


def test_a_task_ending_before_the_reserved_start_uses_the_reserved_node():
    # C 1000 MB x 10 s at 2 fits the 4000 free MB and ends at 12 <= 100.
    jobs = _jobs("yarn-me", _one_node(*RESERVED, ("c", 2.0, 1000, 10.0)))
    assert (jobs.loc["c", "start_time"], jobs.loc["c", "end_time"]) == (2.0, 12.0)
    assert (jobs.loc["b", "start_time"], jobs.loc["b", "end_time"]) == (100.0, 200.0)
    assert jobs.loc["b", "elastic_tasks"] == 0


def test_a_task_ending_after_the_reserved_start_waits():
    # D 1000 MB x 200 s would end at 202 > 100: it waits; at 100 B takes 8000 MB, D the next 1000 MB.
    jobs = _jobs("yarn-me", _one_node(*RESERVED, ("d", 2.0, 1000, 200.0)))
    assert (jobs.loc["b", "start_time"], jobs.loc["b", "end_time"]) == (100.0, 200.0)
    assert (jobs.loc["d", "start_time"], jobs.loc["d", "end_time"]) == (100.0, 300.0)


def test_an_elastic_task_of_another_job_may_fill_the_gap():
    # E 5000 MB x 10 s at 2 does not fit the 4000 free MB; under-sized at 10% (500 MB, 3x) it ends at
    # 2 + 30 = 32 <= 100 and before its own regular estimate (100 + 10 = 110): it runs elastically.
    jobs = _jobs("yarn-me", _one_node(*RESERVED, ("e", 2.0, 5000, 10.0)))
    assert (jobs.loc["e", "start_time"], jobs.loc["e", "end_time"]) == (2.0, 32.0)
    assert jobs.loc["e", "elastic_tasks"] == 1
    assert (jobs.loc["b", "start_time"], jobs.loc["b", "end_time"]) == (100.0, 200.0)


def test_stock_yarn_keeps_reserved_nodes_for_their_job():
    # §3.3: in YARN "no other jobs can schedule tasks on the reserved node": C starts at 100 beside B.
    jobs = _jobs("yarn", _one_node(*RESERVED, ("c", 2.0, 1000, 10.0)))
    assert (jobs.loc["c", "start_time"], jobs.loc["c", "end_time"]) == (100.0, 110.0)
    assert (jobs.loc["b", "start_time"], jobs.loc["b", "end_time"]) == (100.0, 200.0)


# --- §3.3 "Disk contention awareness": an explicit setting, off in §6 -----------------------------------------------
# A 9000 MB x 100 s at 0 leaves 1000 MB free until 100. B has 5 tasks of 2000 MB x 10 s and arrives at 1; its
# regular estimate is 100 + 10 = 110. With a 1.5x step penalty its least grant, 200 MB (10%), runs 15 s, so the
# free 1000 MB hold 5 elastic tasks at once, each ending long before 110.
def _five_small_tasks():
    model = _one_node(("a", 0.0, 9000, 100.0), penalty=1.5)
    model["trace"]["jobs"].append(
        {"job_id": "b", "arrival": 1.0, "tasks": [{"count": 5, "memory_mb": 2000, "duration": 10.0}]})
    return model


def test_no_disk_contention_limit_by_default():
    # §6.1's simulation models no disk contention: all 5 start at 1 and end at 16 (the former cap of 4 gave 31).
    jobs = _jobs("yarn-me", _five_small_tasks())
    assert jobs.loc["b", "end_time"] == 16.0 and jobs.loc["b", "elastic_tasks"] == 5


def test_disk_bandwidth_sets_the_elastic_task_limit():
    # floor(120 / 30) = 4 at once: 4 run 1-16, the fifth 16-31
    assert _jobs("yarn-me", _five_small_tasks(), disk_bandwidth_mb_s=120.0, elastic_spill_mb_s=30.0)\
        .loc["b", "end_time"] == 31.0
    # floor(50 / 30) = 1: one after another, 1-16, 16-31, 31-46, 46-61, 61-76
    assert _jobs("yarn-me", _five_small_tasks(), disk_bandwidth_mb_s=50.0).loc["b", "end_time"] == 76.0
    # the direct count and the disk portion together: the smaller (2) holds: 1-16 (2), 16-31 (2), 31-46
    assert _jobs("yarn-me", _five_small_tasks(), disk_bandwidth_mb_s=120.0, max_elastic_per_node=2)\
        .loc["b", "end_time"] == 46.0
    # no bandwidth for spills: no elastic task, B waits for A's memory
    jobs = _jobs("yarn-me", _five_small_tasks(), disk_bandwidth_mb_s=0.0)
    assert jobs.loc["b", "end_time"] == 110.0 and jobs.loc["b", "elastic_tasks"] == 0


@pytest.mark.parametrize("params, field", [
    ({"disk_bandwidth_mb_s": -1.0}, "policy_params.disk_bandwidth_mb_s"),
    ({"disk_bandwidth_mb_s": "fast"}, "policy_params.disk_bandwidth_mb_s"),
    ({"elastic_spill_mb_s": 0.0}, "policy_params.elastic_spill_mb_s"),
    ({"elastic_spill_mb_s": None}, "policy_params.elastic_spill_mb_s"),
    ({"max_elastic_per_node": 2.5}, "policy_params.max_elastic_per_node"),
])
def test_disk_contention_settings_are_checked_by_the_registry(params, field):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "elastic", "policy": "yarn-me", "policy_params": params,
                            "model": _five_small_tasks()})
    assert caught.value.field == field


def test_the_limit_is_off_in_the_paper_reproductions():
    from sched_engine.elastic.policies import YARNME
    from sched_engine.registry import REGISTRY

    assert REGISTRY.create("elastic", "yarn-me").elastic_task_limit() == math.inf
    assert YARNME(disk_bandwidth_mb_s=120.0).elastic_task_limit() == 4
    assert YARNME(disk_bandwidth_mb_s=0.3, elastic_spill_mb_s=0.1).elastic_task_limit() == 3  # not 2.999...
    # the gallery's YARN-ME runs (the §6 set-up and the reduced Fig. 6 sweep) run without it
    from components.pages.gallery.cards import CARDS

    runs = [scenario for card in CARDS for scenario in card.scenarios.values() if scenario["policy"] == "yarn-me"]
    assert len(runs) >= 9
    for scenario in runs:
        params = normalize_scenario(scenario).policy_params
        assert params["disk_bandwidth_mb_s"] is None and params["max_elastic_per_node"] is None


def test_the_fig6_sweep_runs_without_the_limit_unless_asked():
    from sched_engine import sweeps

    # 10 jobs arriving in 100 s on 4 nodes: elastic tasks matter, so the three settings give three results
    tiny = {"kind": "elastic-fig6", "distributions": ["uniform"], "maxima": 1, "traces": 1, "penalties": [1.5],
            "nodes": 4, "cores": 16, "node_memory_gb": 10.0, "jobs": 10, "seed": 3, "arrival_s": [0, 100]}
    assert all(p["disk_bandwidth_mb_s"] is None for p in sweeps.expand({"kind": "elastic-fig6"}))
    seen = set()
    for disk in (None, 0.0, 60.0):
        point = sweeps.expand({**tiny, "disk_bandwidth_mb_s": disk})[0]
        model = {"nodes": [{"count": 4, "cores": 16, "memory_mb": 10_000}], "memory_step_mb": 100,
                 "penalty": {"kind": "spill", "factor": 1.5},
                 "trace": {"kind": "generated", "distribution": "uniform", "jobs": 10,
                           "tasks_per_job": point["tasks_per_job"], "memory_gb": point["memory_gb"],
                           "duration_s": point["duration_s"], "arrival_s": [0.0, 100.0]}}
        run = run_scenario({"engine": "elastic", "policy": "yarn-me", "seed": point["seed"], "model": model,
                            "policy_params": {"disk_bandwidth_mb_s": disk}})
        ours = sweeps.run_point(point)["yarn_me_1.5x_s"]
        assert ours == pytest.approx(run.summary_value("mean_job_runtime_s"), rel=1e-12)
        seen.add(round(ours, 6))
    assert len(seen) == 3


# --- §6.2 Meganode: an idealised bound does not leave memory idle that a waiting task fits ------------------------
# One pooled node of 10 GB. A 6000 MB x 100 s at 0 runs until 100. B (3 tasks of 8000 MB x 10 s, 30 task-seconds)
# arrives at 1 and C (1 task of 1000 MB x 50 s, 50 task-seconds) at 2. SRJF puts B first, but no task of B fits
# the 4000 free MB before 100. C's does: the bound runs C at once (2-52); B still runs 100-110-120-130.
def _meganode_case():
    model = _one_node(("a", 0.0, 6000, 100.0), ("c", 2.0, 1000, 50.0))
    model["trace"]["jobs"].insert(
        1, {"job_id": "b", "arrival": 1.0, "tasks": [{"count": 3, "memory_mb": 8000, "duration": 10.0}]})
    return model


def test_meganode_serves_the_next_job_that_fits():
    jobs = _jobs("meganode", _meganode_case())
    assert (jobs.loc["c", "start_time"], jobs.loc["c", "end_time"]) == (2.0, 52.0)
    assert (jobs.loc["b", "start_time"], jobs.loc["b", "end_time"]) == (100.0, 130.0)
    assert jobs["runtime_s"].mean() == (100.0 + 129.0 + 50.0) / 3


def test_meganode_head_of_line_reading_is_kept_as_an_option():
    # The engine's former reading: nothing starts while the SRJF head does not fit. B's last task starts at
    # 120 and leaves the queue; C then starts on the 2000 MB beside it and ends at 170.
    jobs = _jobs("meganode", _meganode_case(), blocked="wait")
    assert (jobs.loc["c", "start_time"], jobs.loc["c", "end_time"]) == (120.0, 170.0)
    assert jobs.loc["b", "end_time"] == 130.0


def test_wilson_interval_by_hand():
    from sched_engine.elastic.metrics import share_interval

    # 5 of 10, z = 1.96: centre 0.5, half 1.96 * sqrt(0.025 + 0.009604) / 1.38416 = 0.26341
    low, high = share_interval(5, 10)
    assert (low, high) == (pytest.approx(0.23659, abs=1e-5), pytest.approx(0.76341, abs=1e-5))
    # 0 of 20: not the empty interval [0, 0]; upper end z² / (n + z²) = 3.8416 / 23.8416
    assert share_interval(0, 20) == (0.0, pytest.approx(3.8416 / 23.8416))
