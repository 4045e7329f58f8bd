"""SGE / UGE accounting records read as jobs: one hand-made record per hard case."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import sge, sniff_log

T0 = 1_700_000_000


def record(**values) -> str:
    """A 45-field accounting line: Grid Engine's defaults, ``values`` by field name."""
    fields = {name: "0" for name in sge.NAMES}
    fields.update(qname="all.q", hostname="node01", group="staff", owner="alice", job_name="sim", account="sge",
                  project="NONE", department="defaultdepartment", granted_pe="NONE", slots="1", category="",
                  pe_taskid="NONE", iow="0.000", cpu="0.000", mem="0.000", io="0.000", maxvmem="0.000")
    fields.update({name: str(value) for name, value in values.items()})
    return ":".join(fields[name] for name in sge.NAMES)


def timed(job, submit, wait, run, **values):
    times = {"job_number": job, "submission_time": T0 + submit, "start_time": T0 + submit + wait,
             "end_time": T0 + submit + wait + run, "ru_wallclock": run}
    return record(**{**times, **values})


LOG = "\n".join([
    "# Version: 8.1.9",
    "# DO NOT MODIFY THIS FILE MANUALLY!",
    # 1. A plain job: 4 slots, h_rt and h_vmem (per slot, G = 2**30) from category; used memory from maxvmem.
    timed(11, 0, 10, 100, slots=4, category="-U staff -l h_rt=3600,h_vmem=2G", cpu=400.0, maxvmem=4294967296.0),
    # 2. A colon inside category (h_rt as HH:MM:SS): the fields after it stay where they are.
    timed(12, 5, 5, 7200, owner="bob", group="phys", qname="long.q", slots=2, category="-l h_rt=02:00:00,h_vmem=512M",
          failed=sge.FAILED_LIMIT, exit_status=137, maxvmem=1073741824.0, project="physics"),
    # 3. UGE 8.2+: the three times in milliseconds.
    record(job_number=13, submission_time=(T0 + 20) * 1000, start_time=(T0 + 30) * 1000, end_time=(T0 + 90) * 1000,
           owner="carol", exit_status=1, account="acct7"),
    # 4. Never started (start_time 0): counted, not a run.
    record(job_number=14, submission_time=T0 + 25, start_time=0, end_time=T0 + 26, failed=26),
    # 5. Record 1 written twice: read once.
    timed(11, 0, 10, 100, slots=4, category="-U staff -l h_rt=3600,h_vmem=2G", cpu=400.0, maxvmem=4294967296.0),
    # 6. A task of a parallel job (pe_taskid set): part of its job's record, not a job.
    timed(12, 5, 5, 7000, hostname="node02", owner="bob", pe_taskid="1.node02"),
    # 7. An array task, below its 600 s limit in lowercase units (k = 1000).
    timed(15, 40, 0, 60, task_number=3, category="-l h_rt=600,h_vmem=1000000k", exit_status=2),
    "",
])


@pytest.fixture(scope="module")
def workload():
    return sge.parse(LOG, source="accounting", timezone="America/Chicago")


def test_each_hard_record_gives_the_job_worked_out_by_hand(workload):
    jobs = workload.jobs.set_index("job_id")
    assert list(workload.jobs.job_id) == ["11", "12", "13", "15.3"]
    expected = {   # submit, wait, run, slots, h_rt (-1: none), memory per slot (MB), status
        "11": (0, 10, 100, 4, 3600, 2048, "completed"),
        "12": (5, 5, 7200, 2, 7200, 512, "timeout"),
        "13": (20, 10, 60, 1, -1, math.nan, "failed"),
        "15.3": (40, 0, 60, 1, 600, 1e9 / 2**20, "failed"),
    }
    for job, (submit, wait, run, slots, limit, memory, status) in expected.items():
        row = jobs.loc[job]
        assert (row.submit_time, row.recorded_wait, row.run_time, row.procs) == (submit, wait, run, slots), job
        assert row.requested_time == limit, job
        assert row.memory_per_cpu_mb == pytest.approx(memory, nan_ok=True), job
        assert row.status == status, job
    assert jobs.loc["11", "used_memory_per_cpu_mb"] == 4096 / 4 and jobs.loc["11", "avg_cpu_time"] == 100
    assert jobs.loc["12", "used_memory_per_cpu_mb"] == 1024 / 2


def test_names_and_accounts(workload):
    jobs = workload.jobs.set_index("job_id")
    assert tuple(jobs.loc["12", ["user", "group", "queue", "account"]]) == ("bob", "phys", "long.q", "physics")
    assert jobs.loc["11", "account"] == "" and jobs.loc["13", "account"] == "acct7"


def test_notes_count_never_started_repeats_and_tasks(workload):
    assert workload.header == {"UnixStartTime": T0, "TimeZoneString": "America/Chicago"}
    assert workload.notes[0] == "sge, 4 jobs from 7 records: 1 never started (not runs), 1 repeated record read once"
    assert workload.notes[1].startswith("1 record(s) of parallel tasks")


def test_sniffed_and_read_through_the_batch_reader():
    assert sniff_log("accounting", LOG[:65536]) == "sge"
    assert not sge.sniff("jobs.csv", "job_id,submit_time,run_time,procs\n1,0,10,1\n")
    assert len(parse_workload(LOG, source="accounting").jobs) == 4


@pytest.mark.parametrize("line, field", [
    (":".join(["x"] * 20), "ru_isrss"),                       # too few fields: the first missing one is named
    (timed(2, 0, 1, 1).replace(f":{T0}:", ":soon:", 1), "submission_time"),
    (timed(2, 0, 5, 1, slots=0), "slots"),
    (timed(2, 0, 0, 0, end_time=T0 - 5), "end_time"),
])
def test_a_bad_record_names_file_line_and_field_or_is_skipped(line, field):
    text = "\n".join([timed(1, 0, 1, 1), line, timed(3, 0, 1, 1)])
    with pytest.raises(TraceError) as caught:
        sge.parse(text, source="accounting")
    assert (caught.value.source, caught.value.line, caught.value.field) == ("accounting", 2, field)
    kept = sge.parse(text, source="accounting", skip_malformed=True)
    assert list(kept.jobs.job_id) == ["1", "3"] and (kept.skipped_lines, kept.first_skipped_line) == (1, 2)


@settings(max_examples=50, deadline=None)
@given(colons=st.integers(0, 6), run=st.integers(0, 10**6), slots=st.integers(1, 4096), milliseconds=st.booleans())
def test_any_number_of_colons_in_category_leaves_the_other_fields_in_place(colons, run, slots, milliseconds):
    scale = 1000 if milliseconds else 1
    category = "-l h_rt=" + ":".join(["1"] * (colons + 1))
    text = "\n".join([
        timed(1, 0, 0, 1),   # the file's shortest record, no colon in its category
        record(job_number=2, submission_time=T0 * scale, start_time=(T0 + 7) * scale,
               end_time=(T0 + 7 + run) * scale, slots=slots, category=category, maxvmem=float(2**20 * slots)),
    ])
    job = sge.parse(text, source="accounting").jobs.set_index("job_id").loc["2"]
    assert (job.run_time, job.procs, job.recorded_wait, job.used_memory_per_cpu_mb) == (run, slots, 7, 1.0)


def test_records_read_in_blocks_give_the_same_jobs(workload, monkeypatch):
    monkeypatch.setattr(sge, "BLOCK", 2)
    blocked = sge.parse(LOG, source="accounting", timezone="America/Chicago")
    assert blocked.jobs.equals(workload.jobs) and blocked.notes == workload.notes
