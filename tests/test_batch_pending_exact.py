"""Every wait reason holds at every instant of its interval, checked against free CPUs derived from the schedule.

The checker knows nothing of the engine's recorder: it rebuilds, per
cluster, the CPUs in use from the jobs' start and end times (a job holds
its CPUs on ``[start, end)``; at one instant ends come before starts) and
the CPUs up from the timeline, then asks of each interval of ``pending``:

* ``resources`` / ``failure`` -- at no instant of it did any cluster have as
  many free CPUs as the job needs (every cluster may be used here);
* ``reservation``, and ``priority`` of the oldest waiting job (naming no
  job) -- at every instant one did. ``priority`` behind a named job (an
  in-order policy's queue) holds whatever the free CPUs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.core.result import SimulationResult
from sched_engine.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
NO_ROOM = {"resources", "failure"}


def free_cpus(result: SimulationResult) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Breakpoints and, per cluster, the free CPUs from each breakpoint to the next."""
    jobs = result.jobs
    holds = jobs["status"].isin(["finished", "killed"]) & (jobs["end_time"] > jobs["start_time"])
    timeline = result.timeline
    up_rows = timeline[timeline["metric"] == "up_cpus"]
    times = np.unique(np.concatenate([[0.0], jobs.loc[holds, "start_time"], jobs.loc[holds, "end_time"],
                                      up_rows["time"]]))
    free = {}
    for cluster, rows in up_rows.groupby("entity"):
        used = _used(jobs[holds & (jobs["cluster"] == cluster)], times)
        rows = rows.sort_values("time", kind="stable")
        up = rows["value"].to_numpy()[np.maximum(np.searchsorted(rows["time"].to_numpy(), times, side="right") - 1, 0)]
        assert (used >= 0).all() and (used <= up).all()
        free[cluster] = up - used
    return times, free


def _used(jobs: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """CPUs in use from each breakpoint on: jobs with start <= t < end."""
    change = np.zeros(len(times) + 1)
    np.add.at(change, np.searchsorted(times, jobs["start_time"].to_numpy()), jobs["procs"].to_numpy())
    np.add.at(change, np.searchsorted(times, jobs["end_time"].to_numpy()), -jobs["procs"].to_numpy())
    return np.cumsum(change)[:-1]


def check_exact(result: SimulationResult) -> int:
    """Assert every reason of ``result`` against the derived free CPUs; returns the rows checked."""
    times, free = free_cpus(result)
    best = np.max(np.stack(list(free.values())), axis=0)           # the most free CPUs any cluster has
    pending = result.extra("pending")
    need = result.jobs.set_index("job_id")["procs"].reindex(pending["job_id"]).to_numpy()
    first = np.searchsorted(times, pending["from_time"].to_numpy(), side="right") - 1
    last = np.searchsorted(times, pending["to_time"].to_numpy(), side="left")     # breakpoints before the end
    reasons = pending["reason"].to_numpy()
    padded = np.append(best, 0)                                        # so an interval may end past the last
    bounds = np.stack([first, last], axis=1).ravel()
    lowest = np.minimum.reduceat(padded, bounds)[::2]                  # over breakpoints first .. last - 1
    highest = np.maximum.reduceat(padded, bounds)[::2]
    no_room = np.isin(reasons, list(NO_ROOM))
    room = (reasons == "reservation") | ((reasons == "priority") & (pending["blocking_job"] == "").to_numpy())
    assert (first < last).all()
    wrong = (no_room & (highest >= need)) | (room & (lowest < need))
    assert not wrong.any(), pending[wrong].head()
    # Consecutive rows of one job say something new.
    same = ((pending["job_id"].shift() == pending["job_id"]) & (pending["reason"].shift() == pending["reason"])
            & (pending["blocking_job"].shift() == pending["blocking_job"]))
    assert not same.any()
    return len(pending)


def _csv_run(tmp_path: Path, policy: str, jobs: list[tuple[float, float, int, float]], cpus: int) -> SimulationResult:
    path = tmp_path / "jobs.csv"
    lines = ["job_id,submit_time,run_time,procs,requested_time"]
    lines += [f"j{i},{submit},{run},{procs},{estimate}" for i, (submit, run, procs, estimate) in enumerate(jobs)]
    path.write_text("\n".join(lines) + "\n")
    machines = tmp_path / "one.machines"
    machines.write_text(f"0\tcluster\t{cpus}\t1\t1\t1048576\n")
    return run_scenario({"engine": "batch", "policy": policy, "model": {
        "trace": {"path": str(path)}, "machines_path": str(machines), "estimates": "trace"}})


def _sample(name: str, policy: str) -> dict:
    """A shipped sample scenario under ``policy``, its trace and machines named by path."""
    scenario = json.loads((ROOT / "sample_traces" / f"{name}.scenario.json").read_text())
    scenario["policy"] = policy
    model = scenario["model"]
    model["trace"]["path"] = str(ROOT / model["trace"]["path"])
    model["machines_path"] = str(ROOT / model["machines_path"])
    return scenario


_JOB = st.tuples(st.integers(0, 60), st.integers(0, 40), st.integers(1, 8), st.integers(0, 30))


@pytest.mark.parametrize("policy", ["fcfs", "easy", "easy-alea", "cons", "ls"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(_JOB, min_size=1, max_size=25))
def test_every_reason_holds_at_every_instant_on_a_random_trace(policy, jobs, tmp_path):
    # Estimates from the run time plus up to 30 s more: backfilling plans with them.
    trace = [(float(s), float(r), p, float(r + extra)) for s, r, p, extra in jobs]
    check_exact(_csv_run(tmp_path, policy, trace, cpus=8))


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cons"])
def test_every_reason_holds_on_a_sample_whose_machines_fail(policy):
    # MetaCentrum's sample: several clusters, machines failing (the BASIC scenario: no requirements).
    scenario = _sample("batch-metacentrum", policy)
    model = scenario["model"]
    model["failures"]["path"] = str(ROOT / model["failures"]["path"])
    model["requirements"] = False
    model["load_factor"] = 8.0   # submissions 8x closer: a queue forms
    result = run_scenario(scenario)
    assert check_exact(result) > 100
    assert "failure" in set(result.extra("pending")["reason"])


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cons"])
def test_every_reason_holds_on_the_hpc2n_sample(policy):
    scenario = _sample("batch-hpc2n", policy)
    scenario["model"]["load_factor"] = 4.0
    assert check_exact(run_scenario(scenario)) > 100
