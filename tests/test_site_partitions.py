"""The site engine holds every job to its partition's clusters, as the batch engine does (issue 35, item 4).

The clusters' ``partition=<name>`` properties (a ``slurm.conf``/``sinfo`` file's partitions) and the jobs'
partitions go through the batch kernel's own rule (:func:`sched_engine.batch.requirements.partition_clusters`);
a job whose partition no cluster serves is cancelled with the batch engine's reason.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.pages.site import hardware
from sched_engine.runner import run_scenario


def _csv(path: Path, jobs) -> str:
    """A CSV trace of ``(submit, run, procs, user, partition)`` rows."""
    lines = ["job_id,submit_time,run_time,procs,user,partition"]
    lines += [f"{i + 1},{submit},{run},{procs},{user},{partition}"
              for i, (submit, run, procs, user, partition) in enumerate(jobs)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _site(trace: str, clusters: list[dict], policy: str = "fcfs", backfill: str = "easy"):
    return run_scenario({"engine": "site", "policy": policy, "seed": 1,
                         "policy_params": {"backfill": backfill},
                         "model": {"trace": {"path": trace}, "clusters": clusters}}).jobs.set_index("job_id")


TWO_PARTITIONS = [
    {"name": "short", "machines": 1, "cpus_per_machine": 4, "properties": ["partition=short"]},
    {"name": "long", "machines": 1, "cpus_per_machine": 4, "properties": ["partition=long"]},
]


def test_two_partitions_hold_their_jobs_and_a_partition_without_machines_cancels_its_job(tmp_path):
    trace = _csv(tmp_path / "jobs.csv", [
        (0, 100, 4, "a", "short"),    # 1: fills short until 100
        (10, 50, 2, "b", "short"),    # 2: long is idle, but 2 is a short job: it waits for short, 100 to 150
        (20, 30, 4, "a", "long"),     # 3: backfilled on long at once (short's reservation is elsewhere)
        (30, 10, 1, "b", "debug"),    # 4: no cluster serves debug: cancelled on arrival
        (40, 20, 2, "a", ""),         # 5: no partition: any cluster; long is full until 50, short until 100
    ])
    jobs = _site(trace, TWO_PARTITIONS)
    assert jobs.loc["1", ["cluster", "start_time"]].tolist() == ["short", 0.0]
    assert jobs.loc["2", ["cluster", "start_time"]].tolist() == ["short", 100.0]
    assert jobs.loc["3", ["cluster", "start_time"]].tolist() == ["long", 20.0]
    assert jobs.loc["4", ["status", "reason"]].tolist() == ["cancelled", "partition debug has no machine"]
    assert jobs.loc["5", ["cluster", "start_time"]].tolist() == ["long", 50.0]
    # Without the partitions job 2 starts at once on the idle long cluster: the partitions made the difference.
    free = _site(trace, [{**c, "properties": []} for c in TWO_PARTITIONS])
    assert free.loc["2", ["cluster", "start_time"]].tolist() == ["long", 10.0]
    assert free.loc["4", "status"] == "finished"


def test_the_site_pages_table_gives_its_partitions_to_the_engine(tmp_path):
    rows = [{"name": "batch", "machines": 2, "cpus_per_machine": "4", "memory_per_machine_mb": 64000,
             "partitions": "batch"},
            {"name": "batch+gpu", "machines": 1, "cpus_per_machine": "8", "memory_per_machine_mb": 64000,
             "partitions": "batch, gpu"}]
    model = hardware.hardware_model(rows, 2048)
    assert [c["properties"] for c in model["clusters"]] == [["partition=batch"], ["partition=batch", "partition=gpu"]]
    trace = _csv(tmp_path / "jobs.csv", [(0, 60, 8, "a", "gpu"), (0, 60, 4, "b", "batch"), (5, 60, 1, "a", "debug")])
    jobs = run_scenario({"engine": "site", "policy": "fcfs", "seed": 1,
                         "model": {"trace": {"path": trace}, **model}}).jobs.set_index("job_id")
    assert jobs.loc["1", "cluster"] == "batch+gpu" and jobs.loc["2", "cluster"] == "batch"
    assert jobs.loc["3", "reason"] == "partition debug has no machine"
    said = " ".join(str(line) for line in hardware.partition_lines(model["clusters"], pd.DataFrame(
        {"partition": ["gpu", "batch", "debug", "debug"]})))
    assert "2 jobs will be cancelled: partition debug has no machine (2 jobs)" in said


cluster_partitions = st.lists(st.sets(st.sampled_from("pqr"), min_size=1, max_size=2), min_size=1, max_size=3)
job_rows = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 30), st.integers(1, 6), st.sampled_from("uvw"),
                              st.sampled_from(["p", "q", "r", "s", ""])), min_size=1, max_size=20)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_partitions, st.lists(st.integers(1, 4), min_size=3, max_size=3), job_rows,
       st.sampled_from(["fcfs", "hdrf", "drf", "recorded"]), st.sampled_from(["none", "easy", "cons"]))
def test_no_job_ever_runs_outside_its_partition(partitions, cpus, rows, policy, backfill):
    clusters = [{"name": f"c{i}", "machines": 2, "cpus_per_machine": cpus[i],
                 "properties": sorted(f"partition={p}" for p in names)} for i, names in enumerate(partitions)]
    serving = {f"c{i}": names for i, names in enumerate(partitions)}
    with tempfile.TemporaryDirectory() as folder:
        trace = _csv(Path(folder) / "jobs.csv", sorted(rows))
        scenario = {"engine": "site", "policy": policy, "seed": 1,
                    "model": {"trace": {"path": trace}, "clusters": clusters}}
        if policy != "recorded":
            scenario["policy_params"] = {"backfill": backfill}
        jobs = run_scenario(scenario).jobs
    served = set().union(*partitions)
    for _, job in jobs.iterrows():
        partition = sorted(rows)[int(job["job_id"]) - 1][4]
        if job["status"] in ("finished", "killed", "running"):
            assert partition == "" or partition in serving[job["cluster"]]
        if partition and partition not in served:
            assert job["status"] == "cancelled" and job["reason"] == f"partition {partition} has no machine"
