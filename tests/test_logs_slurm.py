"""Slurm ``sacct --parsable2`` output read as jobs: one hand-made record per hard case, the jobs worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import slurm, sniff_log

# Any field order: JobName (free text) in the middle, Constraints (free text) near the end.
FIELDS = ("JobID", "JobIDRaw", "JobName", "Partition", "Account", "Group", "User", "Submit", "Start", "End", "State",
          "NNodes", "NCPUS", "ReqCPUS", "ReqMem", "Timelimit", "NodeList", "Constraints", "Cluster")
HEADER = "|".join(FIELDS)
DAY = "2024-03-01T"


def row(job, submit="09:00:00", start="09:01:40", end="09:31:40", **values) -> str:
    """One record: ``job`` submitted, started and ended on :data:`DAY` (times of day), other fields by name."""
    fields = dict(JobID=job, JobIDRaw=job, JobName="sim", Partition="batch", Account="proj1", Group="staff",
                  User="alice", State="COMPLETED", NNodes="1", NCPUS="4", ReqCPUS="4", ReqMem="4000Mc",
                  Timelimit="01:00:00", NodeList="n001", Constraints="", Cluster="cl")
    fields.update(Submit=DAY + submit, Start=start if start in ("Unknown", "None", "") else DAY + start,
                  End=end if end in ("Unknown", "") else DAY + end)
    fields.update(values)
    return "|".join(str(fields[name]) for name in FIELDS)


LOG = "\n".join([
    HEADER,
    # 1. A plain job: submitted at 09:00 (the first submission: time 0), waits 100 s, runs 1800 s on 4 CPUs.
    row("100"),
    # 2. Its steps: dropped, a job is its allocation.
    row("100.batch", JobName="batch", Partition="", User="", State="COMPLETED"),
    row("100.extern", JobName="extern", Partition="", User=""),
    row("100.0", JobName="mpirun", Partition="", User="", State="FAILED"),
    # 3. An array task keyed on array id and index; its JobIDRaw (100) must not merge it with job 100.
    #    No group: the account stands for it. 16 GB per node x 2 nodes over 8 CPUs = 4096 MB per CPU; 1 day limit.
    row("200_4", JobIDRaw="100", Group="", User="bob", submit="09:05:00", start="09:05:00", end="10:05:00",
        State="TIMEOUT", NNodes="2", NCPUS="8", ReqMem="16Gn", Timelimit="1-00:00:00", NodeList="n[002-003]"),
    # 4. Heterogeneous components: two jobs. No c/n suffix (21.08+): the job's total, 8000 MB over 2 CPUs.
    row("300+0", JobIDRaw="300", submit="09:10:00", start="09:20:00", end="09:21:00", NCPUS="2", ReqMem="8000M",
        Timelimit="30"),
    row("300+1", JobIDRaw="301", submit="09:10:00", start="09:20:00", end="09:21:00", NCPUS="6", ReqMem="8000M",
        Timelimit="45:00"),
    # 5. Never started: no start; and a cancelled one whose NodeList says so (Start equals End).
    row("400", submit="09:11:00", start="Unknown", end="09:20:00", State="CANCELLED by 1001", NCPUS="0",
        NodeList="None assigned"),
    row("401", submit="09:11:00", start="09:15:00", end="09:15:00", State="CANCELLED by 0", NCPUS="0",
        NodeList="None assigned"),
    # 6. Pending (an array range and a plain job) and running: left out, said in the notes.
    row("500_[1-10%2]", submit="09:12:00", start="Unknown", end="Unknown", State="PENDING", NodeList="None assigned"),
    row("501", submit="09:12:00", start="Unknown", end="Unknown", State="PENDING", NodeList="None assigned"),
    row("502", submit="09:12:00", start="09:13:00", end="Unknown", State="RUNNING"),
    # 7. Requeued (listed with --duplicates): the first run REQUEUED, the last one counts. Job 100 listed twice.
    row("800", submit="09:30:00", start="09:31:00", end="09:40:00", State="REQUEUED"),
    row("800", submit="09:30:00", start="09:50:00", end="10:00:00", State="COMPLETED", Timelimit="UNLIMITED"),
    row("100"),
    # 8. A '|' in the job name: the extra field is the job name's. 2^31 flag bit on a per-node figure: 4000 per CPU.
    row("900", JobName="a|b", submit="09:40:00", start="09:40:00", end="09:40:30", ReqMem="2147487648n",
        Timelimit="Partition_Limit"),
    # 9. A newline (and a '|') in the job name: one record over two lines; a CR in another's name.
    row("1000", JobName="first line\nsecond|line", submit="09:41:00", start="09:42:00", end="09:43:00",
        Timelimit="2-12:00:00", ReqMem="0n"),
    row("1100", JobName="my\rjob", submit="09:42:00", start="09:43:00", end="09:44:00", Timelimit="", State="FAILED"),
    # 10. A '|' in Constraints (the other free-text field) and in the job name both.
    row("1200", JobName="x|y", Constraints="a|b", submit="09:43:00", start="09:44:00", end="09:45:00",
        User="carol", Partition="gpu"),
]) + "\n"


def by_id(workload):
    return {row.job_id: row for row in workload.jobs.itertuples()}


def test_each_hard_case_reads_as_worked_out_by_hand():
    workload = slurm.parse(LOG, source="jobs.sacct")
    jobs = by_id(workload)
    assert sorted(jobs) == ["100", "1000", "1100", "1200", "200_4", "300+0", "300+1", "800", "900"]
    first = jobs["100"]
    assert (first.submit_time, first.recorded_wait, first.run_time, first.procs) == (0.0, 100.0, 1800.0, 4)
    assert (first.requested_time, first.memory_per_cpu_mb, first.status) == (3600.0, 4000.0, "completed")
    assert (first.user, first.group, first.account, first.queue, first.partition) == (
        "alice", "staff", "proj1", "batch", "batch")
    array = jobs["200_4"]
    assert (array.submit_time, array.run_time, array.procs, array.requested_time) == (300.0, 3600.0, 8, 86400.0)
    assert (array.memory_per_cpu_mb, array.group, array.user, array.status) == (4096.0, "proj1", "bob", "timeout")
    assert (jobs["300+0"].procs, jobs["300+0"].memory_per_cpu_mb, jobs["300+0"].requested_time) == (2, 4000.0, 1800.0)
    assert (jobs["300+1"].procs, jobs["300+1"].memory_per_cpu_mb, jobs["300+1"].requested_time) == (6, 8000 / 6, 2700.0)
    assert (jobs["800"].recorded_wait, jobs["800"].run_time, jobs["800"].requested_time) == (1200.0, 600.0, -1.0)
    assert (jobs["900"].memory_per_cpu_mb, jobs["900"].requested_time, jobs["900"].run_time) == (4000.0, -1.0, 30.0)
    assert jobs["1000"].requested_time == 216000.0 and math.isnan(jobs["1000"].memory_per_cpu_mb)
    assert (jobs["1100"].requested_time, jobs["1100"].status) == (-1.0, "failed")
    assert (jobs["1200"].user, jobs["1200"].partition, jobs["1200"].run_time) == ("carol", "gpu", 60.0)
    assert workload.dropped == 2
    assert workload.header["TimeZoneString"] == "UTC"
    assert workload.notes == (
        "sacct, 9 jobs from 19 records: 2 never started (not runs)",
        "3 job step record(s) (123.batch, 123.0) dropped: a job is its allocation",
        "2 repeated record(s) of one job (requeued, or listed twice) read once",
        "3 job(s) pending or running when the log was written: left out",
    )


def test_the_batch_reader_and_the_dispatcher_recognise_sacct_output():
    assert sniff_log("jobs.txt", LOG[:2000]) == "sacct"
    assert sniff_log("x", "2024-03-01 10:00:00;E;1.pbs;user=a") != "sacct"
    assert sniff_log("x", "Submit|Start|End|NCPUS\n") == "sacct"   # the reader then says JobID is missing
    assert sniff_log("x", "Account|User|RawShares|NormShares\n") is None   # sshare, not sacct
    assert len(parse_workload(LOG, source="jobs.sacct").jobs) == 9


def test_without_a_header_the_documented_fields_are_assumed():
    line = "|".join(["7", "cl", "batch", "proj", "", "dave", DAY + "10:00:00", DAY + "10:00:10", DAY + "10:01:10",
                     "COMPLETED", "1", "2", "2000Mc", "", "05:00", "n1", "name|with|pipes"])
    workload = slurm.parse(line + "\n" + line.replace("7|", "8|", 1), source="noheader.sacct")
    assert sniff_log("noheader.sacct", line) == "sacct"
    assert list(workload.jobs.job_id) == ["7", "8"]
    assert (workload.jobs.run_time[0], workload.jobs.requested_time[0], workload.jobs.group[0]) == (60.0, 300.0, "proj")


def test_format_all_header_with_alloccpus_and_a_trailing_bar_reads():
    names = ["Account", "AdminComment", "AllocCPUS", "AllocNodes", "AllocTRES", "Cluster", "Comment", "Elapsed",
             "ElapsedRaw", "Eligible", "End", "JobID", "JobIDRaw", "JobName", "NodeList", "Partition", "ReqMem",
             "ReqTRES", "Start", "State", "Submit", "SubmitLine", "Timelimit", "TimelimitRaw", "TotalCPU", "User", ""]
    values = ["p", "", "16", "1", "billing=16,cpu=16,node=1", "cl", "", "00:10:00", "600", DAY + "08:00:00",
              DAY + "08:10:00", "42", "42", "j", "n1", "long", "", "cpu=16,mem=32G,node=1", DAY + "08:00:00",
              "COMPLETED", DAY + "07:59:00", "sbatch --wrap 'a | b'", "UNLIMITED", "UNLIMITED", "01:20:00", "eve", ""]
    values[21] = "sbatch --wrap 'a | b'"
    workload = slurm.parse("|".join(names) + "\n" + "|".join(values) + "\n", source="all.sacct")
    job = workload.jobs.iloc[0]
    assert (job.job_id, job.procs, job.run_time, job.recorded_wait) == ("42", 16, 600.0, 60.0)
    assert (job.memory_per_cpu_mb, job.avg_cpu_time, job.group, job.requested_time) == (2048.0, 300.0, "p", -1.0)


def test_times_are_read_in_the_sites_zone():
    line = row("1", submit="10:00:00", start="10:00:00", end="10:00:10")
    utc = slurm.parse(HEADER + "\n" + line, source="a")
    prague = slurm.parse(HEADER + "\n" + line, source="a", timezone="Europe/Prague")
    assert utc.header["UnixStartTime"] - prague.header["UnixStartTime"] == 3600   # CET is UTC+1 on 1 March
    # 02:30 on 27 October 2024 happens twice in Prague: the first pass (CEST, UTC+2) is taken.
    autumn = row("2").replace(DAY, "2024-10-27T").replace("T09:00:00", "T02:30:00")
    assert slurm.parse(HEADER + "\n" + autumn, source="a", timezone="Europe/Prague").header["UnixStartTime"] == \
        1729989000   # 2024-10-27T00:30:00Z
    with pytest.raises(TraceError, match="unknown time zone"):
        slurm.parse(LOG, source="a", timezone="Mars/Olympus")


@pytest.mark.parametrize("bad, field, line", [
    (row("9", Submit="2024-02-30T10:00:00"), "Submit", 3),
    (row("9", NCPUS="four"), "NCPUS", 3),
    (row("9", Timelimit="soon"), "Timelimit", 3),
    (row("9", ReqMem="lots"), "ReqMem", 3),
    ("9|9|truncated|batch", "Account", 3),
    (row("9", State="COMPLETED|X"), "JobName", 3),   # a surplus field no free-text field can take
    (row("9", start="10:00:00", end="09:00:00"), "End", 3),
    (row("9", NCPUS="0"), "NCPUS", 3),
])
def test_a_bad_record_names_file_line_and_field_or_is_skipped_and_counted(bad, field, line):
    text = "\n".join([HEADER, row("1"), bad, row("2", submit="09:05:00")]) + "\n"
    with pytest.raises(TraceError) as error:
        slurm.parse(text, source="bad.sacct")
    assert (error.value.source, error.value.line, error.value.field) == ("bad.sacct", line, field)
    workload = slurm.parse(text, source="bad.sacct", skip_malformed=True)
    assert list(workload.jobs.job_id) == ["1", "2"]
    assert workload.skipped_lines == 1 and workload.first_skipped_line == line


def test_a_header_without_a_needed_field_is_an_error_of_the_file():
    with pytest.raises(TraceError, match="line 1, NCPUS"):
        slurm.parse("JobID|Submit|Start|End|User\n1|x|y|z|u\n", source="f")
    with pytest.raises(TraceError, match="line 1, Start"):
        slurm.parse("JobID|Submit|End|NCPUS\n", source="f")


def test_a_repeated_or_changed_header_part_way_is_followed():
    second = "User|NCPUS|End|Start|Submit|JobID"
    text = "\n".join([HEADER, row("1"), second, "zed|3|" + DAY + "12:00:00|" + DAY + "11:00:00|" + DAY + "10:00:00|5",
                      HEADER, row("6", submit="09:30:00")])
    jobs = by_id(slurm.parse(text, source="cat.sacct"))
    assert sorted(jobs) == ["1", "5", "6"]
    assert (jobs["5"].user, jobs["5"].procs, jobs["5"].run_time, jobs["5"].submit_time) == ("zed", 3, 3600.0, 3600.0)


@pytest.mark.parametrize("text, expected", [
    ("1-02:03:04", 93784.0), ("1-02", 93600.0), ("1-02:03", 93780.0), ("02:03:04", 7384.0), ("03:04", 184.0),
    ("90", 5400.0), ("UNLIMITED", None), ("Partition_Limit", None), ("", None),
])
def test_time_limit_forms(text, expected):
    value = slurm.duration_seconds(text)
    assert (math.isnan(value) if expected is None else value == expected)


@pytest.mark.parametrize("text, expected", [
    ("4000Mc", (4000.0, "c")), ("4Gn", (4096.0, "n")), ("16000M", (16000.0, "t")), ("512K", (0.5, "t")),
    ("2147487648n", (4000.0, "c")), ("2147487648", (4000.0, "c")), ("1.5Gc", (1536.0, "c")),
])
def test_memory_request_forms(text, expected):
    assert slurm.request_memory(text) == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 5_000), st.integers(1, 50_000), st.integers(1, 128),
                          st.text(alphabet="ab|\n\r ", max_size=8)), min_size=1, max_size=25))
def test_any_job_names_leave_every_job_and_its_times_whole(jobs):
    """Job names with '|', newlines and CRs never shift fields: each job keeps its submit, wait, run and CPUs."""
    base = 1_709_280_000   # 2024-03-01T08:00:00Z

    def stamp(seconds):
        import datetime as dt
        return dt.datetime.fromtimestamp(base + seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")

    lines = [HEADER]
    for number, (submit, wait, run, cpus, name) in enumerate(jobs, start=1):
        lines.append(row(str(number), JobName=name, Submit=stamp(submit), Start=stamp(submit + wait),
                         End=stamp(submit + wait + run), NCPUS=cpus))
    workload = slurm.parse("\n".join(lines) + "\n", source="p.sacct")
    first = min(submit for submit, *_ in jobs)
    got = {row.job_id: (row.submit_time, row.recorded_wait, row.run_time, row.procs)
           for row in workload.jobs.itertuples()}
    assert got == {str(n): (float(s - first), float(w), float(r), c) for n, (s, w, r, c, _) in enumerate(jobs, 1)}


def test_pieces_of_a_long_log_join_where_a_record_goes_over_a_cut(monkeypatch):
    """A log read in pieces of a few characters reads as one read whole (records cut anywhere, steps, newlines)."""
    whole = slurm.parse(LOG, source="jobs.sacct")
    monkeypatch.setattr(slurm, "PIECE", 7)
    pieces = slurm.parse(LOG, source="jobs.sacct")
    assert pieces.notes == whole.notes
    assert pieces.jobs.equals(whole.jobs)


def test_a_time_past_2106_is_a_bad_value_of_its_field():
    log = ("JobID|Submit|Start|End|NCPUS\n1|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|1\n"
           "2|2024-01-01T00:00:00|2024-01-01T00:01:00|2107-01-01T00:00:00|1\n")
    with pytest.raises(TraceError, match="End") as caught:
        slurm.parse(log, source="j.sacct")
    assert caught.value.line == 3 and "past 2106" in str(caught.value)
    assert slurm.parse(log, source="j.sacct", skip_malformed=True).jobs["job_id"].tolist() == ["1"]


def test_a_conversion_reads_the_same_jobs_as_the_page_repeated_records_and_clusters_included():
    from sched_engine.logs.stream import text_pieces

    log = "\n".join([
        "JobID|Cluster|Submit|Start|End|NCPUS|State",
        "7|a|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|1|REQUEUED",
        "7|a|2024-01-01T00:00:00|2024-01-01T00:03:00|2024-01-01T00:09:00|2|COMPLETED",
        "7|b|2024-01-01T00:00:05|2024-01-01T00:01:00|2024-01-01T00:05:00|4|COMPLETED",   # another cluster's job 7
        "8|a|2024-01-01T00:00:10|2024-01-01T00:01:00|2024-01-01T00:02:00|1|COMPLETED",
        "7|a|2024-01-01T00:00:00|2024-01-01T00:04:00|Unknown|2|RUNNING",               # did not end: the ended counts
    ]) + "\n"
    page = slurm.parse(log, source="j.sacct").jobs
    converted = slurm.read(text_pieces(log), source="j.sacct", compact=True).jobs
    assert page["job_id"].tolist() == ["a:7", "b:7", "a:8"]
    assert page["procs"].tolist() == converted["procs"].tolist() == [2, 4, 1]
    assert page["run_time"].tolist() == converted["run_time"].tolist() == [360.0, 240.0, 60.0]
