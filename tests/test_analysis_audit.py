"""The log audit (sched_engine/analysis/audit*.py): hand-computed checks of tiny recorded schedules."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.__main__ import main
from sched_engine.analysis.audit import NEEDS_WAITS, audit
from sched_engine.analysis.audit_periods import idle_periods, submission_gaps
from sched_engine.analysis.audit_schedule import (
    covering_minimum,
    cpus_in_use,
    recorded_schedule,
    segments,
    time_weighted_quantile,
    user_peaks,
)
from sched_engine.analysis.audit_workload import described_queues, read_header_lines

KS = 1000.0   # the hand-computed logs run in thousands of seconds, so their idle periods pass the one-hour floor


def log(rows, scale: float = 1.0) -> pd.DataFrame:
    """Jobs from ``(submit, recorded wait, run, CPUs, requested time, user, queue)`` rows; times times ``scale``."""
    columns = ["submit_time", "recorded_wait", "run_time", "procs", "requested_time", "user", "queue"]
    frame = pd.DataFrame(rows, columns=columns)
    for name in ("submit_time", "recorded_wait", "run_time", "requested_time"):
        frame[name] = frame[name].astype(float) * np.where(frame[name] >= 0, scale, 1.0)
    return frame.assign(job_id=[str(i + 1) for i in range(len(frame))], partition="",
                        user=frame["user"].astype("string"), queue=frame["queue"].astype("string"))


# On 4 CPUs: A [0,10) 4 CPUs; B (2 CPUs) waits [0,10), runs [10,20); C (4 CPUs) waits [5,10), runs [10,20): 6 CPUs
# in use, over the hardware; D (1 CPU) waits [20,30) with every CPU idle, runs [30,40). Times in ks.
FOUR = log([(0, 0, 10, 4, 10, "u1", "1"), (0, 10, 10, 2, 20, "u2", "1"), (5, 5, 10, 4, 10, "u1", "2"),
            (20, 10, 10, 1, 40, "u2", "1")], KS)


def checks(result) -> dict:
    return {row.check: row for row in result.table.itertuples(index=False)}


def test_the_recorded_schedule_against_four_cpus_by_hand():
    result = audit(FOUR, 4)
    found = checks(result)
    assert list(result.table.columns) == ["check", "value", "unit", "verdict", "detail"]
    assert set(result.table["verdict"]) <= {"ok", "warning"} and result.table["detail"].str.len().min() > 0
    assert found["recorded_peak_cpus"].value == 6 and found["recorded_peak_cpus"].verdict == "warning"
    assert found["recorded_p99_cpus"].value == 6            # 6 CPUs hold for a quarter of the time
    assert found["time_over_hardware_share"].value == 0.25 and found["time_over_hardware_share"].verdict == "warning"
    assert "up to 6 at its peak" in found["time_over_hardware_share"].detail
    assert "run it on the capacity it used, 6 CPUs" in found["time_over_hardware_share"].detail
    assert found["recorded_capacity_cpus"].value == 6 and result.capacity_cpus == 6
    assert found["recorded_utilisation"].value == 110 / 160     # (40 + 20 + 40 + 10) CPU-ks over 4 CPUs x 40 ks
    assert found["recorded_mean_wait_s"].value == 6.25 * KS
    assert found["jobs_larger_than_hardware"].value == 0 and found["impossible_rows"].value == 0
    assert found["estimate_accuracy_median"].value == 0.75      # 1, 0.5, 1, 0.25
    assert found["jobs_killed_at_limit"].value == 2             # A and C ran their whole request
    assert found["zero_length_jobs"].value == 0
    assert found["longest_submission_gap_s"].value == 15 * KS and found["longest_submission_gap_s"].verdict == "ok"
    assert result.usage["time"].tolist() == [0, 10 * KS, 20 * KS, 30 * KS, 40 * KS]
    assert result.usage["cpus"].tolist() == [4, 6, 0, 1, 0]


def test_an_idle_period_while_jobs_waited_is_found_on_the_capacity_the_log_used():
    # On the 6 CPUs the log used: B (2 CPUs) waited [0,10) beside A's 4 with 2 idle, and D [20,30) on an idle machine.
    found = checks(audit(FOUR, 4))
    assert found["idle_while_waiting_s"].value == 20 * KS and found["idle_while_waiting_s"].verdict == "warning"
    assert "of the 6 CPUs the log used" in found["idle_while_waiting_s"].detail
    assert found["idle_period_1"].value == 10 * KS and "day 0 00:00 (log time) to day 0 02:46" in \
        found["idle_period_1"].detail and "2 of 6 CPUs idle while up to 2 jobs waited, the smallest asking 2" in \
        found["idle_period_1"].detail
    assert "6 of 6 CPUs idle" in found["idle_period_2"].detail


def test_idle_periods_need_a_waiting_job_that_fits_and_no_start():
    seg = segments(recorded_schedule(FOUR)[0])
    assert seg.times.tolist() == [0, 5 * KS, 10 * KS, 20 * KS, 30 * KS, 40 * KS]
    assert seg.used.tolist() == [4, 4, 6, 0, 1] and seg.waiting.tolist() == [1, 2, 0, 1, 0]
    assert seg.smallest_waiting.tolist() == [2, 2, math.inf, 1, math.inf]

    def periods(capacity):
        return [(p.start, p.end) for p in idle_periods(seg, capacity, minimum_s=0).itertuples()]
    assert periods(4) == [(20 * KS, 30 * KS)]
    assert periods(5) == [(20 * KS, 30 * KS)]     # 1 CPU idle beside A: B (2) does not fit
    assert periods(6) == [(0, 10 * KS), (20 * KS, 30 * KS)]
    assert idle_periods(seg, 6).empty is False and idle_periods(seg, 6, minimum_s=10 * KS + 1).empty
    # A job starting while others wait ends a period: E (1 CPU) starts at 25 ks inside D's wait on 6 CPUs.
    later = pd.concat([FOUR, log([(22, 3, 1, 1, 5, "u3", "1")], KS)], ignore_index=True)
    split = idle_periods(segments(recorded_schedule(later)[0]), 6, minimum_s=0)
    assert [(p.start, p.end) for p in split.itertuples()] == [(0, 10 * KS), (20 * KS, 25 * KS), (25 * KS, 30 * KS)]


def test_a_time_weighted_percentile_weighs_each_level_by_how_long_it_holds():
    times, values = cpus_in_use(recorded_schedule(FOUR)[0])
    assert time_weighted_quantile(times, values, 0.99) == 6
    assert time_weighted_quantile(times, values, 0.5) == 1      # 0 and 1 hold half the time
    # 11 CPUs for 1 s of 1,000: the p99 is 1 CPU, the peak 11; over 1 CPU for exactly 0.1% of the time: no warning.
    brief = log([(0, 0, 1, 10, 1, "a", ""), (0, 0, 1000, 1, 1000, "b", "")])
    found = checks(audit(brief, 1))
    assert found["recorded_p99_cpus"].value == 1 and found["recorded_peak_cpus"].value == 11
    assert found["time_over_hardware_share"].value == 0.001 and found["time_over_hardware_share"].verdict == "ok"
    assert found["recorded_capacity_cpus"].value == 1


def test_the_most_jobs_and_cpus_a_user_ran_at_once_count_ends_before_starts():
    # a: two 2-CPU jobs [0,10), then an 8-CPU job [10,15) (not 12 CPUs at 10); c: two jobs at once too.
    jobs = log([(0, 0, 10, 2, 10, "a", ""), (0, 0, 10, 2, 10, "a", ""), (0, 10, 5, 8, 5, "a", ""),
                (0, 0, 30, 1, 30, "b", ""), (3, 0, 4, 1, 4, "c", ""), (4, 0, 4, 1, 4, "c", "")])
    peaks = user_peaks(recorded_schedule(jobs)[0])
    assert peaks.values.tolist() == [["a", 2, 8.0], ["c", 2, 2.0], ["b", 1, 1.0]]
    found = checks(audit(jobs, 16))
    assert found["user_max_running_jobs"].value == 2 and found["user_max_running_jobs"].verdict == "warning"
    assert "a likely per-user limit of 2 running jobs" in found["user_max_running_jobs"].detail
    assert found["user_max_cpus"].value == 8 and "user a held 8 CPUs" in found["user_max_cpus"].detail
    alone = checks(audit(jobs[jobs["user"] != "c"], 16))
    assert alone["user_max_running_jobs"].verdict == "ok" and "user a had 2 jobs" in alone["user_max_running_jobs"].detail


def test_jobs_larger_than_the_hardware_and_impossible_rows_are_reported_and_the_rest_audited():
    jobs = pd.concat([FOUR, log([(3, 4, -5, 2, 10, "u3", "1"), (50, 0, 1, 8, 1, "u3", "1")], KS)], ignore_index=True)
    result = audit(jobs.assign(job_id=[str(i + 1) for i in range(len(jobs))]), 4)
    found = checks(result)
    assert found["impossible_rows"].value == 2 and found["impossible_rows"].verdict == "warning"
    assert list(result.problems.columns) == ["line", "row", "job_id", "problem"]
    assert result.problems[["row", "job_id", "problem"]].values.tolist() == [
        [5, "5", "ends before it starts (run time -5 s)"], [6, "6", "uses 8 CPUs, more than any cluster has (4)"]]
    assert result.problems["line"].isna().all()   # a frame, not a file: no lines
    assert "job 5 (row 5 of the jobs read) ends before it starts" in found["impossible_rows"].detail
    assert found["jobs_larger_than_hardware"].value == 1 and found["jobs_larger_than_hardware"].verdict == "warning"
    # The job that ends before it starts is left out; the 8-CPU job ran in the log, so it is in its schedule.
    assert found["recorded_peak_cpus"].value == 8 and found["recorded_mean_wait_s"].value == 25 * KS / 5
    assert found["jobs"].value == 6 and "5 of them with a sound recorded schedule" in found["jobs"].detail


def test_a_log_without_recorded_waits_says_which_checks_need_them():
    result = audit(FOUR.assign(recorded_wait=np.nan), 4)
    found = checks(result)
    assert found["recorded_waits"].value == 0 and found["recorded_waits"].verdict == "warning"
    assert all(name in found["recorded_waits"].detail for name in NEEDS_WAITS)
    for name in NEEDS_WAITS:
        assert math.isnan(found[name].value) and found[name].detail.startswith("needs recorded waits")
    assert found["estimate_accuracy_median"].value == 0.75 and found["queue:1"].value == 3
    assert "no recorded wait" in found["queue:1"].detail and result.usage.empty
    # audit.csv keeps one row per check; the table as shown names them once, in the recorded_waits row.
    assert set(result.folded) == set(NEEDS_WAITS) and not set(result.grouped["check"]) & set(NEEDS_WAITS)
    assert len(result.grouped) == len(result.table) - len(NEEDS_WAITS)
    assert result.grouped["detail"].str.contains("need recorded waits").sum() == 1


def test_without_hardware_or_requested_times_each_lack_is_said_once():
    result = audit(FOUR.assign(requested_time=-1.0), None)
    shown = result.grouped.set_index("check")["detail"]
    assert shown["hardware_cpus"].endswith("; time_over_hardware_share, recorded_utilisation, idle_while_waiting_s, "
                                           "jobs_larger_than_hardware need the hardware")
    assert shown["estimate_accuracy_median"].endswith("; jobs_killed_at_limit needs requested times")
    assert set(result.folded) == {"time_over_hardware_share", "recorded_utilisation", "idle_while_waiting_s",
                                  "jobs_larger_than_hardware", "jobs_killed_at_limit"}
    assert checks(result)["jobs_killed_at_limit"].detail.startswith("needs requested times")   # its own row in the CSV


def test_a_log_without_hardware_is_audited_without_the_checks_that_need_it():
    found = checks(audit(FOUR, None))
    assert math.isnan(found["hardware_cpus"].value) and found["hardware_cpus"].verdict == "warning"
    assert math.isnan(found["time_over_hardware_share"].value) and found["recorded_peak_cpus"].value == 6
    assert found["idle_while_waiting_s"].detail == "needs the hardware"


def test_queues_their_header_descriptions_and_gaps_in_submissions():
    lines = ["; MaxProcs: 4", "; Queue: 1 normal", "; Queue: 2 best-effort, preemptible", "; Queue:  3 interactive",
             "; Queues: batch and interactive jobs"]
    described = described_queues(lines)
    assert described.values.tolist() == [["1", "normal", ""], ["2", "best-effort, preemptible", "preemptible, best-effort"],
                                         ["3", "interactive", "interactive"],
                                         ["", "batch and interactive jobs", "interactive"]]
    found = checks(audit(FOUR, 4, header_lines=lines))
    assert found["queue:1"].value == 3 and "19 CPU-hours (63.6% of all)" in found["queue:1"].detail
    assert "recorded mean wait 6,667 s" in found["queue:1"].detail and found["queue:1"].verdict == "ok"
    assert "'best-effort, preemptible': preemptible, best-effort" in found["queue:2"].detail
    assert found["queue:2"].verdict == "warning"
    assert found["header_queues"].value == 4 and "no job of the log is in queue 3" in found["header_queues"].detail
    gaps = submission_gaps(np.array([0.0, 100.0, 100.0 + 2 * 86400, 3 * 86400]))
    assert gaps.values.tolist() == [[100.0, 100.0 + 2 * 86400, 2 * 86400]]
    quiet = log([(0, 0, 1, 1, 1, "a", ""), (3 * 86400, 0, 1, 1, 1, "a", "")])
    assert checks(audit(quiet, 1))["longest_submission_gap_s"].verdict == "warning"


def test_zero_length_jobs_are_counted():
    jobs = log([(0, 0, 0, 1, 10, "a", ""), (1, 0, 5, 1, 5, "a", "")])
    found = checks(audit(jobs, 2))
    assert found["zero_length_jobs"].value == 1 and found["zero_length_jobs"].verdict == "warning"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 8), st.integers(1, 9)), min_size=0, max_size=25))
def test_covering_minimum_is_the_smallest_value_of_the_intervals_over_each_point(intervals):
    size = 24
    first = np.array([a for a, _, _ in intervals], dtype=np.int64)
    stop = np.minimum(first + np.array([w for _, w, _ in intervals], dtype=np.int64), size)
    values = np.array([v for _, _, v in intervals], dtype=float)
    expected = [min([v for a, b, v in zip(first, stop, values) if a <= k < b], default=math.inf) for k in range(size)]
    assert covering_minimum(first, stop, values, size).tolist() == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10), st.integers(0, 10), st.integers(1, 4),
                          st.sampled_from("abc")), min_size=1, max_size=20))
def test_user_peaks_match_counting_at_every_instant(rows):
    jobs = log([(s, w, r, p, r, u, "") for s, w, r, p, u in rows])
    peaks = user_peaks(recorded_schedule(jobs)[0]).set_index("user")
    for user in set(u for *_, u in rows):
        mine = [(s + w, s + w + r, p) for s, w, r, p, u in rows if u == user and r > 0]
        instants = [start for start, _, _ in mine] or [0]
        most_jobs = max(sum(1 for a, b, _ in mine if a <= t < b) for t in instants)
        most_cpus = max(sum(p for a, b, p in mine if a <= t < b) for t in instants)
        assert peaks.loc[user, "running_jobs"] == most_jobs and peaks.loc[user, "cpus"] == most_cpus


SWF_ROWS = [(0, 0, 10, 4, 10, 1, 1), (0, 10, 10, 2, 20, 2, 1), (5, 5, 10, 4, 10, 1, 2), (20, 10, 10, 1, 40, 2, 1)]


def write_swf(path, header, rows):
    lines = header + [f"{i + 1} {s * 1000} {w * 1000} {r * 1000} {p} -1 -1 {p} {q * 1000} -1 1 {u} -1 -1 {queue} -1 -1 -1"
                      for i, (s, w, r, p, q, u, queue) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")


def test_the_command_writes_audit_csv_and_prints_the_table(tmp_path, capsys):
    trace = tmp_path / "four.swf.gz"
    plain = tmp_path / "four.swf"
    write_swf(plain, ["; MaxProcs: 4", "; Queue: 2 best-effort"], SWF_ROWS + [(30, 0, -300, 1, 10, 3, 1)])
    trace.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_header_lines(trace) == ["; MaxProcs: 4", "; Queue: 2 best-effort"]
    assert main(["audit", "--trace", str(trace), "--out", str(tmp_path / "out")]) == 0
    frame = pd.read_csv(tmp_path / "out" / "audit.csv")
    assert list(frame.columns) == ["check", "value", "unit", "verdict", "detail"]
    table = frame.set_index("check")
    assert table.loc["time_over_hardware_share", "value"] == 0.25 and table.loc["hardware_cpus", "value"] == 4
    assert table.loc["dropped_rows", "value"] == 1 and table.loc["queue:2", "verdict"] == "warning"
    printed = capsys.readouterr().out
    assert "warning(s)" in printed and "! time_over_hardware_share" in printed and "  recorded_p99_cpus" in printed
    # Clusters from a .machines file: their CPUs summed; the largest one bounds a job.
    machines = tmp_path / "two.machines"
    machines.write_text("0 small 1 2 1 1000\n1 big 1 3 1 1000\n")
    assert main(["audit", "--trace", str(plain), "--machines", str(machines), "--out", str(tmp_path / "m")]) == 0
    table = pd.read_csv(tmp_path / "m" / "audit.csv").set_index("check")
    assert table.loc["hardware_cpus", "value"] == 5 and table.loc["impossible_rows", "value"] == 3
    rows = pd.read_csv(tmp_path / "m" / "audit_rows.csv")   # the file's lines; the job the reader left out too
    assert rows["problem"].tolist() == ["uses 4 CPUs, more than any cluster has (3)"] * 2 + [
        "ends before it starts (run time -300000 s)"]
    assert rows["line"].tolist() == [3, 5, 7] and rows["job_id"].tolist() == [1, 3, 5]
    # No MaxProcs line: audited, the hardware checks say they need it; a missing file: exit status 2.
    write_swf(plain, [], SWF_ROWS)
    assert main(["audit", "--trace", str(plain), "--out", str(tmp_path / "n")]) == 0
    assert math.isnan(pd.read_csv(tmp_path / "n" / "audit.csv").set_index("check").loc["hardware_cpus", "value"])
    assert main(["audit", "--trace", str(tmp_path / "missing.swf"), "--out", str(tmp_path / "x")]) == 2
    assert "missing.swf" in capsys.readouterr().err


def test_the_command_says_once_which_checks_need_recorded_waits(tmp_path, capsys):
    trace = tmp_path / "no-waits.swf"
    write_swf(trace, ["; MaxProcs: 4"], [(s, -0.001, r, p, q, u, queue) for s, _, r, p, q, u, queue in SWF_ROWS])
    assert main(["audit", "--trace", str(trace), "--out", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "audit.csv").set_index("check")
    assert set(NEEDS_WAITS) <= set(table.index) and table.loc[list(NEEDS_WAITS), "value"].isna().all()
    printed = capsys.readouterr().out
    assert printed.count("need recorded waits") == 1 and "! recorded_waits" in printed
    assert not any(f"! {name} " in printed for name in NEEDS_WAITS)
    assert f"{len(NEEDS_WAITS)} checks without a value are named in the rows below that say why" in printed
