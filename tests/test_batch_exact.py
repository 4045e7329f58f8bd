"""Hand-computed batch cases (spec §2 (a)-(c), FCFS, Conservative, failures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY
from sched_engine.runner import run_scenario

DATA = Path(__file__).parent / "data" / "batch"


def starts(policy: str, trace: str, **model) -> dict[str, float]:
    result = run_scenario(
        {"engine": "batch", "policy": policy, "model": {"trace": {"path": str(DATA / trace)}, **model}}
    )
    jobs = result.jobs.set_index("job_id")
    return {job: (row.start_time, row.status) for job, row in jobs.iterrows()}


def start_times(policy: str, trace: str, **model) -> list[float]:
    return [start for start, _ in starts(policy, trace, **model).values()]


def test_easy_never_delays_the_head_reservation():
    # Job 2 reserved at 10; job 3 would hold 2 CPUs past 10 with none spare.
    assert start_times("easy", "easy_no_delay.swf") == [0, 10, 20, 3]


def test_fcfs_starts_in_submission_order_without_backfilling():
    assert start_times("fcfs", "easy_no_delay.swf") == [0, 10, 20, 20]


def test_easy_head_starts_at_once_when_a_job_ends_early():
    # Reserved at 20 by job 1's estimate; job 1 really ends at 5.
    assert start_times("easy", "easy_early_end.swf", estimates="trace") == [0, 5]
    # With perfect estimates the reservation is exact.
    assert start_times("easy", "easy_early_end.swf") == [0, 5]


def test_easy_backfills_beside_the_reservation_on_spare_cpus():
    assert start_times("easy", "easy_spare.swf") == [0, 10, 2]


def test_conservative_reserves_every_job():
    assert start_times("easy", "cons_vs_easy.swf") == [0, 10, 20, 3]
    assert start_times("cons", "cons_vs_easy.swf") == [0, 10, 10, 20]


def test_conservative_compresses_the_schedule_when_a_job_ends_early():
    assert start_times("cons", "easy_early_end.swf", estimates="trace") == [0, 5]


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cons"])
def test_a_failure_kills_exactly_the_jobs_on_the_failed_machine(policy):
    outcome = starts(
        policy, "failure.swf",
        failures={"kind": "trace", "path": str(DATA / "failure.failures"), "align": "absolute"},
    )
    assert outcome["1"] == (0, "killed")
    assert outcome["2"] == (0, "finished")
    assert outcome["3"][1] == "cancelled"  # 4 CPUs asked while 3 are up
    assert outcome["4"] == (20, "finished")


def test_killed_job_ends_at_the_failure_time_and_is_not_resubmitted():
    result = run_scenario(
        {"engine": "batch", "policy": "easy", "model": {
            "trace": {"path": str(DATA / "failure.swf")},
            "failures": {"kind": "trace", "path": str(DATA / "failure.failures"), "align": "absolute"},
        }}
    )
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["1", "end_time"] == 5
    assert jobs.loc["1", "reason"] == "machine failure"
    assert (jobs.loc["1", "machines"], jobs.loc["2", "machines"], jobs.loc["3", "machines"]) == ("0,1", "2,3", "")
    down = result.timeline[result.timeline["metric"] == "machine_down"]
    assert down[["time", "entity", "value"]].values.tolist() == [[5.0, "cluster/1", 1.0], [15.0, "cluster/1", 0.0]]
    assert result.summary_value("killed") == 1
    assert result.summary_value("cancelled") == 1
    # Averages count completed jobs only: jobs 2 (response 20) and 4 (start 20, submit 7, run 10).
    assert result.summary_value("mean_response_s") == pytest.approx((20 + 23) / 2)
    assert result.summary_value("mean_wait_s") == pytest.approx((0 + 13) / 2)


def test_requirements_restrict_clusters_and_cancel_unservable_jobs(tmp_path):
    trace = tmp_path / "req.csv"
    trace.write_text(
        "job_id,submit_time,run_time,procs,requirement\n"
        "a,0,10,2,1:ppn=2:cl_small\n"
        "b,0,10,2,1:ppn=8\n"
        "c,0,10,1,gpu\n"
        "d,0,10,1,\n"
    )
    clusters = [
        {"name": "big", "machines": 1, "cpus_per_machine": 8, "speed": 1.0, "properties": ["gpu"]},
        {"name": "small", "machines": 2, "cpus_per_machine": 2, "speed": 2.0, "properties": []},
    ]
    result = run_scenario({"engine": "batch", "policy": "fcfs", "model": {
        "trace": {"path": str(trace)}, "clusters": clusters, "requirements": True,
    }})
    placed = dict(zip(result.jobs.job_id, result.jobs.cluster))
    # a names its cluster; b needs 8 CPUs per machine; c a property only "big" has;
    # d may go anywhere and takes the fastest cluster with room (small, speed 2).
    assert placed == {"a": "small", "b": "big", "c": "big", "d": "small"}
    off = run_scenario({"engine": "batch", "policy": "fcfs", "model": {
        "trace": {"path": str(trace)}, "clusters": clusters, "requirements": False,
    }})
    # Without requirements a and b fill the fast cluster first, whatever they ask.
    assert dict(zip(off.jobs.job_id, off.jobs.cluster)) == {"a": "small", "b": "small", "c": "big", "d": "big"}


def test_multi_cluster_rule_prefers_the_fastest_then_the_largest(tmp_path):
    trace = tmp_path / "two.csv"
    trace.write_text("job_id,submit_time,run_time,procs\n1,0,10,1\n2,0,10,4\n")
    clusters = [
        {"name": "slow-small", "machines": 1, "cpus_per_machine": 2, "speed": 1.0},
        {"name": "slow-big", "machines": 1, "cpus_per_machine": 4, "speed": 1.0},
        {"name": "fast", "machines": 1, "cpus_per_machine": 2, "speed": 3.0},
    ]
    result = run_scenario({"engine": "batch", "policy": "easy", "model": {
        "trace": {"path": str(trace)}, "clusters": clusters,
    }})
    assert list(result.jobs.cluster) == ["fast", "slow-big"]


@pytest.mark.parametrize("policy", [p.name for p in REGISTRY.policies("batch")])
def test_every_policy_is_deterministic_for_a_seed(policy):
    scenario = {"engine": "batch", "policy": policy, "seed": 7, "model": {
        "trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 300},
        "failures": {"kind": "synthetic", "afc": 0.002},
    }}
    first, second = run_scenario(scenario), run_scenario(scenario)
    columns = ["job_id", "start_time", "end_time", "status", "cluster"]
    assert first.jobs[columns].equals(second.jobs[columns])
    assert set(first.jobs.status) <= {"finished", "killed", "cancelled"}


def test_a_load_factor_divides_the_time_since_the_first_submission():
    # Submissions 0, 1, 2, 3 become 0, 0.5, 1, 1.5 at twice the load: job 4 still ends (6.5) before
    # the head's reservation at 10 and is backfilled on arrival.
    result = run_scenario({"engine": "batch", "policy": "easy",
                           "model": {"trace": {"path": str(DATA / "easy_no_delay.swf")}, "load_factor": 2}})
    assert result.jobs["submit_time"].tolist() == [0, 0.5, 1, 1.5]
    assert result.jobs["start_time"].tolist() == [0, 10, 20, 1.5]
    # At half the load job 4 arrives at 6 and would end at 11, past the reservation with no CPU spare.
    assert start_times("easy", "easy_no_delay.swf", load_factor=0.5) == [0, 10, 20, 20]


@pytest.mark.parametrize("value", [0, -1, 1000, "2", float("nan")])
def test_a_load_factor_out_of_range_names_the_field(value):
    with pytest.raises(ScenarioError) as caught:
        start_times("fcfs", "easy_no_delay.swf", load_factor=value)
    assert caught.value.field == "model.load_factor"


def _bound(policy, procs, estimate, cpus=4):
    """A simulation the policy is bound to, on one ``cpus``-CPU machine (jobs submitted at 0)."""
    from sched_engine.batch.cluster import ClusterState
    from sched_engine.batch.simulate import BatchSimulation

    sim = BatchSimulation(submit=[0.0] * len(procs), run_time=estimate, estimate=estimate, procs=procs,
                          suitable=[None] * len(procs), clusters=[ClusterState(0, "c", [cpus], 1.0)], policy=policy,
                          rng=np.random.default_rng(0))
    policy.bind(sim)
    return sim


def test_easy_returns_its_decisions_and_leaves_the_simulation_alone():
    from sched_engine.batch.policies import EASY, Reserve, Start
    from sched_engine.batch.simulate import RUNNING

    policy = EASY()
    sim = _bound(policy, procs=[3, 4, 1, 2], estimate=[10.0, 5.0, 5.0, 20.0])
    for job in range(4):
        assert list(policy.arrive(job, 0.0)) == []
    decisions = []
    for decision in policy.schedule(0.0):
        decisions.append(decision)
        if isinstance(decision, Start):   # what the engine would do: hold the CPUs
            sim.clusters[0].allocate(decision.job, sim.procs[decision.job], 0.0 + sim.estimate[decision.job])
            sim.status[decision.job] = RUNNING
    # job 0 starts; job 1 (4 CPUs) is reserved at 10; job 2 (1 CPU, ends at 5) backfills;
    # job 3 (2 CPUs) would hold CPUs past 10 and does not fit anyway
    assert decisions == [Start(0, 0), Reserve(1, 10.0, 0), Start(2, 0)]
    assert sim.start_time[0] != sim.start_time[0]   # nothing was started by the policy itself


def test_conservative_reserves_and_asks_for_a_pass_at_each_reservation():
    from sched_engine.batch.policies import Conservative, Reserve, Wake

    policy = Conservative()
    _bound(policy, procs=[3, 4], estimate=[10.0, 5.0])
    assert list(policy.arrive(0, 0.0)) == [Reserve(0, 0.0, 0), Wake(0.0)]
    assert list(policy.arrive(1, 0.0)) == [Reserve(1, 10.0, 0), Wake(10.0)]


def test_whole_node_allocation_rounds_each_job_up_to_whole_machines(tmp_path):
    # Header: 5 nodes, 10 CPUs -> 2 CPUs per machine. Three 3-CPU jobs at 0 for 100 s.
    # By CPUs they hold 9 of 10 and all start at 0; by whole nodes each holds 2 machines
    # (4 CPUs), so the third waits for the first two to end at 100.
    trace = tmp_path / "nodes.swf"
    trace.write_text("; MaxNodes: 5\n; MaxProcs: 10\n" + "".join(
        f"{i} 0 -1 100 3 -1 -1 3 100 -1 1 1 -1 -1 -1 -1 -1 -1\n" for i in (1, 2, 3)))

    def run(**model):
        return run_scenario({"engine": "batch", "policy": "fcfs", "model": {"trace": {"path": str(trace)}, **model}})

    shared = run()
    assert list(shared.jobs.start_time) == [0, 0, 0] and list(shared.jobs.procs) == [3, 3, 3]
    whole = run(allocation="whole_nodes")
    assert list(whole.jobs.start_time) == [0, 0, 100]
    assert list(whole.jobs.procs) == [4, 4, 4]
    assert list(whole.jobs.machines) == ["0,1", "2,3", "0,1"]
    assert whole.summary_value("utilisation") == pytest.approx(12 * 100 / (10 * 200))
    assert whole.scenario["model"]["allocation"] == "whole_nodes" and "allocation" not in shared.scenario["model"]


def test_whole_node_allocation_needs_machines_of_one_size(tmp_path):
    trace = tmp_path / "one.csv"
    trace.write_text("job_id,submit_time,run_time,procs\n1,0,10,1\n")
    clusters = [{"name": "a", "machines": 1, "cpus_per_machine": 2}, {"name": "b", "machines": 1, "cpus_per_machine": 4}]
    with pytest.raises(ScenarioError, match="allocation.*one CPU count, found 2, 4"):
        run_scenario({"engine": "batch", "policy": "fcfs",
                      "model": {"trace": {"path": str(trace)}, "clusters": clusters, "allocation": "whole_nodes"}})
    with pytest.raises(ScenarioError, match="allocation"):
        run_scenario({"engine": "batch", "policy": "fcfs",
                      "model": {"trace": {"path": str(trace)}, "clusters": clusters, "allocation": "nodes"}})


@pytest.mark.parametrize("seed", [3])
def test_local_search_planning_from_saved_states_gives_the_schedule_planning_from_scratch(monkeypatch, seed):
    """A Local Search move re-plans a cluster from the last state saved before the order changes
    (``local_search.SAVED_STATES`` along each plan): saved after every job, two along a plan, and none (every
    plan from scratch), the schedules are the same, on two clusters whose machines fail."""
    from sched_engine.batch.policies import local_search

    scenario = {"engine": "batch", "policy": "ls", "seed": seed, "model": {
        "trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 150},
        "clusters": [{"name": "a", "machines": 64, "cpus_per_machine": 2},
                     {"name": "b", "machines": 32, "cpus_per_machine": 2}],
        "failures": {"kind": "synthetic", "afc": 0.002},
    }}
    frames = []
    for states in (0, 10 ** 9, 2):
        monkeypatch.setattr(local_search, "SAVED_STATES", states)
        frames.append(run_scenario(scenario).jobs[["job_id", "start_time", "end_time", "status", "cluster"]])
    assert frames[0].equals(frames[1]) and frames[0].equals(frames[2])
    assert (frames[0].status == "finished").sum() > 100
