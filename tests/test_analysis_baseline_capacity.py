"""The baseline steps on the audit's capacity: the time-weighted 99.9th percentile of CPUs in use (log_p999)."""

from __future__ import annotations

import pandas as pd
import pytest

from sched_engine.__main__ import main
from sched_engine.analysis.audit import audit
from sched_engine.analysis.baseline_steps import explain, p999_cpus

# On a 2-CPU machine the log ran L (2 CPUs) over [0, 10,000), M (2 CPUs) over [0, 50) and P (2 CPUs) over
# [0, 5): 6 CPUs in use for 5 s, 4 for 45 s, 2 for 9,950 s. The log stays at or under 2 CPUs for 99.5% of its
# time (the p99: the hardware holds it), under 4 for 99.95% (the p99.9: 4 CPUs), under 6 always (the peak).
LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user,requested_time\n"
       "L,0,0,10000,2,u,10000\nM,0,0,50,2,v,50\nP,0,0,5,2,w,5\n")
TWO_CPUS = [{"name": "c", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text(LOG)
    return path


def test_the_p999_is_the_level_held_for_all_but_a_thousandth_of_the_time(trace):
    jobs = pd.read_csv(trace)
    assert p999_cpus(jobs) == 4
    assert p999_cpus(jobs.assign(procs=[2, 2, 5])) == 5         # never below the largest job
    checks = audit(jobs, 2).table.set_index("check")["value"]
    assert checks["recorded_capacity_cpus"] == 4                  # the audit's suggested capacity, the same
    assert checks["recorded_p99_cpus"] == 2 and checks["recorded_peak_cpus"] == 6


@pytest.mark.parametrize("capacity, cpus, setting", [
    ("log", 6, "1 cluster of 6 CPUs (the recorded peak of CPUs in use)"),
    ("log_p99", 2, "the log fits the hardware (2 CPUs): the same machine"),
    ("log_p999", 4, "1 cluster of 4 CPUs (the time-weighted 99.9th percentile of CPUs in use)"),
])
def test_the_capacity_step_runs_on_the_capacity_chosen(trace, capacity, cpus, setting):
    scenario = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": str(trace)}, "clusters": TWO_CPUS}}
    table = explain(scenario, capacity=capacity).table.set_index("step")
    assert table.loc["capacity", "cpus"] == cpus
    assert table.loc["capacity", "setting"] == setting
    # On 2 CPUs L starts at 0 and M, P wait for it (10,000 and 10,050 s); on 4, P waits for M (50 s); on 6 none waits.
    mean = {6: 0.0, 4: 50 / 3, 2: 20050 / 3}[cpus]
    assert table.loc["capacity", "simulated_mean_wait_s"] == pytest.approx(mean)


def test_the_baseline_command_takes_the_p999(trace, tmp_path, capsys):
    machines = tmp_path / "two.machines"
    machines.write_text("0\tc\t2\t1\t1\t1048576\n")
    out = tmp_path / "out"
    assert main(["baseline", "--trace", str(trace), "--machines", str(machines), "--policy", "easy",
                 "--estimates", "perfect", "--steps-capacity", "log_p999", "--out", str(out)]) == 0
    steps = pd.read_csv(out / "steps.csv").set_index("step")
    assert steps.loc["capacity", "cpus"] == 4
    assert "99.9th percentile" in steps.loc["capacity", "setting"]
