"""Why pending: hand-computed reasons for each kind, and intervals that tile every wait exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sched_engine.batch import simulate
from sched_engine.batch.model import normalize_model
from sched_engine.batch.pending import REASONS
from sched_engine.batch.policies import FCFS
from sched_engine.core.result import SimulationResult
from sched_engine.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "batch"


def _run(policy: str, trace: Path, **model) -> SimulationResult:
    return run_scenario({"engine": "batch", "policy": policy,
                         "model": {"trace": {"path": str(trace)}, "estimates": "trace", **model}})


def _rows(result: SimulationResult) -> list[tuple]:
    frame = result.extra("pending")
    return [(job, start, end, reason, blocking) for job, start, end, reason, blocking
            in frame.itertuples(index=False)]


def test_easy_names_the_reservation_a_fitting_job_would_delay():
    # 10 CPUs. Job 1 (6 CPUs, 0-100). Job 2 (8 CPUs) at 1 does not fit: reserved at 100.
    # Job 3 (4 CPUs, 200 s) at 2 fits in the 4 free CPUs but would hold them past 100,
    # and only 2 CPUs are spare then: it waits for job 2's reservation. Job 4 (2 CPUs,
    # 300 s) at 3 fits in those 2 spare CPUs: backfilled at once, which leaves 2 free CPUs,
    # fewer than job 3 needs: from 3 on it waits for resources. At 100 job 2 starts (8 of
    # the 8 free CPUs); job 3 is now the oldest waiting job and lacks CPUs until 150.
    result = _run("easy", DATA / "pending_four.swf")
    assert list(result.jobs.start_time) == [0, 100, 150, 3]
    assert _rows(result) == [
        ("2", 1.0, 100.0, "resources", ""),
        ("3", 2.0, 3.0, "reservation", "2"),
        ("3", 3.0, 150.0, "resources", ""),
    ]


def test_fcfs_names_the_earlier_job_it_starts_first():
    # Same trace under FCFS: no backfilling, so job 4 waits behind job 3 until 150
    # (priority), job 3 behind job 2 until 100, then for CPUs until 150.
    result = _run("fcfs", DATA / "pending_four.swf")
    assert list(result.jobs.start_time) == [0, 100, 150, 150]
    assert _rows(result) == [
        ("2", 1.0, 100.0, "resources", ""),
        ("3", 2.0, 100.0, "priority", "2"),
        ("3", 100.0, 150.0, "resources", ""),
        ("4", 3.0, 150.0, "priority", "3"),
    ]


@pytest.mark.parametrize("trace", ["pending_four.swf", "easy_no_delay.swf", "cons_vs_easy.swf"])
def test_fcfs_reasons_agree_between_the_in_order_loop_and_the_event_loop(trace, tmp_path):
    # A machine failure long after the last job ends sends FCFS through the event loop.
    late = tmp_path / "late.failures"
    late.write_text("1000000\tcluster\t1\t1\n")
    model = normalize_model({"trace": {"path": str(DATA / trace)}, "estimates": "trace"})
    fast = simulate(model, FCFS(), np.random.default_rng(0))
    general = simulate({**model, "failures": {"kind": "trace", "path": str(late), "align": "absolute"}},
                       FCFS(), np.random.default_rng(0))
    assert general.input.failures and fast.start_time == general.start_time
    assert sorted(fast.pending_rows) == sorted(general.pending_rows)


def test_a_job_that_fits_only_once_a_failed_machine_is_back_waits_for_the_failure(tmp_path):
    # 4 one-CPU machines. Job 1 (1 CPU) on machine 0; machine 1 down from 5 to 15. Job 2
    # (3 CPUs) at 6: 3 machines are up but only 2 are free; with machine 1 up it would fit.
    trace = tmp_path / "down.swf"
    trace.write_text("; MaxNodes: 4\n; MaxProcs: 4\n"
                     "1 0 -1 100 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                     "2 6 -1 10 3 -1 -1 3 10 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    failures = tmp_path / "down.failures"
    failures.write_text("5\tcluster\t10\t1\n")
    result = _run("easy", trace, failures={"kind": "trace", "path": str(failures), "align": "absolute"})
    assert list(result.jobs.start_time) == [0, 15]
    assert _rows(result) == [("2", 6.0, 15.0, "failure", "")]


def test_a_job_whose_requirements_exclude_the_cluster_with_room_waits_for_requirements(tmp_path):
    # "big" (8 CPUs, gpu) is full with x until 10; y asks for a gpu while "small" has 4 free CPUs.
    trace = tmp_path / "req.csv"
    trace.write_text("job_id,submit_time,run_time,procs,requirement\nx,0,10,8,gpu\ny,1,10,1,gpu\n")
    clusters = [
        {"name": "big", "machines": 1, "cpus_per_machine": 8, "speed": 1.0, "properties": ["gpu"]},
        {"name": "small", "machines": 2, "cpus_per_machine": 2, "speed": 2.0, "properties": []},
    ]
    result = _run("easy", trace, clusters=clusters, requirements=True)
    assert _rows(result) == [("y", 1.0, 10.0, "requirements", "")]


def _check_tiling(result: SimulationResult) -> None:
    jobs = result.jobs.set_index("job_id")
    pending = result.extra("pending")
    assert set(pending["reason"]) <= set(REASONS)
    assert (pending["to_time"] > pending["from_time"]).all()
    until = jobs["start_time"].where(jobs["status"] != "cancelled", jobs["end_time"])
    waited = jobs.index[(until - jobs["submit_time"]) > 0]
    assert set(pending["job_id"]) == set(waited)
    for job, rows in pending.groupby("job_id", sort=False):
        assert rows["from_time"].iloc[0] == jobs.loc[job, "submit_time"]
        assert (rows["from_time"].to_numpy()[1:] == rows["to_time"].to_numpy()[:-1]).all()
        assert rows["to_time"].iloc[-1] == until[job]
    named = pending.loc[pending["blocking_job"] != "", "blocking_job"]
    assert named.isin(jobs.index).all()
    assert (pending["blocking_job"] != "").eq(pending["reason"].isin(["reservation", "priority"])).all()


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cons"])
def test_reasons_tile_every_wait_on_a_sample_with_failures_and_requirements(policy):
    scenario = json.loads((ROOT / "sample_traces" / "batch-metacentrum.scenario.json").read_text())
    scenario["policy"] = policy
    scenario["model"]["trace"]["path"] = str(ROOT / scenario["model"]["trace"]["path"])
    scenario["model"]["machines_path"] = str(ROOT / scenario["model"]["machines_path"])
    scenario["model"]["failures"]["path"] = str(ROOT / scenario["model"]["failures"]["path"])
    result = run_scenario(scenario)
    _check_tiling(result)
    assert len(result.extra("pending")) > 0


def test_pending_is_stored_with_the_result_and_written_beside_jobs(tmp_path):
    result = _run("easy", DATA / "pending_four.swf")
    again = SimulationResult.from_bundle(result.to_bundle())
    pd.testing.assert_frame_equal(again.extra("pending"), result.extra("pending"))
    result.write_csv(tmp_path)
    written = pd.read_csv(tmp_path / "pending.csv", dtype={"job_id": str, "blocking_job": str}, keep_default_na=False)
    assert list(written.columns) == ["job_id", "from_time", "to_time", "reason", "blocking_job"]
    assert written["reason"].tolist() == ["resources", "reservation", "resources"]
