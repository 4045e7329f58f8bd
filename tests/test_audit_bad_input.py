"""Bad input (issue "Does it look like my cluster?"): a log whose recorded schedule is impossible is reported row by
row, with its lines in the file, and runs still work on what is sound; a log without recorded waits gets an audit
that says once which checks need them, and no command crashes on it."""

from __future__ import annotations

import pandas as pd

from sched_engine.__main__ import main
from sched_engine.analysis.audit import NEEDS_WAITS
from sched_engine.analysis.audit_command import audit_file
from sched_engine.analysis.audit_lines import swf_lines

# On 4 CPUs: job 3 (line 4) ends before it starts (run time -300 s) and the reader leaves it out; job 4 (line 5)
# asks 8 CPUs, more than the machine has; job 6 records no wait. Lines 1-3 and 6-7 are sound.
IMPOSSIBLE = """; MaxProcs: 4
1 0 0 100 2 -1 -1 2 200 -1 1 1 -1 -1 1 -1 -1 -1
2 10 90 100 2 -1 -1 2 200 -1 1 2 -1 -1 1 -1 -1 -1
3 20 5 -300 1 -1 -1 1 200 -1 1 3 -1 -1 1 -1 -1 -1
4 30 0 50 8 -1 -1 8 200 -1 1 3 -1 -1 1 -1 -1 -1
5 40 60 100 2 -1 -1 2 200 -1 1 1 -1 -1 1 -1 -1 -1
6 50 -1 100 1 -1 -1 1 200 -1 1 2 -1 -1 1 -1 -1 -1
7 60 0 -1 -1 -1 -1 -1 200 -1 1 2 -1 -1 1 -1 -1 -1
"""


def test_the_lines_the_reader_kept_and_left_out():
    lines = swf_lines(IMPOSSIBLE, 5)
    assert lines.kept.tolist() == [2, 3, 5, 6, 7]
    assert lines.unread.values.tolist() == [[4, "3", "ends before it starts (run time -300 s)"],
                                            [8, "7", "records no run time (-1)"],
                                            [8, "7", "records no CPU count (-1)"]]
    assert swf_lines(IMPOSSIBLE, 4).kept is None   # not the jobs read (a malformed line skipped): no lines


def test_an_impossible_schedule_is_reported_row_by_row_and_the_rest_is_audited(tmp_path, capsys):
    trace = tmp_path / "impossible.swf"
    trace.write_text(IMPOSSIBLE)
    result = audit_file(str(trace))
    assert result.problems.astype(object).where(result.problems.notna(), None).values.tolist() == [
        [4, None, "3", "ends before it starts (run time -300 s)"],
        [5, 3, "4", "uses 8 CPUs, more than any cluster has (4)"],
        [8, None, "7", "records no run time (-1)"],
        [8, None, "7", "records no CPU count (-1)"]]
    found = result.table.set_index("check")
    # Job 7 only records unknown values (-1): listed, but no impossible schedule.
    assert found.loc["impossible_rows", "value"] == 2 and found.loc["dropped_rows", "value"] == 2
    assert "job 7" not in found.loc["impossible_rows", "detail"]
    assert found.loc["impossible_rows", "detail"].startswith(
        "line 4 (job 3) ends before it starts (run time -300 s): left out of every run; line 5 (job 4) uses 8 CPUs")
    # The rest is audited: jobs 1, 2, 4 and 5 record their waits (job 4 ran in the log: it is in its schedule).
    assert found.loc["recorded_waits", "value"] == 4 and found.loc["recorded_mean_wait_s", "value"] == 37.5
    assert main(["audit", "--trace", str(trace), "--out", str(tmp_path / "audit")]) == 0
    rows = pd.read_csv(tmp_path / "audit" / "audit_rows.csv")
    assert rows["line"].tolist() == [4, 5, 8, 8] and rows["job_id"].tolist() == [3, 4, 7, 7]
    assert "! impossible_rows" in capsys.readouterr().out


def test_runs_of_an_impossible_log_work_on_what_is_sound(tmp_path):
    trace = tmp_path / "impossible.swf"
    trace.write_text(IMPOSSIBLE)
    for policy in ("easy", "recorded"):
        out = tmp_path / policy
        assert main(["batch", "--trace", str(trace), "--policy", policy, "--out", str(out)]) == 0
        jobs = pd.read_csv(out / "jobs.csv", dtype={"job_id": str}).set_index("job_id")
        assert list(jobs.index) == ["1", "2", "4", "5", "6"]   # 3 and 7 left out by the reader
        assert jobs.loc["4", "status"] == "cancelled"   # larger than the machine
        assert (jobs.drop("4")["status"] == "finished").all()
    assert main(["baseline", "--trace", str(trace), "--policy", "easy", "--out", str(tmp_path / "base")]) == 0
    assert len(pd.read_csv(tmp_path / "base" / "steps.csv")) == 6


def test_a_log_without_recorded_waits_is_audited_and_run_never_crashes(tmp_path, capsys):
    trace = tmp_path / "no-waits.swf"
    trace.write_text("\n".join(" ".join("-1" if i == 2 else field for i, field in enumerate(line.split()))
                               if not line.startswith(";") else line for line in IMPOSSIBLE.splitlines()) + "\n")
    result = audit_file(str(trace))
    shown = result.grouped.set_index("check")
    assert shown.loc["recorded_waits", "detail"].endswith(", ".join(NEEDS_WAITS) + " need recorded waits")
    assert not set(shown.index) & set(NEEDS_WAITS) and set(NEEDS_WAITS) <= set(result.table["check"])
    assert main(["baseline", "--trace", str(trace), "--policy", "easy", "--out", str(tmp_path / "base")]) == 0
    assert "the log records no wait times: there is no gap to explain" in capsys.readouterr().out
    assert main(["calibrate", "--trace", str(trace), "--estimates", "perfect", "--allocation", "cpus",
                 "--priorities", "off", "--workers", "1", "--out", str(tmp_path / "cal")]) == 0
    assert "the log records no wait times" in capsys.readouterr().out


def test_a_sacct_log_with_jobs_ending_before_they_start_is_audited_naming_each(tmp_path, capsys):
    from tests.test_logs_slurm import FIELDS, row

    # Lines 3 and 5 end before they start: the reader refuses each (a run asks --skip-malformed); the audit names
    # both by line and audits the two sound jobs.
    records = [row("1"), row("2", start="08:00:00", end="07:00:00"), row("3", start="09:30:00", end="10:00:00"),
               row("4", start="09:10:00", end="09:05:00")]
    trace = tmp_path / "sacct.txt"
    trace.write_text("|".join(FIELDS) + "\n" + "\n".join(records) + "\n")
    assert main(["audit", "--trace", str(trace), "--out", str(tmp_path / "out")]) == 0
    rows = pd.read_csv(tmp_path / "out" / "audit_rows.csv")
    assert rows["line"].tolist() == [3, 5] and rows["problem"].str.contains("ends before it starts").all()
    table = pd.read_csv(tmp_path / "out" / "audit.csv").set_index("check")
    assert table.loc["impossible_rows", "value"] == 2 and table.loc["jobs", "value"] == 2
    assert table.loc["recorded_waits", "value"] == 2 and table.loc["dropped_rows", "value"] == 2
    assert "line 3 End: the job ends before it starts" in capsys.readouterr().out
