"""LSF lsb.acct JOB_FINISH records read as jobs: one hand-made record per hard case."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import lsf, sniff_log

T0 = 1_700_000_000


def quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def finish(job, submit, start, end, *, cpus=1, user="alice", queue="normal", res_req="", asked=(), hosts=("hostA",),
           j_status=64, exit_status=0, project="default", idx=0, max_rmem=-1, exit_info=0, saap="/alice",
           run_limit=None, job_name="sim", command="sleep 60", utime=1.5, stime=0.5) -> str:
    """A JOB_FINISH record as LSF 10.1 writes it; ``run_limit=None`` ends it as LSF 7 does (no runLimit)."""
    s = quoted
    fields = [s("JOB_FINISH"), s("10.1"), end, job, 1001, 33554450, cpus, submit, 0, 0, start, s(user), s(queue),
              s(res_req), s(""), s(""), s("login1"), s("/home/" + user), s(""), s(""), s(""), s(f"{submit}.{job}"),
              len(asked), *map(s, asked), len(hosts), *map(s, hosts), j_status, 60.0, s(job_name), s(command),
              utime, stime, *([-1] * 17), s(""), s(project), exit_status, cpus, s("/bin/sh"), 0, idx, max_rmem, -1,
              s(""), s(""), s(""), s(""), 0, s(""), exit_info, s(""), -1, s(saap), s("")]
    if run_limit is not None:
        fields += [s(""), s(""), 0, s(""), 0, s(""), s(""), 0, s(""),          # app ... jobDescription
                   1, 7, s("x"),                                              # submitEXT: one key/value pair
                   1, s("hostA"), 1000, 0, 1.5, 0.5,                           # host usage: one host
                   0, run_limit, 0, s("")]                                    # options3, runLimit, avgMem, ...
    return " ".join(map(str, fields))


LOG = "\n".join([
    # 1. Done: 4 processors, host lists of 2 and 4 entries skipped by their counts, rusage mem per processor,
    #    run limit after the submitEXT and host-usage lists, project and the SAAP's parent as account and group.
    finish(101, T0, T0 + 20, T0 + 620, cpus=4, asked=("hostA", "hostB"), hosts=("hostA",) * 4, max_rmem=8192,
           res_req="select[type==any] rusage[mem=2000]", project="physics", saap="/physics/alice", run_limit=3600,
           utime=100, stime=20),
    # 2. Quotes doubled and spaces in the job name, a line break inside the command: one record, two lines.
    finish(102, T0 + 10, T0 + 10, T0 + 70, user="bob", job_name='say "hi" now', command="echo a\necho b"),
    # 3. Killed at its run limit (exitInfo TERM_RUNLIMIT).
    finish(103, T0 + 20, T0 + 30, T0 + 630, cpus=2, j_status=32, exit_status=140, exit_info=5, run_limit=600),
    # 4. Killed by its owner while running: cancelled.
    finish(104, T0 + 30, T0 + 40, T0 + 50, j_status=32, exit_status=130, exit_info=14),
    # 5. Killed while pending (startTime 0): never started.
    finish(105, T0 + 40, 0, T0 + 45, j_status=32, exit_info=14),
    # 6. Record 1 repeated: read once.
    finish(101, T0, T0 + 20, T0 + 620, cpus=4, asked=("hostA", "hostB"), hosts=("hostA",) * 4, max_rmem=8192,
           res_req="select[type==any] rusage[mem=2000]", project="physics", saap="/physics/alice", run_limit=3600,
           utime=100, stime=20),
    # 7. An element of a job array; a plain failure.
    finish(300, T0 + 50, T0 + 55, T0 + 65, idx=7, j_status=32, exit_status=1),
    # 8. Another kind of event in the file.
    '"EVENT_ADRSV_FINISH" "10.1" 1700000100 1700000000 1001 "user1#0"',
    "",
])


@pytest.fixture(scope="module")
def workload():
    return lsf.parse(LOG, source="lsb.acct", timezone="Asia/Tokyo")


def test_each_hard_record_gives_the_job_worked_out_by_hand(workload):
    jobs = workload.jobs.set_index("job_id")
    assert list(workload.jobs.job_id) == ["101", "102", "103", "104", "300[7]"]
    expected = {   # submit, wait, run, CPUs, run limit (-1: none), memory per processor (MB), status
        "101": (0, 20, 600, 4, 3600, 2000, "completed"),
        "102": (10, 0, 60, 1, -1, math.nan, "completed"),
        "103": (20, 10, 600, 2, 600, math.nan, "timeout"),
        "104": (30, 10, 10, 1, -1, math.nan, "cancelled"),
        "300[7]": (50, 5, 10, 1, -1, math.nan, "failed"),
    }
    for job, (submit, wait, run, cpus, limit, memory, status) in expected.items():
        row = jobs.loc[job]
        assert (row.submit_time, row.recorded_wait, row.run_time, row.procs) == (submit, wait, run, cpus), job
        assert row.requested_time == limit, job
        assert row.memory_per_cpu_mb == pytest.approx(memory, nan_ok=True), job
        assert row.status == status, job
    assert jobs.loc["101", "used_memory_per_cpu_mb"] == 8192 / 1024 / 4 and jobs.loc["101", "avg_cpu_time"] == 30


def test_names_accounts_and_groups(workload):
    jobs = workload.jobs.set_index("job_id")
    assert tuple(jobs.loc["101", ["user", "group", "queue", "account"]]) == ("alice", "physics", "normal", "physics")
    assert tuple(jobs.loc["102", ["user", "group", "account"]]) == ("bob", "", "")


def test_notes_say_what_was_left_out(workload):
    assert workload.header == {"UnixStartTime": T0, "TimeZoneString": "Asia/Tokyo"}
    assert workload.notes == ("lsf, 5 jobs from 7 records: 1 never started (not runs), 1 repeated record read once",
                              "1 record(s) of other events (not JOB_FINISH) left out")


def test_sniffed_and_read_through_the_batch_reader():
    assert sniff_log("lsb.acct", LOG[:65536]) == "lsf"
    assert len(parse_workload(LOG, source="lsb.acct").jobs) == 5


@pytest.mark.parametrize('record, field', [
    (finish(2, T0, T0, T0 + 5).replace(" 2 1001 ", " two 1001 ", 1), "jobId"),
    (finish(2, T0, T0, T0 + 5, cpus=0), "numProcessors"),
    (finish(2, T0, T0 + 9, T0 + 5), "eventTime"),
    (" ".join(finish(2, T0, T0, T0 + 5).split(" ")[:25]), "jStatus"),
])
def test_a_bad_record_names_file_line_and_field_or_is_skipped(record, field):
    text = "\n".join([finish(1, T0, T0, T0 + 5), record, finish(3, T0, T0, T0 + 5)])
    with pytest.raises(TraceError) as caught:
        lsf.parse(text, source="lsb.acct")
    assert (caught.value.source, caught.value.line, caught.value.field) == ("lsb.acct", 2, field)
    kept = lsf.parse(text, source="lsb.acct", skip_malformed=True)
    assert list(kept.jobs.job_id) == ["1", "3"] and (kept.skipped_lines, kept.first_skipped_line) == (1, 2)


def test_a_quote_left_open_is_named():
    text = finish(1, T0, T0, T0 + 5) + "\n" + finish(2, T0, T0, T0 + 5).replace('"sim"', '"sim')
    with pytest.raises(TraceError) as caught:
        lsf.parse(text, source="lsb.acct")
    assert (caught.value.line, caught.value.field) == (2, "record")


@settings(max_examples=50, deadline=None)
@given(asked=st.integers(0, 5), hosts=st.integers(1, 64), name=st.text(' "ab\n\r:;', max_size=12),
       run=st.integers(0, 10**6), limit=st.one_of(st.none(), st.integers(1, 10**6)))
def test_lists_and_free_text_leave_the_fields_after_them_in_place(asked, hosts, name, run, limit):
    record = finish(9, T0, T0 + 3, T0 + 3 + run, cpus=hosts, asked=[f"h{i}" for i in range(asked)],
                    hosts=["hostZ"] * hosts, job_name=name, command=name, idx=2, run_limit=limit)
    job = lsf.parse(record + "\n", source="lsb.acct").jobs.iloc[0]
    assert (job.job_id, job.procs, job.run_time, job.recorded_wait) == ("9[2]", hosts, run, 3)
    assert job.requested_time == (-1 if limit is None else limit)


def test_records_converted_in_blocks_give_the_same_jobs(workload, monkeypatch):
    monkeypatch.setattr(lsf, "BLOCK", 2)
    blocked = lsf.parse(LOG, source="lsb.acct", timezone="Asia/Tokyo")
    assert blocked.jobs.equals(workload.jobs) and blocked.notes == workload.notes
