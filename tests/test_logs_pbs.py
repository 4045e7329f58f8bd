"""PBS / TORQUE / PBS Pro accounting records read as jobs: one hand-made record per hard case."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.traces import TraceError, parse_workload
from sched_engine.logs import pbs, sniff_log

T0 = 1_700_000_000   # 2023-11-14 22:13:20 UTC

# The leading stamps are the server's local time (here a day off from the epochs): never used for timing.
LOG = "\n".join([
    # 1. TORQUE: exec_host gives 8 CPUs; Resource_List.ncpus=1 beside ppn=4 is TORQUE's default, not the job's.
    "11/15/2023 10:00:00;Q;101.pbs01.example.org;queue=batch",
    f"11/15/2023 10:05:00;E;101.pbs01.example.org;user=alice group=staff account=proj1 jobname=sim queue=batch "
    f"ctime={T0} qtime={T0} etime={T0} start={T0 + 100} exec_host=n1/0-3+n2/0*4 Resource_List.nodes=2:ppn=4 "
    f"Resource_List.ncpus=1 Resource_List.walltime=01:00:00 Resource_List.mem=8gb session=77 end={T0 + 1900} "
    f"Exit_status=0 resources_used.cput=02:00:00 resources_used.mem=4194304kb resources_used.walltime=00:30:00",
    # 2. PBS Pro: 2 x 8 CPUs (exec_host n3/0*8), select's mem summed over chunks; killed at its walltime.
    f"11/15/2023 10:06:00;E;102.pbs01;user=bob group=phys queue=long ctime={T0 + 50} start={T0 + 200} "
    f"end={T0 + 2000} exec_host=n3/0*8+n4/0*8 exec_vnode=(n3:ncpus=8)+(n4:ncpus=8) "
    f"Resource_List.select=2:ncpus=8:mem=16gb Resource_List.ncpus=16 Resource_List.walltime=00:30:00 "
    f"project=_pbs_project_default Exit_status=271",
    # 3. No exec_host: nodes=1:ppn=4 beside ncpus=1 is 4 CPUs; mem in mb; a failure.
    f"11/15/2023 10:07:00;E;103.pbs01;user=carol group=staff queue=batch ctime={T0 + 100} start={T0 + 300} "
    f"end={T0 + 400} Resource_List.nodes=1:ppn=4 Resource_List.ncpus=1 Resource_List.mem=4000mb "
    f"Resource_List.walltime=3600 Exit_status=1",
    # 4. Deleted while queued, TORQUE style: an E record without start. Never started.
    "11/15/2023 10:08:00;D;104.pbs01;requestor=alice@login1",
    f"11/15/2023 10:08:00;E;104.pbs01;user=alice group=staff queue=batch ctime={T0 + 150} Exit_status=271",
    # 5. Deleted while queued, PBS Pro style: a D record and no E record. Never started.
    "11/15/2023 10:09:00;Q;105.pbs01;queue=batch",
    "11/15/2023 10:09:30;D;105.pbs01;requestor=bob@login1",
    # 6. Still queued when the file ends: left out, said in the notes.
    "11/15/2023 10:10:00;Q;106.pbs01;queue=batch",
    # 7. Record 1 written twice: read once.
    f"11/15/2023 10:05:00;E;101.pbs01.example.org;user=alice group=staff account=proj1 jobname=sim queue=batch "
    f"ctime={T0} qtime={T0} etime={T0} start={T0 + 100} exec_host=n1/0-3+n2/0*4 Resource_List.nodes=2:ppn=4 "
    f"Resource_List.ncpus=1 Resource_List.walltime=01:00:00 Resource_List.mem=8gb session=77 end={T0 + 1900} "
    f"Exit_status=0 resources_used.cput=02:00:00 resources_used.mem=4194304kb resources_used.walltime=00:30:00",
    # 8. A carriage return and spaces in the job name; an array task; one CPU; memory per process.
    f"11/15/2023 10:11:00;E;107[3].pbs01;user=dave group=bio jobname=my\rodd job queue=short ctime={T0 + 200} "
    f"start={T0 + 260} end={T0 + 320} exec_host=n5/2 Resource_List.pmem=512mb Exit_status=0\r",
    # 9. Deleted while running (a D record before its E record), below its limit: cancelled.
    "11/15/2023 10:12:00;D;108.pbs01;requestor=root@pbs01",
    f"11/15/2023 10:12:01;E;108.pbs01;user=erin group=bio queue=batch ctime={T0 + 300} start={T0 + 310} "
    f"end={T0 + 610} exec_host=n6/0,2,4-5 Resource_List.walltime=02:00:00 Exit_status=271",
    # 10. PBS Pro quotes a value with spaces; exec_vnode alone gives the CPUs.
    f'11/15/2023 10:13:00;E;109.pbs01;user=frank group=bio queue=batch jobname="two words=x" ctime={T0 + 400} '
    f"start={T0 + 400} end={T0 + 500} exec_vnode=(n7:ncpus=2:mem=1gb)+(n8:ncpus=6) Exit_status=-29",
    "",
])


@pytest.fixture(scope="module")
def workload():
    return pbs.parse(LOG, source="20231115", timezone="Europe/Prague")


def test_each_hard_record_gives_the_job_worked_out_by_hand(workload):
    jobs = workload.jobs.set_index("job_id")
    assert list(workload.jobs.job_id) == ["101", "102", "103", "107[3]", "108", "109"]   # by submission
    expected = {   # submit (from T0), wait, run, CPUs, requested time (-1: none), memory per CPU (MB), status
        "101": (0, 100, 1800, 8, 3600, 8192 / 8, "completed"),
        "102": (50, 150, 1800, 16, 1800, 2 * 16 * 1024 / 16, "timeout"),
        "103": (100, 200, 100, 4, 3600, 4000 / 4, "failed"),
        "107[3]": (200, 60, 60, 1, -1, 512, "completed"),
        "108": (300, 10, 300, 4, 7200, math.nan, "cancelled"),
        "109": (400, 0, 100, 8, -1, math.nan, "timeout"),
    }
    for job, (submit, wait, run, cpus, limit, memory, status) in expected.items():
        row = jobs.loc[job]
        assert (row.submit_time, row.recorded_wait, row.run_time, row.procs) == (submit, wait, run, cpus), job
        assert row.requested_time == limit, job
        assert row.memory_per_cpu_mb == pytest.approx(memory, nan_ok=True), job
        assert row.status == status, job
    assert jobs.loc["101", "used_memory_per_cpu_mb"] == 4096 / 8
    assert jobs.loc["101", "avg_cpu_time"] == 7200 / 8


def test_names_are_kept_as_names(workload):
    jobs = workload.jobs.set_index("job_id")
    assert tuple(jobs.loc["101", ["user", "group", "queue", "account"]]) == ("alice", "staff", "batch", "proj1")
    assert jobs.loc["102", "account"] == ""   # PBS Pro's default project is no account


def test_jobs_that_never_ran_are_counted_and_the_header_dates_the_log(workload):
    assert workload.header == {"UnixStartTime": T0, "TimeZoneString": "Europe/Prague"}
    assert workload.dropped == 2
    assert workload.notes[0] == ("pbs, 6 jobs from 9 records: 2 never started (not runs), "
                                 "1 repeated record read once")
    assert workload.notes[1].startswith("1 job(s) queued or running")


def test_sniffed_by_the_dispatcher_and_the_batch_reader():
    assert pbs.sniff("20231115", LOG[:4096])
    assert sniff_log("20231115", LOG[:4096]) == "pbs"
    assert not pbs.sniff("x.swf", "; Version: 2.2\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 1 -1 -1\n")
    assert len(parse_workload(LOG, source="20231115").jobs) == 6


def _one(record: str) -> str:
    good = f"11/15/2023 10:00:00;E;1.s;user=a queue=q ctime={T0} start={T0} end={T0 + 5} exec_host=n1/0"
    return f"{good}\n{record}\n{good.replace(';1.s;', ';3.s;')}\n"


@pytest.mark.parametrize("record, field", [
    (f"11/15/2023 10:00:00;E;2.s;user=a ctime={T0} start=soon end={T0 + 5} exec_host=n1/0", "start"),
    (f"11/15/2023 10:00:00;E;2.s;user=a ctime={T0} start={T0 + 9} end={T0 + 5} exec_host=n1/0", "end"),
    (f"11/15/2023 10:00:00;E;2.s;user=a ctime={T0} start={T0} end={T0 + 5} exec_host=n1/0*0", "exec_host"),
    (f"11/15/2023 10:00:00;E;2.s;user=a ctime={T0} start={T0} end={T0 + 5} exec_host=n1/x", "exec_host"),
    (f"11/15/2023 10:00:00;E;2.s;user=a ctime=-5 start={T0} end={T0 + 5} exec_host=n1/0", "ctime"),
    (f"11/15/2023 10:00:00;E;2.s;ctime={T0} start={T0} end={T0 + 5} Resource_List.mem=lots", "Resource_List.mem"),
    (f"11/15/2023 10:00:00;E;2.s;ctime={T0} start={T0} end={T0 + 5} exec_host=n/0 Exit_status=x", "Exit_status"),
    ("a line cut short", "record"),
])
def test_a_bad_record_names_file_line_and_field_or_is_skipped(record, field):
    with pytest.raises(TraceError) as caught:
        pbs.parse(_one(record), source="20231115")
    assert (caught.value.source, caught.value.line, caught.value.field) == ("20231115", 2, field)
    kept = pbs.parse(_one(record), source="20231115", skip_malformed=True)
    assert list(kept.jobs.job_id) == ["1", "3"]
    assert (kept.skipped_lines, kept.first_skipped_line) == (1, 2)
    assert "1 malformed record skipped (first at line 2)" in kept.notes[0]


def test_only_queued_and_running_jobs_give_no_job():
    text = f"11/15/2023 10:00:00;Q;1.s;queue=q\n11/15/2023 10:01:00;S;1.s;start={T0}\n"
    workload = pbs.parse(text, source="today")
    assert workload.jobs.empty and workload.notes[1].startswith("1 job(s) queued or running")


@st.composite
def _host_lists(draw):
    hosts, total = [], 0
    for index in range(draw(st.integers(1, 4))):
        items = []
        for _ in range(draw(st.integers(1, 3))):
            low = draw(st.integers(0, 60))
            form = draw(st.sampled_from(["one", "range", "star"]))
            count = draw(st.integers(1, 64))
            items.append(str(low) if form == "one" else f"{low}-{low + count - 1}" if form == "range" else f"{low}*{count}")
            total += 1 if form == "one" else count
        hosts.append(f"node{index:03d}/{','.join(items)}")
    return "+".join(hosts), total


@settings(max_examples=60, deadline=None)
@given(hosts=_host_lists(), wait=st.integers(0, 10**6), run=st.integers(0, 10**6), ncpus=st.integers(1, 4))
def test_any_exec_host_list_and_times_read_back(hosts, wait, run, ncpus):
    spec, cpus = hosts
    line = (f"01/01/2024 00:00:00;E;5.s;user=u ctime={T0} start={T0 + wait} end={T0 + wait + run} "
            f"exec_host={spec} Resource_List.ncpus={ncpus}")
    job = pbs.parse(line, source="f").jobs.iloc[0]
    assert (job.procs, job.recorded_wait, job.run_time) == (cpus, wait, run)


def test_records_kept_in_blocks_give_the_same_jobs(workload, monkeypatch):
    monkeypatch.setattr(pbs, "BLOCK", 2)
    blocked = pbs.parse(LOG, source="20231115", timezone="Europe/Prague")
    assert blocked.jobs.equals(workload.jobs) and blocked.notes == workload.notes
