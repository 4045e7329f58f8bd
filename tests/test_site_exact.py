"""Hand-computed site runs: queue order by fair share, H-DRF against naive H-DRF, memory as a hard limit, elastic starts."""

from __future__ import annotations

import pytest

from sched_engine import ScenarioError, run_scenario

ONE_MACHINE = [{"name": "hall", "machines": 1, "cpus_per_machine": 100}]


def _trace(tmp_path, rows, name="jobs.csv"):
    path = tmp_path / name
    header = "job_id,submit_time,run_time,procs,user,group,memory_per_cpu_mb"
    path.write_text("\n".join([header, *(",".join(map(str, row)) for row in rows)]) + "\n")
    return str(path)


def _run(trace, policy, clusters, backfill="easy", **model):
    result = run_scenario({"engine": "site", "policy": policy, "seed": 1, "policy_params": {"backfill": backfill},
                           "model": {"trace": {"path": trace}, "clusters": clusters, **model}})
    return result, dict(zip(result.jobs["job_id"], result.jobs["start_time"]))


def test_drf_lets_the_group_with_nothing_running_go_before_an_older_job(tmp_path):
    # 8 CPUs. At t=10 job 2 ends and frees 4 CPUs: group A still holds 4 (job 1), group B none.
    trace = _trace(tmp_path, [(1, 0, 100, 4, "a", "A", 0), (2, 0, 10, 4, "a", "A", 0),
                              (3, 1, 10, 4, "a", "A", 0), (4, 2, 10, 4, "b", "B", 0)])
    clusters = [{"name": "c", "machines": 8, "cpus_per_machine": 1}]
    _, fcfs = _run(trace, "fcfs", clusters)
    _, drf = _run(trace, "drf", clusters)
    assert (fcfs["3"], fcfs["4"]) == (10, 20)   # arrival order
    assert (drf["3"], drf["4"]) == (20, 10)     # B's dominant share 0 < A's 4/8


def test_a_job_starting_ahead_of_a_kept_head_moves_its_reservation(tmp_path):
    # 8 CPUs, DRF. t=0: b0 (1 CPU) and a1 (7 CPUs, ends at 100) run; t=1: b1 asks 7 CPUs, head, shadow 100.
    # t=100: a1 ends; A's share (0) < B's (1/8), so a2 (2 CPUs, to 150) starts ahead of b1, which stays the head.
    # b1 now starts at 150, not 100: a3 (A, 1 CPU, 10 s, after b1 in the order) backfills at its arrival, 101.
    # Kept with its past shadow 100, the reservation would have blocked every backfill until b1 started.
    trace = _trace(tmp_path, [(1, 0, 1000, 1, "b", "B", 0), (2, 0, 100, 7, "a", "A", 0), (3, 1, 10, 7, "b", "B", 0),
                              (4, 2, 50, 2, "a", "A", 0), (5, 101, 10, 1, "a", "A", 0)])
    _, starts = _run(trace, "drf", [{"name": "c", "machines": 8, "cpus_per_machine": 1}])
    assert (starts["4"], starts["3"], starts["5"]) == (100, 150, 101)


def _starvation_trace(tmp_path):
    # The fair-sharing spec's F5 tree as batch jobs: root -> n1 (memory), n2 -> {n21 (CPUs), n22 (memory)}.
    # One machine of 100 CPUs and 100,000 MB. n21 holds half the CPUs, n1 30% of the memory; job 3 (n1) holds
    # 60% until t=10, when n1's job 4 and n22's job 5 both wait for 60% of the memory: only one fits.
    return _trace(tmp_path, [(1, 0, 1000, 50, "21", "n2", 0), (2, 0, 1000, 1, "1", "n1", 30000),
                             (3, 0, 10, 1, "1", "n1", 60000), (4, 1, 100, 1, "1", "n1", 60000),
                             (5, 2, 100, 1, "22", "n2", 60000)])


STARVATION_TREE = {"name": "root", "children": [
    {"name": "n1", "children": [{"name": "n11", "user": "1"}]},
    {"name": "n2", "children": [{"name": "n21", "user": "21"}, {"name": "n22", "user": "22"}]}]}


@pytest.mark.parametrize("policy, first", [("naive-hdrf", "4"), ("hdrf", "5"), ("fcfs", "4"), ("mch", "5")])
def test_hdrf_serves_the_memory_user_of_the_cpu_heavy_department_where_naive_hdrf_does_not(tmp_path, policy, first):
    # Naive: n2's summed usage (CPU 0.5) > n1's (memory 0.3), so n1's job 4 goes first and n22 keeps waiting.
    # H-DRF: n21 has nothing to run (blocked, ignored), so n2's share is n22's, 0, and job 5 goes first.
    # MCH: n22's flattened weight (1/2 of n2's) against n1's 1 still gives n22 the lower weighted share (0).
    result, starts = _run(_starvation_trace(tmp_path), policy, ONE_MACHINE,
                          memory_per_machine_mb={"hall": 100000}, organisation={"tree": STARVATION_TREE})
    second = "5" if first == "4" else "4"
    assert (starts[first], starts[second]) == (10, 110)
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["5", "group"] == "n2" and jobs.loc["5", "leaf"] == "n2/n22"


def _memory_trace(tmp_path):
    # 2 machines x 2 CPUs x 4000 MB. Jobs 1 and 2 take 1 CPU and 3000 MB on each machine; job 3 asks
    # 2 CPUs x 1500 MB: two CPUs are free, but each machine has only 1000 MB left.
    return _trace(tmp_path, [(1, 0, 100, 1, "a", "A", 3000), (2, 0, 50, 1, "a", "A", 3000),
                             (3, 2, 10, 2, "b", "B", 1500)])


MEMORY_CLUSTERS = [{"name": "c", "machines": 2, "cpus_per_machine": 2}]


def test_memory_blocks_a_job_that_cpus_alone_would_start(tmp_path):
    trace = _memory_trace(tmp_path)
    _, starts = _run(trace, "fcfs", MEMORY_CLUSTERS, memory_per_machine_mb={"c": 4000})
    assert starts["3"] == 50            # job 2 ends and gives back 3000 MB and its CPU on machine 1
    batch = run_scenario({"engine": "batch", "policy": "easy",
                          "model": {"trace": {"path": trace}, "clusters": MEMORY_CLUSTERS}})
    assert batch.jobs.set_index("job_id").loc["3", "start_time"] == 2   # CPUs alone


def test_a_memory_elastic_start_runs_longer_by_the_penalty(tmp_path):
    result, starts = _run(_memory_trace(tmp_path), "fcfs", MEMORY_CLUSTERS, memory_per_machine_mb={"c": 4000},
                          memory_elastic={"enabled": True, "min_fraction": 0.5,
                                          "penalty": {"kind": "step", "factor": 1.5}})
    job = result.jobs.set_index("job_id").loc["3"]
    # 1000 MB of 1500 per CPU fit on each machine: f = 2/3 (found to 1/1000), runtime 10 x 1.5.
    assert starts["3"] == 2
    assert 0.666 <= job["memory_fraction"] <= 2 / 3
    assert job["elastic_penalty"] == 1.5 and job["end_time"] == 17
    assert job["memory_mb"] == pytest.approx(2 * 1500 * job["memory_fraction"])
    assert dict(zip(result.summary["metric"], result.summary["value"]))["elastic_starts"] == 1


def test_below_the_smallest_share_the_job_waits(tmp_path):
    _, starts = _run(_memory_trace(tmp_path), "fcfs", MEMORY_CLUSTERS, memory_per_machine_mb={"c": 4000},
                     memory_elastic={"enabled": True, "min_fraction": 0.7})
    assert starts["3"] == 50


def test_memory_not_given_is_assumed_per_cpu_and_said(tmp_path):
    result, _ = _run(_memory_trace(tmp_path), "fcfs", MEMORY_CLUSTERS)
    summary = dict(zip(result.summary["metric"], result.summary["value"]))
    assert summary["memory_assumed"] == 1 and summary["memory_mb"] == 4 * 2048


def test_bad_site_fields_are_named(tmp_path):
    trace = _memory_trace(tmp_path)
    with pytest.raises(ScenarioError, match="memory_per_machine_mb.nope"):
        _run(trace, "fcfs", MEMORY_CLUSTERS, memory_per_machine_mb={"nope": 10})
    with pytest.raises(ScenarioError, match="memory_elastic.min_fraction"):
        _run(trace, "fcfs", MEMORY_CLUSTERS, memory_elastic={"enabled": True, "min_fraction": 1.5})
    with pytest.raises(ScenarioError, match=r"organisation.tree.children\[0\]"):
        _run(trace, "fcfs", MEMORY_CLUSTERS, organisation={"tree": {"name": "root", "children": [{"name": "x"}]}})
