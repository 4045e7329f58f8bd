"""Calibrate starts from the log's findings: the users' peaks and the capacity the log used as candidate values
(sched_engine.analysis.calibration_grid, the calibrate sweep's ``from_log`` grid)."""

from __future__ import annotations

import pandas as pd
import pytest

from sched_engine import sweeps
from sched_engine.__main__ import main
from sched_engine.analysis.calibration_grid import GridFindings, capacity_candidates, findings, limit_candidates
from sched_engine.sweeps import calibrate

# On a 2-CPU machine user u ran a and b (1 CPU each, over [0, 10,000)) and c (2 CPUs, over [0, 5)): 3 running jobs
# and 4 CPUs at once, u's peaks and the log's. v's d (1 CPU) waited 100 s. CPUs in use: 4 over [0, 5), 2 over
# [5, 100), 3 over [100, 10,000): peak 4; at or under 3 for 99.95% of the time, so the p99.9 is 3 (the largest
# job, 2, is smaller).
LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user\n"
       "a,0,0,10000,1,u\nb,0,0,10000,1,u\nc,0,0,5,2,u\nd,0,100,9900,1,v\n")


@pytest.fixture
def files(tmp_path):
    trace, two, ten = tmp_path / "log.csv", tmp_path / "two.machines", tmp_path / "ten.machines"
    trace.write_text(LOG)
    two.write_text("0\tc\t2\t1\t1\t1048576\n")
    ten.write_text("0\tc\t10\t1\t1\t1048576\n")
    return trace, two, ten


def _spec(trace, machines, **spec) -> dict:
    return {"kind": "calibrate", "trace": str(trace), "machines": str(machines), "estimates": ["perfect"],
            "allocation": ["cpus"], "priorities": [False], **spec}


def test_the_findings_are_the_users_peaks_and_the_capacity_the_log_used(files):
    trace, two, _ = files
    found = findings({"engine": "batch", "policy": "easy",
                      "model": {"trace": {"path": str(trace)}, "machines_path": str(two)}})
    assert found == GridFindings(hardware_cpus=2, peak_cpus=4, p999_cpus=3, largest_job=2, running_jobs=3, cpus=4,
                                 user="u")
    # Around the peaks, factors 1/4 to 2 a sqrt(2) apart, each pair once; CPUs at least the largest job (2).
    # 0.25: (1, 2); 0.35: (2, 2); 0.5: (2, 2) again; 0.71: (3, 3); 1: (3, 4); 1.41: (5, 6); 2: (6, 8).
    assert limit_candidates(found) == [(0, 0), (1, 2), (2, 2), (3, 3), (3, 4), (5, 6), (6, 8)]
    assert capacity_candidates(found) == ["hardware", "log_p999", "log"]
    # A log with no recorded running job: no limit only; one that fits its hardware: the hardware only.
    assert limit_candidates(GridFindings(2, 0, 0, 1, 0, 0, "")) == [(0, 0)]
    assert capacity_candidates(GridFindings(10, 4, 3, 2, 3, 4, "u")) == ["hardware"]
    assert capacity_candidates(GridFindings(2, 3, 3, 2, 1, 1, "u")) == ["hardware", "log_p999"]   # one size, once


def test_the_sweep_grid_is_built_around_the_findings_and_runs_on_them(files):
    trace, two, ten = files
    normal = calibrate.normalize(_spec(trace, two))
    assert normal["running_jobs_limits"] == [0, 1, 2, 3, 3, 5, 6]
    assert normal["cpu_limits"] == [0, 2, 2, 3, 4, 6, 8]
    assert normal["capacities"] == ["hardware", "log_p999", "log"]
    assert calibrate.count(normal) == 21 and calibrate.normalize(normal) == normal    # the values found are kept
    points = calibrate.points(normal)
    on_p999 = next(p for p in points if p["capacity"] == "log_p999" and p["cpus_limit"] == 4)
    model = calibrate.scenario(on_p999)["model"]
    assert sum(c["machines"] * c["cpus_per_machine"] for c in model["clusters"]) == 3
    assert model["user_limits"] == {"running_jobs": 3, "cpus": 4} and "machines_path" not in model
    assert calibrate.scenario({**on_p999, "capacity": "log"})["model"]["capacity"] == "log"
    assert calibrate.normalize(_spec(trace, ten))["capacities"] == ["hardware"]
    # Explicit values are taken as given.
    given = calibrate.normalize(_spec(trace, two, running_jobs_limits=[0, 4], capacities=["hardware"]))
    assert (given["running_jobs_limits"], given["cpu_limits"], given["capacities"]) == ([0, 4], None, ["hardware"])
    ranked = sweeps.run_sweep(_spec(trace, two), executor="serial").summary()
    assert len(ranked) == 21 and set(ranked["capacity"]) == {"hardware", "log_p999", "log"}
    reference = ranked[ranked["reference"]].iloc[0]
    assert (reference["capacity"], reference["running_jobs_limit"], reference["cpus_limit"]) == ("hardware", 0, 0)
    # On the log's 4 CPUs with no limit a, b and c start at once and d waits for c's 2 CPUs (5 s): mean 1.25 s.
    fits = ranked.set_index(["capacity", "running_jobs_limit"])
    assert fits.loc[("log", 0), "simulated_mean_wait_s"] == pytest.approx(1.25)


def test_the_calibrate_command_takes_its_grid_from_the_log(files, tmp_path, capsys):
    trace, two, _ = files
    out = tmp_path / "out"
    assert main(["calibrate", "--trace", str(trace), "--machines", str(two), "--estimates", "perfect",
                 "--allocation", "cpus", "--priorities", "off", "--workers", "1", "--out", str(out)]) == 0
    table = pd.read_csv(out / "calibration.csv")
    assert sorted(set(zip(table["running_jobs_limit"], table["cpus_limit"]))) == [
        (0, 0), (1, 2), (2, 2), (3, 3), (3, 4), (5, 6), (6, 8)]
    assert set(table["capacity"]) == {"hardware", "log_p999", "log"}
    assert main(["calibrate", "--trace", str(trace), "--machines", str(two), "--estimates", "perfect",
                 "--allocation", "cpus", "--priorities", "off", "--limits", "0", "1", "--capacities", "hardware",
                 "--workers", "1", "--out", str(out)]) == 0
    assert len(pd.read_csv(out / "calibration.csv")) == 2
