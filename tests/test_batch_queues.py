"""Queue priorities, best-effort queues and per-user limits: hand-computed cases on 10 CPUs, and invariants."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sched_engine.core.errors import ScenarioError
from sched_engine.core.result import SimulationResult
from sched_engine.runner import normalize_scenario, run_scenario

TEN_CPUS = [{"name": "c", "machines": 10, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]


def _trace(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit_time,run_time,procs,queue,user\n" + rows)
    return path


def _run(policy: str, trace: Path, **model) -> SimulationResult:
    return run_scenario({"engine": "batch", "policy": policy,
                         "model": {"trace": {"path": str(trace)}, "clusters": TEN_CPUS, **model}})


def _starts(result: SimulationResult) -> dict[str, float]:
    return dict(zip(result.jobs.job_id, result.jobs.start_time))


def _pending(result: SimulationResult) -> list[tuple]:
    return [tuple(row) for row in result.extra("pending").itertuples(index=False)]


PRIORITY_TRACE = "a,0,100,10,low,u\nb,1,50,6,low,u\nc,2,50,6,high,u\n"


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cons", "ls"])
def test_a_higher_queue_jobs_start_before_earlier_jobs_of_a_lower_queue(policy, tmp_path):
    # a holds all 10 CPUs until 100. b (6 CPUs, queue low) came at 1, c (6 CPUs, queue high) at 2;
    # only one of them fits at a time. Arrival order starts b at 100 and c at 150; with "high"
    # ranked first, c starts at 100 and b once c ends, at 150.
    trace = _trace(tmp_path, PRIORITY_TRACE)
    plain = _starts(_run(policy, trace))
    assert (plain["b"], plain["c"]) == (100, 150)
    ranked = _starts(_run(policy, trace, queues={"priority": ["high", "low"]}))
    assert (ranked["a"], ranked["b"], ranked["c"]) == (0, 150, 100)


def test_fcfs_names_the_higher_queue_job_that_went_ahead(tmp_path):
    # a (low) holds 6 of 10 CPUs until 100. x (8 CPUs, high) at 1 does not fit: resources until a ends.
    # b (2 CPUs, low) at 2 fits in the 4 free CPUs but waits behind x (priority, naming x); c (8 CPUs,
    # high) at 3 goes ahead of b, which now waits behind c; c waits behind x. At 100 x starts (2 CPUs left):
    # c, now first, does not fit (resources until x ends at 150); b waits behind c. At 150 c starts and b,
    # now first, with it.
    trace = "a,0,100,6,low,u\nx,1,50,8,high,u\nb,2,50,2,low,u\nc,3,50,8,high,u\n"
    result = _run("fcfs", _trace(tmp_path, trace), queues={"priority": ["high", "low"]})
    assert list(result.jobs.start_time) == [0, 100, 150, 150]
    assert _pending(result) == [
        ("x", 1.0, 100.0, "resources", ""),
        ("b", 2.0, 3.0, "priority", "x"),
        ("b", 3.0, 150.0, "priority", "c"),
        ("c", 3.0, 100.0, "priority", "x"),
        ("c", 100.0, 150.0, "resources", ""),
    ]


def test_priority_by_recorded_wait_ranks_the_queue_with_the_shorter_waits_first(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit_time,run_time,procs,queue,user,recorded_wait\n"
                    "a,0,100,10,low,u,0\nb,1,50,6,low,u,900\nc,2,50,6,high,u,5\n")
    assert _starts(_run("easy", path, queues={"priority": "recorded_wait"}))["c"] == 100


BEST_EFFORT_TRACE = ("be1,0,1000,4,be,u\nbe2,5,1000,4,be,u\nn1,10,100,2,main,v\nn2,20,100,3,main,v\n"
                     "n3,30,50,5,main,v\nbe3,40,10,2,be,u\n")


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_best_effort_jobs_are_preempted_youngest_first_and_not_resubmitted(policy, tmp_path):
    # be1 (4 CPUs) at 0 and be2 (4 CPUs) at 5 run; n1 (2 CPUs) fits the 2 free CPUs at 10.
    # n2 (3 CPUs) at 20 finds none free: killing the youngest best-effort job, be2, frees 4 --
    # enough, so be1 keeps running. n3 (5 CPUs) at 30: 1 free + be1's 4 = 5, be1 is killed.
    # be3 (2 CPUs, best-effort) at 40 finds no CPU free and waits for n3's end at 80.
    result = _run(policy, _trace(tmp_path, BEST_EFFORT_TRACE), queues={"best_effort": ["be"]})
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc[["n1", "n2", "n3", "be3"], "start_time"].tolist() == [10, 20, 30, 80]
    assert jobs.loc[["be1", "be2"], "status"].tolist() == ["killed", "killed"]
    assert jobs.loc[["be1", "be2"], "end_time"].tolist() == [30, 20]
    assert jobs.loc[["be1", "be2"], "reason"].tolist() == ["preempted", "preempted"]
    assert jobs.loc[["n1", "n2", "n3", "be3"], "status"].eq("finished").all()
    assert result.summary_value("preempted") == 2
    assert result.summary_value("killed") == 2


def test_a_job_preempts_only_once_the_best_effort_cpus_are_enough(tmp_path):
    # x (main, 2 CPUs) runs 0-100 and y (best-effort, 4 CPUs) 0-1000. z (main) asks all 10 CPUs at 10:
    # 4 free + y's 4 = 8 is not enough, so nothing is killed; at 100 x's end makes it 10: y is killed then.
    trace = _trace(tmp_path, "x,0,100,2,main,v\ny,0,1000,4,be,u\nz,10,50,10,main,v\n")
    result = _run("easy", trace, queues={"best_effort": ["be"]})
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["z", "start_time"] == 100
    assert (jobs.loc["y", "status"], jobs.loc["y", "end_time"]) == ("killed", 100)
    assert _pending(result) == [("z", 10.0, 100.0, "resources", "")]


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_a_user_at_the_running_jobs_limit_waits_and_blocks_nobody(policy, tmp_path):
    # One running job per user. u1's second job (b) waits from 1 until a ends at 100 (user_limit),
    # even under FCFS; u2's job c, behind it, starts at once.
    trace = _trace(tmp_path, "a,0,100,2,q,u1\nb,1,100,2,q,u1\nc,2,100,2,q,u2\n")
    result = _run(policy, trace, user_limits={"running_jobs": 1})
    assert _starts(result) == {"a": 0, "b": 100, "c": 2}
    assert _pending(result) == [("b", 1.0, 100.0, "user_limit", "")]


def test_a_user_cpu_limit_holds_jobs_that_would_pass_it_and_cancels_jobs_larger_than_it(tmp_path):
    # At most 4 CPUs per user. a holds 3 until 100; b (2) would make 5: it waits for a's end;
    # c (1) makes 4 and starts; d (5) can never start: cancelled on arrival.
    trace = _trace(tmp_path, "a,0,100,3,q,u1\nb,1,10,2,q,u1\nc,2,10,1,q,u1\nd,3,10,5,q,u1\n")
    result = _run("easy", trace, user_limits={"cpus": 4})
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc[["a", "b", "c"], "start_time"].tolist() == [0, 100, 2]
    assert (jobs.loc["d", "status"], jobs.loc["d", "reason"]) == ("cancelled", "asks more CPUs than its user may hold")
    assert _pending(result) == [("b", 1.0, 100.0, "user_limit", "")]


def test_planning_policies_refuse_best_effort_queues_and_user_limits(tmp_path):
    trace = _trace(tmp_path, PRIORITY_TRACE)
    for model in ({"queues": {"best_effort": ["low"]}}, {"user_limits": {"running_jobs": 2}}):
        with pytest.raises(ScenarioError, match="best-effort queues and user limits need FCFS"):
            _run("cons", trace, **model)


@pytest.mark.parametrize("bad, field", [
    ({"queues": {"priority": "fastest"}}, "queues.priority"),
    ({"queues": {"priority": ["a", "a"]}}, "queues.priority[1]"),
    ({"queues": {"priority": ["a"], "best_effort": ["a"]}}, "queues.priority"),
    ({"queues": {"order": ["a"]}}, "queues.order"),
    ({"user_limits": {"running_jobs": 0}}, "user_limits.running_jobs"),
    ({"user_limits": {"jobs": 2}}, "user_limits.jobs"),
])
def test_bad_queue_settings_name_their_field(bad, field, tmp_path):
    with pytest.raises(ScenarioError) as error:
        normalize_scenario({"engine": "batch", "policy": "easy",
                            "model": {"trace": {"path": str(_trace(tmp_path, PRIORITY_TRACE))}, **bad}})
    assert error.value.field == f"model.{field}"


def test_models_without_the_new_fields_keep_their_normal_form(tmp_path):
    trace = {"path": str(_trace(tmp_path, PRIORITY_TRACE))}
    plain = normalize_scenario({"engine": "batch", "policy": "easy", "model": {"trace": trace}})
    empty = normalize_scenario({"engine": "batch", "policy": "easy",
                                "model": {"trace": trace, "queues": {"priority": []}, "user_limits": {}}})
    assert "queues" not in plain.model and "user_limits" not in plain.model
    assert plain.content_hash() == empty.content_hash()


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_on_a_random_trace_limits_hold_only_best_effort_jobs_die_and_reasons_tile_every_wait(policy, tmp_path):
    rng = np.random.default_rng(7)
    count = 300
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(count)],
        "submit_time": np.sort(rng.integers(0, 3000, count)),
        "run_time": rng.integers(1, 400, count),
        "procs": rng.integers(1, 7, count),
        "queue": rng.choice(["high", "low", "be"], count, p=[0.2, 0.5, 0.3]),
        "user": rng.choice(["u1", "u2", "u3", "u4"], count),
    })
    path = tmp_path / "random.csv"
    frame.to_csv(path, index=False)
    result = _run(policy, path, queues={"priority": ["high", "low"], "best_effort": ["be"]},
                  user_limits={"running_jobs": 2, "cpus": 8})
    jobs = result.jobs.merge(frame[["job_id", "queue"]].astype({"job_id": "string"}), on="job_id",
                             suffixes=("_run", ""))
    killed = jobs[jobs.status == "killed"]
    assert len(killed) > 0 and killed["queue"].eq("be").all() and killed["reason"].eq("preempted").all()
    ran = jobs[jobs.start_time.notna()]
    for _, mine in ran.groupby("user"):
        times = np.sort(np.unique(mine.start_time))
        for time in times:   # just after each start, the user's running jobs and CPUs are within the limits
            running = mine[(mine.start_time <= time) & (mine.end_time > time)]
            assert len(running) <= 2 and running.procs.sum() <= 8
    pending = result.extra("pending").merge(jobs[["job_id", "submit_time", "start_time", "end_time", "status"]],
                                            on="job_id")
    for job, rows in pending.groupby("job_id"):
        until = rows.end_time.iloc[0] if rows.status.iloc[0] == "cancelled" else rows.start_time.iloc[0]
        assert rows.from_time.iloc[0] == rows.submit_time.iloc[0]
        assert (rows.from_time.to_numpy()[1:] == rows.to_time.to_numpy()[:-1]).all()
        assert rows.to_time.iloc[-1] == until
    waited = jobs[(jobs.start_time.fillna(jobs.end_time) - jobs.submit_time) > 0]
    assert set(pending.job_id) == set(waited.job_id)
    assert "user_limit" in set(pending.reason)
