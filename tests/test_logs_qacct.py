"""Grid Engine ``qacct -j`` output read as jobs: one hand-made record per hard case, the jobs worked out by hand."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import qacct, sniff_log

RULE = "=" * 62


def record(**values) -> str:
    """A ``qacct -j`` record: Grid Engine's defaults, ``values`` by field name (in qacct's order)."""
    fields = {"qname": "all.q", "hostname": "node01", "group": "staff", "owner": "alice", "project": "NONE",
              "department": "defaultdepartment", "jobname": "sim.sh", "jobnumber": "11", "taskid": "undefined",
              "account": "sge", "priority": "0", "qsub_time": "Wed Nov 15 10:00:00 2023",
              "start_time": "Wed Nov 15 10:00:10 2023", "end_time": "Wed Nov 15 10:01:50 2023",
              "granted_pe": "NONE", "slots": "4", "failed": "0", "exit_status": "0", "ru_wallclock": "100s",
              "cpu": "400.000s", "maxvmem": "4.000G", "arid": "undefined",
              "category": "-U staff -l h_rt=3600,h_vmem=2G"}
    fields.update(values)
    return "\n".join([RULE, *(f"{name:<13}{value}" for name, value in fields.items())])


LOG = "\n".join([
    # 1. A plain job: 4 slots, 10 s wait, 100 s run; h_rt and h_vmem (per slot, G = 2**30) from category;
    #    maxvmem 4 GiB over 4 slots = 1024 MB each, cpu 400 s over 4 slots = 100 s each. Account "sge" is the default.
    record(),
    # 2. UGE's times (milliseconds), an array task, failed 37 with its reason: killed at its limit (h_rt 10 min).
    record(jobnumber="12", taskid="3", owner="bob", group="phys", qname="long.q", project="physics", slots="2",
           qsub_time="11/15/2023 10:00:05.250", start_time="11/15/2023 10:00:05.250",
           end_time="11/15/2023 10:10:05.250", failed="37  : qmaster enforced h_rt limit", exit_status="137",
           cpu="1200.500s", maxvmem="512.000M", category="-l h_rt=00:10:00"),
    # 3. Never started: no start or end time.
    record(jobnumber="13", start_time="-/-", end_time="-/-", failed="26  : opening input/output file"),
    # 4. A parallel task's record: part of job 11's, not a job.
    record(hostname="node02", pe_taskid="1.node02"),
    # 5. Record 1 printed twice: read once.
    record(),
    # 6. A time that is no time: the record is malformed. Records are 24 lines (the fourth 25), so this one's
    #    rule is line 122 and its qsub_time, the 12th field, line 134.
    record(jobnumber="14", qsub_time="Wed Nov 31 25:00:00 2023"),
]) + "\n"
T0 = datetime(2023, 11, 15, 10, tzinfo=timezone.utc).timestamp()


def test_each_hard_record_gives_the_job_worked_out_by_hand():
    workload = qacct.parse(LOG, source="qacct.txt", skip_malformed=True)
    jobs = {row.job_id: row for row in workload.jobs.itertuples()}
    assert sorted(jobs) == ["11", "12.3"]
    first, array = jobs["11"], jobs["12.3"]
    assert (first.submit_time, first.recorded_wait, first.run_time, first.procs) == (0.0, 10.0, 100.0, 4)
    assert (first.requested_time, first.memory_per_cpu_mb, first.used_memory_per_cpu_mb) == (3600.0, 2048.0, 1024.0)
    assert (first.avg_cpu_time, first.status, first.user, first.group, first.queue, first.account) == (
        100.0, "completed", "alice", "staff", "all.q", "")
    assert (array.submit_time, array.recorded_wait, array.run_time, array.procs) == (5.25, 0.0, 600.0, 2)
    assert (array.requested_time, array.used_memory_per_cpu_mb, array.avg_cpu_time) == (600.0, 256.0, 600.25)
    assert (array.status, array.user, array.queue, array.account) == ("timeout", "bob", "long.q", "physics")
    assert workload.header["UnixStartTime"] == T0
    assert workload.notes == (
        "qacct, 2 jobs from 6 records: 1 never started (not runs), 1 repeated record read once, "
        "1 malformed record skipped (first at line 134)",
        "1 record(s) of parallel tasks (pe_taskid) read as part of their job",
    )


def test_a_bad_time_names_the_file_line_and_field():
    with pytest.raises(TraceError) as caught:
        qacct.parse(LOG, source="qacct.txt")
    assert (caught.value.field, caught.value.line, caught.value.source) == ("qsub_time", 134, "qacct.txt")


def test_times_are_read_in_the_sites_zone():
    prague = qacct.parse(LOG, source="qacct.txt", timezone="Europe/Prague", skip_malformed=True)
    assert prague.header["UnixStartTime"] == T0 - 3600   # 10:00 in Prague (UTC+1 in November) is 09:00 UTC


def test_qacct_output_is_told_apart_from_the_raw_accounting_file():
    assert sniff_log("qacct.txt", LOG[:3000]) == "qacct"
    assert sniff_log("accounting", "all.q:node01:staff:alice:sim:11:sge:0:" + "0:" * 40) != "qacct"
    assert len(parse_workload(LOG, source="qacct.txt", skip_malformed=True).jobs) == 2
