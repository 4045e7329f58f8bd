"""Hand-computed cases for the YARN-ME paper's definitions (Iorgulescu et al., ATC'17), issue 20.

Each case is small enough to follow on paper; the comments give the arithmetic.
"""

from sched_engine import run_scenario


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
