"""Hand-computed cases of the elasticity engine: the two-job example and the penalty models."""

import math

import numpy as np
import pytest

from sched_engine import ScenarioError, normalize_scenario, run_scenario
from sched_engine.elastic import penalty
from sched_engine.elastic.presets import two_job_model

TWO_JOBS = {"a": (0.0, 100.0), "b": (1.0, 199.0)}  # arrival, YARN job runtime


def _run(policy, model=None, **params):
    result = run_scenario({"engine": "elastic", "policy": policy, "policy_params": params,
                           "model": model or two_job_model()})
    return result.jobs.set_index("job_id"), result


def test_yarn_two_jobs_queue_for_memory():
    jobs, _ = _run("yarn")
    assert jobs.loc["a", "runtime_s"] == 100.0
    assert jobs.loc["b", "start_time"] == 100.0
    assert jobs.loc["b", "runtime_s"] == 199.0
    assert jobs["elastic_tasks"].sum() == 0


def test_yarn_me_starts_the_second_job_at_once_under_sized():
    jobs, result = _run("yarn-me")
    assert jobs.loc["a", "runtime_s"] == 100.0
    assert jobs.loc["b", "start_time"] == 1.0
    assert jobs.loc["b", "end_time"] == 151.0
    assert jobs.loc["b", "runtime_s"] == 150.0
    assert jobs.loc["b", "elastic_tasks"] == 1
    # the elastic grant is the least memory with the lowest runtime: 10% of 6000 MB
    held = result.timeline.query("entity == 'node-0/b' and metric == 'job_memory_mb'")
    assert held["value"].iloc[0] == 600.0
    assert result.summary_value("mean_job_runtime_s") == 125.0


def test_yarn_me_declines_when_elastic_would_finish_after_the_regular_estimate():
    model = two_job_model()
    model["penalty"] = {"kind": "step", "factor": 2.5}  # 1 + 250 > 100 + 100
    jobs, _ = _run("yarn-me", model)
    assert jobs.loc["b", "start_time"] == 100.0 and jobs.loc["b", "elastic_tasks"] == 0


def test_disk_contention_cap_of_zero_is_plain_yarn():
    jobs, _ = _run("yarn-me", max_elastic_per_node=0)
    assert jobs.loc["b", "runtime_s"] == 199.0


def test_meganode_pools_the_nodes():
    model = two_job_model()
    model["nodes"] = [{"count": 2, "cores": 1, "memory_mb": 6000}]
    jobs, _ = _run("meganode", model)
    assert list(jobs["runtime_s"]) == [100.0, 100.0]
    jobs, _ = _run("yarn", model)
    assert list(jobs["runtime_s"]) == [100.0, 100.0]


def test_meganode_runs_the_shortest_remaining_job_first():
    model = two_job_model()
    model["trace"]["jobs"] = [
        {"job_id": "hog", "arrival": 0.0, "tasks": [{"count": 1, "memory_mb": 10000, "duration": 10.0}]},
        {"job_id": "long", "arrival": 1.0, "tasks": [{"count": 3, "memory_mb": 10000, "duration": 10.0}]},
        {"job_id": "short", "arrival": 2.0, "tasks": [{"count": 1, "memory_mb": 10000, "duration": 10.0}]},
    ]
    jobs, _ = _run("meganode", model)
    assert jobs.loc["short", "end_time"] == 20.0 and jobs.loc["long", "end_time"] == 50.0
    jobs, _ = _run("yarn", model)  # fair share: equal memory in use, earlier arrival first
    assert jobs.loc["long", "start_time"] == 10.0


def test_reduce_phase_starts_after_the_maps():
    model = two_job_model()
    model["trace"]["jobs"] = [{"job_id": "mr", "arrival": 0.0, "tasks": [
        {"count": 2, "memory_mb": 1000, "duration": 10.0, "phase": "map"},
        {"count": 1, "memory_mb": 1000, "duration": 5.0, "phase": "reduce"},
    ]}]
    jobs, _ = _run("yarn", model)
    assert jobs.loc["mr", "end_time"] == 15.0
    assert jobs.loc["mr", "map_phase_s"] == 10.0 and jobs.loc["mr", "reduce_phase_s"] == 5.0


def test_step_penalty():
    assert penalty.step_runtime(0.5, 100.0, 1.5) == 150.0
    assert penalty.step_runtime(0.1, 100.0, 1.5) == 150.0
    assert penalty.step_runtime(1.0, 100.0, 1.5) == 100.0
    assert penalty.runtime({"kind": "step", "factor": 1.5}, 0.3, 100.0) == 150.0


def test_spilled_bytes_paper_examples():
    # §2.3: a 2.01 GB input spills 2 GB with 0.5 GB and 2 GB buffers, 1.5 GB with a 1.5 GB buffer
    assert penalty.spilled_bytes(2010, 500 / 0.7) == pytest.approx(2000)
    assert penalty.spilled_bytes(2010, 2000 / 0.7) == pytest.approx(2000)
    assert penalty.spilled_bytes(2010, 1500 / 0.7) == pytest.approx(1500)
    assert penalty.spilled_bytes(2000, 2000 / 0.7) == 0.0


def test_reducer_equation_and_fit_from_two_runs():
    # T(notId) = T + spilledBytes / diskRate: 100 s ideal, 1400 MB input, heap 1000 MB -> 700 MB buffer, spills 700 MB
    assert penalty.reducer_runtime(100.0, 1400.0, 1000.0, 7.0) == pytest.approx(200.0)
    rate = penalty.fit_disk_rate(100.0, 200.0, 1400.0, 1000.0)
    assert rate == pytest.approx(7.0)
    # predicted for another heap: 500 MB -> 350 MB buffer, ceil(4) - 1 = 3 buffers spilled
    assert penalty.reducer_runtime(100.0, 1400.0, 500.0, rate) == pytest.approx(250.0)
    # the dimensionless fitted model gives the same profile
    fitted = {"kind": "fitted", "shape": "spill", "profile_fraction": 1000 / 2000, "profile_ratio": 2.0}
    assert penalty.runtime(fitted, 500 / 2000, 100.0) == pytest.approx(250.0)
    assert penalty.runtime({"kind": "fitted", "shape": "step", "profile_fraction": 0.52, "profile_ratio": 1.3}, 0.2, 10.0) == pytest.approx(13.0)


def test_sawtooth_maxima_just_above_integer_ratios():
    fractions = np.round(np.arange(0.1, 1.0, 0.01), 4)
    runtimes = np.array([penalty.spill_runtime(f, 100.0, 3.0) for f in fractions])
    ratios = 1.0 / fractions  # input / buffer
    peaks = [i for i in range(1, len(fractions) - 1) if runtimes[i] > runtimes[i - 1] and runtimes[i] >= runtimes[i + 1]]
    assert peaks
    for i in peaks:
        # the first grid point past an integer ratio: the next larger fraction is at or below it
        k = math.floor(ratios[i])
        assert ratios[i + 1] <= k < ratios[i]
    assert {math.floor(ratios[i]) for i in peaks} >= {2, 3, 4, 5}
    # minima sit where input / buffer is an integer: half the ideal memory spills half the input
    assert penalty.spill_runtime(0.5, 100.0, 3.0) == pytest.approx(200.0)
    assert penalty.spill_runtime(0.49, 100.0, 3.0) > penalty.spill_runtime(0.5, 100.0, 3.0)
    assert penalty.spill_runtime(1.0, 100.0, 3.0) == 100.0


@pytest.mark.parametrize("mutate, field, text", [
    (lambda m: m["nodes"][0].update(cores=0), "model.nodes[0].cores", "greater than 0"),
    (lambda m: m["trace"]["jobs"][0]["tasks"][0].update(memory_mb=20000), "model.job a: task group 0",
     "more than any node has (10000 MB)"),
    (lambda m: m.update(penalty={"kind": "step", "factor": 0.5}), "model.penalty.factor", "cannot be faster"),
    (lambda m: m.update(penalty={"kind": "wave"}), "model.penalty.kind", "unknown penalty model"),
    (lambda m: m["trace"]["jobs"][1].update(job_id="a"), "model.trace.jobs[1].job_id", "duplicate"),
    (lambda m: m.update(trace={"kind": "generated", "jobs": 5, "tasks_per_job": [1, 5], "memory_gb": [1, 12],
                               "duration_s": [1, 10]}), "model.trace.memory_gb", "exceeds the largest node"),
])
def test_bad_models_name_their_field(mutate, field, text):
    model = two_job_model()
    mutate(model)
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "elastic", "policy": "yarn", "model": model})
    assert caught.value.field == field
    assert text in caught.value.message


def test_bad_policy_parameter_is_reported():
    with pytest.raises(ScenarioError, match="min_fraction"):
        normalize_scenario({"engine": "elastic", "policy": "yarn-me", "policy_params": {"min_fraction": 2},
                            "model": two_job_model()})
