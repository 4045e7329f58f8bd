"""Grid Engine JSON accounting (``accounting.jsonl``) read as jobs: one hand-made record per hard case."""

from __future__ import annotations

import json

import pytest

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import sge_json, sniff_log

T0 = 1_700_000_000
US = 1_000_000


def record(**values) -> str:
    """One record as accounting(5) orders a JSONL line; times in microseconds, the usage objects nested."""
    fields = {"job_number": 21, "task_number": 0, "start_time": (T0 + 10) * US, "end_time": (T0 + 110) * US,
              "owner": "alice", "group": "staff", "account": "sge", "qname": "all.q", "hostname": "node01",
              "department": "defaultdepartment", "slots": 4, "job_name": "sim.sh", "priority": 0,
              "submission_time": T0 * US, "submit_cmd_line": "qsub -l h_rt=3600,h_vmem=2G sim.sh",
              "category": "-U staff -l h_rt=3600,h_vmem=2G", "failed": 0, "exit_status": 0,
              "usage": {"rusage": {"ru_wallclock": 100, "ru_utime": 390.5, "ru_stime": 9.5},
                        "usage": {"wallclock": 100, "cpu": 400.0, "mem": 1.5, "maxvmem": 4 * 2**30}}}
    fields.update(values)
    return json.dumps(fields)


LOG = "\n".join([
    # 1. A plain job: 4 slots, 10 s wait, 100 s run; h_rt and h_vmem (per slot, G = 2**30) from category;
    #    maxvmem 4 GiB over 4 slots = 1024 MB each, cpu 400 s over 4 slots = 100 s each. Account "sge" is the default.
    record(),
    # 2. An array task with its times in milliseconds, failed 37 (a limit enforced): killed at its limit. A project.
    record(job_number=22, task_number=3, owner="bob", qname="long.q", slots=2, project="physics", failed=37,
           exit_status=137, submission_time=(T0 + 5) * 1000, start_time=(T0 + 5) * 1000,
           end_time=(T0 + 605) * 1000, category="-l h_rt=00:10:00",
           usage={"usage": {"cpu": 1200.5, "maxvmem": 2**29}}),
    # 3. Never started: start_time 0.
    record(job_number=23, start_time=0, end_time=0, failed=26),
    # 4. A task of a tightly integrated parallel job: part of job 21's record, not a job.
    record(hostname="node02", pe_task_id="1.node02"),
    # 5. Record 1 written twice: read once.
    record(),
    # 6. A line cut short: malformed.
    '{"job_number": 26, "task_number": 0, "start_time"',
    # 7. A slot count that is no number: malformed, named by its field.
    record(job_number=27, slots="four"),
]) + "\n"


def test_each_hard_record_gives_the_job_worked_out_by_hand():
    workload = sge_json.parse(LOG, source="accounting.jsonl", skip_malformed=True)
    jobs = {row.job_id: row for row in workload.jobs.itertuples()}
    assert sorted(jobs) == ["21", "22.3"]
    first, array = jobs["21"], jobs["22.3"]
    assert (first.submit_time, first.recorded_wait, first.run_time, first.procs) == (0.0, 10.0, 100.0, 4)
    assert (first.requested_time, first.memory_per_cpu_mb, first.used_memory_per_cpu_mb) == (3600.0, 2048.0, 1024.0)
    assert (first.avg_cpu_time, first.status, first.user, first.group, first.queue, first.account) == (
        100.0, "completed", "alice", "staff", "all.q", "")
    assert (array.submit_time, array.recorded_wait, array.run_time, array.procs) == (5.0, 0.0, 600.0, 2)
    assert (array.requested_time, array.used_memory_per_cpu_mb, array.avg_cpu_time) == (600.0, 256.0, 600.25)
    assert (array.status, array.user, array.queue, array.account) == ("timeout", "bob", "long.q", "physics")
    assert workload.header["UnixStartTime"] == T0
    assert workload.notes == (
        "sge-json, 2 jobs from 7 records: 1 never started (not runs), 1 repeated record read once, "
        "2 malformed records skipped (first at line 6)",
        "1 record(s) of parallel tasks (pe_task_id) read as part of their job",
    )


@pytest.mark.parametrize("line, field", [(6, "record"), (7, "slots")])
def test_a_bad_record_names_the_file_line_and_field(line, field):
    text = "\n".join(LOG.split("\n")[:5] + [LOG.split("\n")[line - 1]])
    with pytest.raises(TraceError) as caught:
        sge_json.parse(text, source="accounting.jsonl")
    assert (caught.value.field, caught.value.line, caught.value.source) == (field, 6, "accounting.jsonl")


def test_json_accounting_is_told_apart_and_read_by_the_batch_reader():
    assert sniff_log("accounting.jsonl", LOG[:3000]) == "sge-json"
    assert sniff_log("x.json", '{"name": "root", "children": []}') is None   # an organisation tree, not a log
    assert len(parse_workload(LOG, source="accounting.jsonl", skip_malformed=True).jobs) == 2


def test_records_read_together_give_the_jobs_read_one_by_one(monkeypatch):
    """Whole blocks go through Arrow's JSON reader; the same jobs as reading each line (a bad line makes that so)."""
    from sched_engine.logs import sge_json_block

    text = "\n".join(LOG.split("\n")[:5] + [record(job_number=30, project="chem", pe_task_id="NONE")])
    together = sge_json.parse(text, source="a.jsonl")
    monkeypatch.setattr(sge_json, "read_block", lambda *args: None)
    one_by_one = sge_json.parse(text, source="a.jsonl")
    assert together.notes == one_by_one.notes and together.jobs.equals(one_by_one.jobs)
    assert sge_json_block.read_block([record()], [1], sge_json.Names(), sge_json.Memo(sge_json.category_limits))
