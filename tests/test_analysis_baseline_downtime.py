"""The baseline's down-time and per-user-limit steps: hand-computed logs (sched_engine.analysis.baseline_downtime,
baseline_findings, and the per-user ``user_limits.users`` of sched_engine.batch.queues)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sched_engine.analysis.baseline_downtime import DOWN_QUEUE, down_time, pieces, with_reservations
from sched_engine.analysis.baseline_steps import DOWNTIME_FILE, explain
from sched_engine.batch.cluster import ClusterState
from sched_engine.core.errors import ScenarioError
from sched_engine.runner import normalize_scenario, run_scenario

TWO_BY_TWO = [{"name": "c", "machines": 2, "cpus_per_machine": 2, "speed": 1.0, "properties": []}]
TEN_CPUS = [{"name": "c", "machines": 10, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]

# 4 CPUs (2 machines x 2). a (user u, 2 CPUs) ran from 0 to 10,000; b (user v, 2 CPUs), submitted at 0, waited
# until 5,000 although 2 CPUs were idle: an idle period [0, 5000) of 2 CPUs while a job that fit waited.
IDLE_LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user,queue\n"
            "a,0,0,10000,2,u,q\nb,0,5000,100,2,v,q\n")


def _jobs(text: str) -> pd.DataFrame:
    from io import StringIO

    return pd.read_csv(StringIO(text), dtype={"job_id": str, "user": str, "queue": str})


def test_pieces_cut_where_the_idle_level_changes_rounded_down_to_whole_machines():
    # Idle 5, 4, 4, 1, 6 CPUs over [0, 10, 20, 30, 40, 50) on 2-CPU machines: levels 4, 4, 4, 0, 6.
    frame = pieces(np.array([0.0, 10, 20, 30, 40, 50]), np.array([5.0, 4, 4, 1, 6]), 2.0)
    assert frame.to_dict("list") == {"start": [0.0, 40.0], "duration": [30.0, 10.0], "cpus": [4.0, 6.0]}


def test_the_idle_capacity_while_a_job_waited_becomes_one_reservation():
    clusters = [ClusterState(0, "c", [2, 2], 1.0, [])]
    found = down_time(_jobs(IDLE_LOG), clusters)
    assert found.reservations.to_dict("list") == {"start": [0.0], "duration": [5000.0], "cpus": [2.0], "cluster": ["c"]}
    assert (found.periods, found.idle_s, found.cpu_seconds) == (1, 5000.0, 10000.0)
    assert "1 periods (0.1 days)" in found.text() and "3 CPU-hours in 1 reservations" in found.text()
    # Shorter than the audit's hour: no down time.
    short = down_time(_jobs(IDLE_LOG.replace(",5000,", ",3000,")), clusters)
    assert short.reservations.empty and short.text().startswith("no period of an hour")
    # Two clusters share it by their CPUs: 8 - 2 = 6 idle CPUs give the 2-CPU cluster 1.5, the 6-CPU one 4.5;
    # machines of mixed sizes round down to whole CPUs: 1 and 4.
    split = down_time(_jobs(IDLE_LOG), [ClusterState(0, "s", [2], 1.0, []), ClusterState(1, "b", [3, 3], 1.0, [])])
    assert split.reservations["cpus"].tolist() == [1.0, 4.0]
    jobs = with_reservations(_jobs(IDLE_LOG), found)
    assert jobs["job_id"].tolist() == ["a", "b", "down-0"]
    assert jobs.set_index("job_id").loc["down-0", ["queue", "user", "procs", "run_time"]].tolist() == \
        [DOWN_QUEUE, DOWN_QUEUE, 2, 5000.0]
    assert np.isnan(jobs.set_index("job_id").loc["down-0", "recorded_wait"])


def test_the_down_time_step_holds_the_idle_cpus_back_and_explains_the_wait(tmp_path):
    # On 4 CPUs EASY starts a and b at 0 (b waits 0 against the log's 5,000). With the down time, the reservation
    # (queue ranked first) holds 2 CPUs from 0 to 5,000: a starts at 0 beside it, b at 5,000, as in the log.
    trace = tmp_path / "log.csv"
    trace.write_text(IDLE_LOG)
    out = tmp_path / "out"
    steps = explain({"engine": "batch", "policy": "easy",
                     "model": {"trace": {"path": str(trace)}, "clusters": TWO_BY_TWO}}, folder=out)
    table = steps.table.set_index("step")
    assert table["simulated_mean_wait_s"].tolist() == pytest.approx([0, 0, 0, 0, 2500, 2500])
    assert table.loc["downtime", "gap_share"] == pytest.approx(0)
    assert table.loc["downtime", "change_s"] == pytest.approx(2500)
    assert table.loc["downtime", "compared_jobs"] == 2 and table.loc["downtime", "killed_jobs"] == 0
    assert table["ran"].tolist() == [True, True, False, True, True, False]
    run = steps.results[4]
    assert dict(zip(run.jobs["job_id"], run.jobs["start_time"])) == {"a": 0, "b": 5000, "down-0": 0}
    assert run.scenario["model"]["queues"]["priority"] == [DOWN_QUEUE]
    assert (out / DOWNTIME_FILE).is_file()
    assert "the step that moved it most is with the down times found in the log (+2,500 s" in \
        __import__("sched_engine.analysis.baseline_steps", fromlist=["sentence"]).sentence(steps.table)


def _trace(tmp_path, rows: str):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit_time,run_time,procs,queue,user\n" + rows)
    return path


def _starts(model: dict) -> dict:
    result = run_scenario({"engine": "batch", "policy": "easy", "model": {"clusters": TEN_CPUS, **model}})
    return dict(zip(result.jobs["job_id"], result.jobs["start_time"]))


def test_each_user_is_held_to_its_own_limits(tmp_path):
    # u may run one job at once (its own limit), v has no limit of its own: b waits for a (100), d starts at 3.
    trace = {"path": str(_trace(tmp_path, "a,0,100,1,q,u\nb,1,100,1,q,u\nc,2,100,1,q,v\nd,3,100,1,q,v\n"))}
    assert _starts({"trace": trace, "user_limits": {"users": {"u": {"running_jobs": 1}}}}) == \
        {"a": 0, "b": 100, "c": 2, "d": 3}
    # The limit for all (1 job) binds v: d waits for c's end (102); u's own limit (2 jobs) replaces it for u.
    assert _starts({"trace": trace, "user_limits": {"running_jobs": 1, "users": {"u": {"running_jobs": 2}}}}) == \
        {"a": 0, "b": 1, "c": 2, "d": 102}


def test_a_users_own_cpu_limit_is_raised_to_its_largest_job(tmp_path):
    # u's own limit of 2 CPUs is raised to its largest job, b's 3 CPUs, so b is never held for ever: with a's 2 CPUs
    # held, b (2 + 3 > 3) waits and is passed over; c (2 + 1 = 3) starts at 2; b once a and c are gone, at 102.
    trace = {"path": str(_trace(tmp_path, "a,0,100,2,q,u\nb,1,100,3,q,u\nc,2,100,1,q,u\n"))}
    assert _starts({"trace": trace, "user_limits": {"users": {"u": {"cpus": 2}}}}) == {"a": 0, "b": 102, "c": 2}


@pytest.mark.parametrize("limits, field", [
    ({"users": {"u": {"jobs": 1}}}, "user_limits.users.u.jobs"),
    ({"users": {"u": {"running_jobs": 0}}}, "user_limits.users.u.running_jobs"),
    ({"cpus": 4, "users": {"u": {"cpus": 8}}}, "user_limits.users.u.cpus"),
    ({"users": ["u"]}, "user_limits.users"),
])
def test_bad_per_user_limits_name_their_field(limits, field, tmp_path):
    with pytest.raises(ScenarioError) as error:
        normalize_scenario({"engine": "batch", "policy": "easy",
                            "model": {"trace": {"path": str(_trace(tmp_path, "a,0,1,1,q,u\n"))}, "user_limits": limits}})
    assert error.value.field == f"model.{field}"


def test_per_user_limits_keep_the_normal_form_of_models_without_them(tmp_path):
    trace = {"path": str(_trace(tmp_path, "a,0,1,1,q,u\n"))}
    plain = normalize_scenario({"engine": "batch", "policy": "easy", "model": {"trace": trace,
                                                                              "user_limits": {"running_jobs": 2}}})
    empty = normalize_scenario({"engine": "batch", "policy": "easy",
                                "model": {"trace": trace, "user_limits": {"running_jobs": 2, "users": {"u": {}}}}})
    assert plain.model["user_limits"] == {"running_jobs": 2} == empty.model["user_limits"]
    assert plain.content_hash() == empty.content_hash()


# Hardware 2 CPUs; the log had 4 in use over [0, 50) (a and b), then 2 or fewer: d (submitted at 60) waited for a's
# end at 100, as on 2 CPUs. On the peak's 4 CPUs d starts at once; the down-time step holds back the 2 CPUs above
# the hardware the log was not using from 50 (b's end) to the log's last end (210), so d waits until 100 again.
ABOVE_LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user\n"
             "a,0,0,100,2,u\nb,0,0,50,2,v\nd,60,40,10,2,w\nc,200,0,10,1,x\n")
TWO_CPUS = [{"name": "c", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]


def test_the_cpus_above_the_hardware_are_the_runs_only_while_the_log_used_them(tmp_path):
    found = down_time(_jobs(ABOVE_LOG), [ClusterState(0, "c", [1] * 4, 1.0, [])], hardware=2.0)
    assert found.reservations.to_dict("list") == {"start": [50.0], "duration": [160.0], "cpus": [2.0], "cluster": ["c"]}
    assert (found.periods, found.above_hardware_s) == (0, 320.0)
    assert found.text() == ("the CPUs above the hardware the log was not using (0 CPU-hours) held back: 0 CPU-hours "
                            "in 1 reservations")
    trace = tmp_path / "log.csv"
    trace.write_text(ABOVE_LOG)
    steps = explain({"engine": "batch", "policy": "easy", "model": {"trace": {"path": str(trace)}, "clusters": TWO_CPUS}})
    # EASY on 2 CPUs: b at 100 (a's end), d at 150, c at 200: waits 0, 100, 90, 0. On 4: none waits. Held back: d 40.
    table = steps.table.set_index("step")
    assert table["simulated_mean_wait_s"].tolist() == pytest.approx([47.5, 0, 0, 0, 10, 10])
    assert table.loc["downtime", "gap_share"] == pytest.approx(0)
    assert dict(zip(steps.results[4].jobs["job_id"], steps.results[4].jobs["start_time"])) == \
        {"a": 0, "b": 0, "d": 100, "c": 200, "down-0": 50}


def test_inside_an_idle_period_the_idle_cpus_are_held_back_and_outside_only_those_above_the_hardware():
    # IDLE_LOG on the 4 CPUs it used at its peak (a and b over [5000, 5100)), hardware 2. [0, 5000): idle while b
    # waited, all 4 - 2 idle CPUs held; [5000, 5100): 4 in use, none; [5100, 10000): 2 in use, the 2 above the
    # hardware held (9,800 CPU-seconds above it).
    found = down_time(_jobs(IDLE_LOG), [ClusterState(0, "c", [1] * 4, 1.0, [])], hardware=2.0)
    assert found.reservations.to_dict("list") == {"start": [0.0, 5100.0], "duration": [5000.0, 4900.0],
                                                  "cpus": [2.0, 2.0], "cluster": ["c", "c"]}
    assert (found.periods, found.idle_s, found.above_hardware_s) == (1, 5000.0, 9800.0)
    assert found.text().startswith("1 periods (0.1 days) when a waiting job fit in the idle CPUs and none started, "
                                   "and the CPUs above the hardware the log was not using (3 CPU-hours) held back")
