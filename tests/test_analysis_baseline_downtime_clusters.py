"""The down-time step on a model of two clusters: the reservations hold CPUs on the cluster where the log left them
idle, pinned there (sched_engine.analysis.baseline_downtime, baseline_steps)."""

from __future__ import annotations

from io import StringIO

import pandas as pd
import pytest

from sched_engine.analysis.baseline_downtime import cluster_groups, down_time, with_reservations
from sched_engine.analysis.baseline_steps import explain
from sched_engine.batch.cluster import ClusterState

# Two clusters of 2 one-CPU machines, each its own partition. x (partition pa, 2 CPUs) filled cluster a over
# [0, 10,000); y (pb, 1 CPU) ran on b over [0, 10,000); z (pb, 1 CPU), submitted at 0, waited until 5,000 although
# one CPU of b was idle: the idle period [0, 5000) of 1 CPU is b's. Pooled over both clusters the 1 idle CPU would
# be shared 0.5 and 0.5 and round down to nothing.
LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user,partition\n"
       "x,0,0,10000,2,u,pa\ny,0,0,10000,1,v,pb\nz,0,5000,100,1,w,pb\n")
CLUSTERS = [{"name": "a", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": ["partition=pa"]},
            {"name": "b", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": ["partition=pb"]}]
STATES = [ClusterState(0, "a", [1, 1], 1.0, ["partition=pa"]), ClusterState(1, "b", [1, 1], 1.0, ["partition=pb"])]


def _jobs() -> pd.DataFrame:
    return pd.read_csv(StringIO(LOG), dtype={"job_id": str, "user": str, "partition": str})


def test_clusters_are_grouped_by_the_jobs_that_could_run_on_either():
    groups, of_job = cluster_groups([(0,), (1,), (1,)], 2)
    assert groups == [[0], [1]] and of_job.tolist() == [0, 1, 1]
    groups, of_job = cluster_groups([None, (1,), ()], 3)      # a job that may use any links them all
    assert groups == [[0, 1, 2]] and of_job.tolist() == [0, 0, -1]
    groups, _ = cluster_groups([(0, 2), (1,)], 3)
    assert groups == [[0, 2], [1]]


def test_the_idle_cpu_is_held_on_the_cluster_where_it_was_idle_and_pinned_there():
    found = down_time(_jobs(), STATES, suitable=[(0,), (1,), (1,)])
    assert found.reservations.to_dict("list") == {"start": [0.0], "duration": [5000.0], "cpus": [1.0],
                                                  "cluster": ["b"]}
    assert found.pinned and (found.periods, found.idle_s) == (1, 5000.0)
    assert "(each on the cluster where the log left its CPUs idle" in found.text()
    jobs = with_reservations(_jobs(), found, requirements=False).set_index("job_id")
    assert jobs.loc["down-0", "requirement"] == "cl_b" and (jobs.loc[["x", "y", "z"], "requirement"] == "").all()
    # Not knowing where jobs could run, the two clusters are one pool: the 1 idle CPU of 4, shared by their CPUs,
    # rounds down to no reservation at all.
    assert down_time(_jobs(), STATES).reservations.empty


def test_a_shared_group_says_which_clusters_it_assumed():
    wide = pd.read_csv(StringIO("job_id,submit_time,recorded_wait,run_time,procs,user\n"
                                "x,0,0,10000,1,u\nz,0,5000,100,1,w\n"))
    found = down_time(wide, STATES)          # 3 CPUs idle over [0, 5000) while z waited: 1.5 on each, rounded to 1
    assert found.reservations["cluster"].tolist() == ["a", "b"] and found.reservations["cpus"].tolist() == [1, 1]
    assert "shared across a, b in proportion to their CPUs" in found.text() and found.pinned


def test_the_down_time_step_on_two_clusters_reproduces_the_logged_wait(tmp_path):
    trace = tmp_path / "log.csv"
    trace.write_text(LOG)
    steps = explain({"engine": "batch", "policy": "easy",
                     "model": {"trace": {"path": str(trace)}, "clusters": CLUSTERS}})
    table = steps.table.set_index("step")
    # On the hardware z starts at once on b's idle CPU; with b's CPU held back until 5,000 it starts then, as logged.
    assert table.loc["hardware", "simulated_mean_wait_s"] == pytest.approx(0)
    assert table.loc["downtime", "simulated_mean_wait_s"] == pytest.approx(5000 / 3)
    assert table.loc["downtime", "gap_share"] == pytest.approx(0)
    assert "each on the cluster where the log left its CPUs idle" in table.loc["downtime", "setting"]
    run = steps.results[4]
    assert run.scenario["model"]["requirements"] is True
    placed = run.jobs.set_index("job_id")
    assert placed.loc["down-0", "start_time"] == 0 and placed.loc["z", "start_time"] == 5000
    assert placed.loc["down-0", "cluster"] == "b"
