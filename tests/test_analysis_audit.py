"""The log audit (sched_engine/analysis/audit.py): hand-computed checks of tiny recorded schedules."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sched_engine.__main__ import main
from sched_engine.analysis.audit import audit, idle_while_waiting, recorded_jobs, time_weighted_quantile, usage_steps


def log(rows) -> pd.DataFrame:
    """Jobs from ``(submit, recorded wait, run, CPUs, requested time, user, queue)`` rows."""
    columns = ["submit_time", "recorded_wait", "run_time", "procs", "requested_time", "user", "queue"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.assign(partition="", user=frame["user"].astype("string"), queue=frame["queue"].astype("string"))


# On 4 CPUs: A [0,10) 4 CPUs; B waits 10 s, [10,20) 2 CPUs; C waits 5 s, [10,20) 4 CPUs (6 in use: over the
# hardware); D waits [20,30) with every CPU idle, runs [30,40) on 1 CPU.
FOUR = log([(0, 0, 10, 4, 10, "u1", "1"), (0, 10, 10, 2, 20, "u2", "1"), (5, 5, 10, 4, 10, "u1", "2"),
            (20, 10, 10, 1, 40, "u2", "1")])


def checks(frame: pd.DataFrame) -> dict:
    return {row.check: row for row in frame.itertuples(index=False)}


def test_the_recorded_schedule_against_four_cpus_by_hand():
    found = checks(audit(FOUR, 4, {"Queue": "2 interactive"}))
    assert found["recorded_peak_cpus"].value == 6 and found["recorded_peak_cpus"].verdict == "warning"
    assert found["time_over_hardware_share"].value == 0.25 and found["time_over_hardware_share"].verdict == "warning"
    assert "up to 6" in found["time_over_hardware_share"].detail
    assert found["recorded_utilisation"].value == 110 / 160
    assert found["recorded_mean_wait_s"].value == 6.25
    assert found["jobs_larger_than_hardware"].value == 0
    assert found["idle_while_waiting_share"].value == 0.25
    assert "longest: 10 s from t=20 s" in found["idle_while_waiting_share"].detail
    assert found["user_max_running_jobs"].value == 1 and "user u1" in found["user_max_running_jobs"].detail
    assert found["queue:1"].value == 3 and "recorded mean wait 7 s" in found["queue:1"].detail
    assert found["queue:2"].value == 1
    assert found["header_queues"].detail == "the header describes Queue: 2 interactive"
    assert found["estimate_accuracy_median"].value == 0.75 and found["jobs_killed_at_limit"].value == 2
    assert found["zero_length_jobs"].value == 0
    assert found["longest_submission_gap_s"].value == 15 and found["longest_submission_gap_s"].verdict == "ok"


def test_a_time_weighted_percentile_weighs_each_level_by_how_long_it_holds():
    times, values = usage_steps(recorded_jobs(FOUR)[0])
    assert times.tolist() == [0, 10, 20, 30, 40] and values.tolist() == [4, 6, 0, 1, 0]
    assert time_weighted_quantile(times, values, 0.99) == 6
    assert time_weighted_quantile(times, values, 0.5) == 1      # 0 and 1 hold half the time
    assert time_weighted_quantile(np.array([0.0, 90.0, 100.0]), np.array([2.0, 50.0, 0.0]), 0.5) == 2


def test_an_idle_period_needs_a_waiting_job_that_fits_the_idle_cpus():
    assert idle_while_waiting(recorded_jobs(FOUR)[0], 4) == [(20.0, 30.0)]
    # On 6 CPUs B (2 CPUs) waits [0,10) beside A's 4 with 2 idle: it fits, so that wait counts too; C (4) does not.
    assert idle_while_waiting(recorded_jobs(FOUR)[0], 6) == [(0.0, 10.0), (20.0, 30.0)]
    assert idle_while_waiting(recorded_jobs(FOUR)[0], 5) == [(20.0, 30.0)]


def test_the_busiest_user_at_once_counts_ends_before_starts():
    jobs = log([(0, 0, 10, 2, 10, "a", ""), (0, 0, 10, 2, 10, "a", ""), (0, 10, 5, 8, 5, "a", ""),
                (0, 0, 30, 1, 30, "b", "")])
    found = checks(audit(jobs, 16))
    assert found["user_max_running_jobs"].value == 2 and "the most CPUs any user held at once: 8" in \
        found["user_max_running_jobs"].detail


def test_a_log_without_recorded_waits_says_which_checks_need_them():
    jobs = FOUR.assign(recorded_wait=-1.0)
    found = checks(audit(jobs, 4))
    assert found["recorded_schedule"].verdict == "warning" and "need recorded waits" in found["recorded_schedule"].detail
    assert "recorded_peak_cpus" not in found and found["estimate_accuracy_median"].value == 0.75


def test_an_impossible_row_is_reported_and_the_rest_audited():
    jobs = pd.concat([FOUR, log([(3, 4, -5, 2, 10, "u3", "1")])], ignore_index=True)
    found = checks(audit(jobs, 4))
    assert found["impossible_rows"].value == 1 and found["impossible_rows"].verdict == "warning"
    assert found["recorded_peak_cpus"].value == 6 and found["recorded_mean_wait_s"].value == 6.25


def test_the_command_writes_audit_csv(tmp_path, capsys):
    trace = tmp_path / "four.swf"
    lines = ["; MaxProcs: 4"] + [f"{i + 1} {s} {w} {r} {p} -1 -1 {p} {q} -1 1 {u} -1 -1 1 -1 -1 -1"
                                 for i, (s, w, r, p, q, u) in enumerate([(0, 0, 10, 4, 10, 1), (0, 10, 10, 2, 20, 2),
                                                                         (5, 5, 10, 4, 10, 1), (20, 10, 10, 1, 40, 2)])]
    trace.write_text("\n".join(lines) + "\n")
    assert main(["audit", "--trace", str(trace), "--out", str(tmp_path / "out")]) == 0
    frame = pd.read_csv(tmp_path / "out" / "audit.csv")
    assert list(frame.columns) == ["check", "value", "unit", "verdict", "detail"]
    assert frame.set_index("check").loc["time_over_hardware_share", "value"] == 0.25
    assert "warning(s)" in capsys.readouterr().out
    assert main(["audit", "--trace", str(tmp_path / "missing.swf"), "--out", str(tmp_path / "x")]) == 2
    assert not math.isnan(frame.set_index("check").loc["recorded_utilisation", "value"])
