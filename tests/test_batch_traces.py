"""Workload, cluster and failure readers: real samples, small written files, and errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from sched_engine.batch.machine_files import parse_failures, parse_machines, read_failures, read_machines
from sched_engine.batch.requirements import parse_requirement, suitable_clusters
from sched_engine.batch.traces import GWF_FIELDS, TraceError, parse_workload, read_workload

SAMPLES = Path(__file__).resolve().parents[1] / "sample_traces"

SWF_HEADER = "; MaxNodes: 4\n; MaxProcs: 8\n"
SWF_LINE = "{id} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 {user} 1 -1 1 -1 -1 -1\n"


def swf(*jobs) -> str:
    return SWF_HEADER + "".join(
        SWF_LINE.format(id=i + 1, submit=s, run=r, procs=p, req=r, user=1) for i, (s, r, p) in enumerate(jobs)
    )


def test_hpc2n_excerpt_header_and_cleaning():
    workload = read_workload(SAMPLES / "hpc2n-excerpt.swf")
    assert workload.format == "swf"
    assert workload.header["MaxProcs"] == 240
    assert workload.header["UnixStartTime"] == 1027839845
    # 3,170 records; jobs without a run time or processors are dropped and counted.
    assert len(workload.jobs) + workload.dropped == 3170
    assert workload.dropped == 25
    first = workload.jobs.iloc[0]
    assert (first.job_id, first.submit_time, first.run_time, first.procs) == ("1", 0.0, 31405.0, 30)


def test_extended_swf_keeps_queue_and_requirement():
    workload = read_workload(SAMPLES / "cerit-sc-2013-slice.swf")
    assert workload.format == "swf-ext"
    first = workload.jobs.iloc[0]
    assert first.queue == "q_1d"
    assert first.requirement == "1:ppn=64:x86_64:cl_zewura#excl"


def test_gzip_is_read_directly(tmp_path):
    path = tmp_path / "tiny.swf.gz"
    path.write_bytes(gzip.compress(swf((0, 10, 2), (5, 20, 4)).encode()))
    workload = read_workload(path)
    assert list(workload.jobs.run_time) == [10.0, 20.0]
    assert workload.header["MaxProcs"] == 8


def test_wrong_field_count_names_the_line_and_field():
    text = swf((0, 10, 2)) + "2 5 -1 20 4 -1 -1\n" + swf((9, 1, 1)).split("\n", 2)[2]
    with pytest.raises(TraceError) as error:
        parse_workload(text, source="site.swf")
    assert error.value.line == 4
    assert error.value.source == "site.swf"
    assert error.value.field == "requested_procs"
    assert "expected 18 fields, found 7" in str(error.value)


def test_non_numeric_field_is_named():
    text = swf((0, 10, 2)).replace(" 10 2 ", " ten 2 ", 1)
    with pytest.raises(TraceError) as error:
        parse_workload(text, source="site.swf")
    assert (error.value.line, error.value.field) == (3, "run_time")


def test_nan_is_rejected():
    text = swf((0, 10, 2)).replace(" 10 2 ", " nan 2 ", 1)
    with pytest.raises(TraceError, match="not a finite number"):
        parse_workload(text, source="site.swf")


def test_skip_malformed_counts_the_skipped_lines():
    text = swf((0, 10, 2)) + "garbage line\n" + "3 7 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n"
    workload = parse_workload(text, source="site.swf", skip_malformed=True)
    assert list(workload.jobs.job_id) == ["1", "3"]
    assert (workload.skipped_lines, workload.first_skipped_line) == (1, 4)


def test_non_utf8_bytes_are_reported(tmp_path):
    path = tmp_path / "bad.swf"
    path.write_bytes(swf((0, 10, 2)).encode() + b"\xff\xfe\n")
    with pytest.raises(TraceError, match="not UTF-8") as error:
        read_workload(path)
    assert error.value.line == 4


def test_gwf_fields_and_sites():
    values = ["7", "100", "5", "60", "4", "-1", "-1", "4", "120", "-1", "1", "U3", "G1", "app9", "-1", "-1",
              "fs0", "fs2", "-1", "-1", "-1", "-1", "-1", "x86", "-1", "-1", "-1", "-1", "-1"]
    assert len(values) == len(GWF_FIELDS) == 29
    text = "# a GWF file\n" + "\t".join(values) + "\n"
    workload = parse_workload(text, source="grid.gwf")
    assert workload.format == "gwf"
    job = workload.jobs.iloc[0]
    assert (job.job_id, job.submit_time, job.run_time, job.procs, job.user, job.site, job.requirement) == (
        "7", 100.0, 60.0, 4, "U3", "fs2", "x86"
    )
    with pytest.raises(TraceError) as error:
        parse_workload(text.replace("\t60\t", "\tsixty\t"), source="grid.gwf")
    assert (error.value.line, error.value.field) == (2, "run_time")


def test_csv_with_named_columns_and_errors():
    workload = parse_workload("job_id,submit_time,run_time,procs,user\na,0,10,2,ann\nb,3,5,1,bob\n", source="j.csv")
    assert list(workload.jobs.user) == ["ann", "bob"]
    with pytest.raises(TraceError) as error:
        parse_workload("job_id,submit_time,procs\na,0,2\n", source="j.csv")
    assert error.value.field == "run_time"
    with pytest.raises(TraceError) as error:
        parse_workload("job_id,submit_time,run_time,procs\na,0,10,2\nb,1,x,1\n", source="j.csv")
    assert (error.value.line, error.value.field) == (3, "run_time")
    with pytest.raises(TraceError) as error:
        parse_workload("job_id,submit_time,run_time,procs\na,0,10,0\n", source="j.csv")
    assert error.value.field == "procs"


def test_metacentrum_machines_match_the_paper():
    clusters = read_machines(SAMPLES / "metacentrum-2009.machines")
    # Klusáček & Rudová §3: 14 clusters, 806 CPUs (210 machines).
    assert len(clusters) == 14
    assert sum(c["machines"] for c in clusters) == 210
    cpus = sum(sum(c["cpus_per_machine"]) if isinstance(c["cpus_per_machine"], list)
               else c["machines"] * c["cpus_per_machine"] for c in clusters)
    assert cpus == 806
    assert "opteron" in clusters[1]["properties"] and "p10" in clusters[1]["properties"]


def test_short_machines_layout_and_errors():
    assert parse_machines("0\tzewura\t20\t80\t1\t529426432\n") == [
        {"name": "zewura", "machines": 20, "cpus_per_machine": 80, "speed": 1.0, "properties": []}
    ]
    with pytest.raises(TraceError) as error:
        parse_machines("0 a 2 2 1 10\n1 b x 2 1 10\n", source="m.machines")
    assert (error.value.line, error.value.field) == (2, "machines")
    with pytest.raises(TraceError, match="no cluster"):
        parse_machines("\n", source="m.machines")


def test_failure_trace_rows_per_machine():
    failures = read_failures(SAMPLES / "metacentrum-2009.failures")
    assert len(failures) == 569  # 420 records, 569 machine failures
    assert list(failures.columns) == ["start", "cluster", "duration", "machine"]
    with pytest.raises(TraceError) as error:
        parse_failures("10 c1 5 0\n20 c1 -3 1\n", source="f.failures")
    assert (error.value.line, error.value.field) == (2, "duration")


def test_requirement_strings():
    assert parse_requirement("1:ppn=64:x86_64:cl_zewura#excl") == (64, frozenset({"x86_64", "cl_zewura"}))
    assert parse_requirement("2:ppn=4+1:ppn=8:gpu") == (8, frozenset({"gpu"}))
    suitable, ignored = suitable_clusters(
        ["1:ppn=64:x86_64:cl_zewura#excl", "1:ppn=4", "", "1:ppn=1:p3"],
        ["zewura", "zegox"], [[], ["p3"]], [80, 12],
    )
    # x86_64 is declared by no cluster: ignored (and counted), not a reason to cancel.
    assert suitable == [(0,), (0, 1), None, (1,)]
    assert ignored == 1


def test_what_the_log_recorded_is_kept_beside_the_jobs():
    swf = ("; MaxProcs: 8\n"
           "1 0 30 100 4 -1 2048 4 100 4096 1 7 3 -1 2 5 -1 -1\n"
           "2 5 -1 50 2 -1 1024 2 50 -1 1 8 -1 -1 -1 -1 -1 -1\n")
    jobs = parse_workload(swf, "swf", source="site.swf").jobs
    assert jobs["recorded_wait"].tolist()[0] == 30.0 and np.isnan(jobs["recorded_wait"].iloc[1])
    assert jobs["group"].tolist() == ["3", ""]
    assert jobs["queue"].tolist() == ["2", ""]
    assert jobs["partition"].tolist() == ["5", ""]
    assert jobs["memory_per_cpu_mb"].tolist() == [4.0, 1.0]   # requested 4096 KB; else used 1024 KB


def test_csv_recorded_columns_may_be_empty_but_not_text():
    csv = "job_id,submit_time,run_time,procs,recorded_wait,group\n1,0,10,1,12,physics\n2,1,10,1,,chemistry\n"
    jobs = parse_workload(csv, "csv", source="log.csv").jobs
    assert jobs["recorded_wait"].iloc[0] == 12.0 and np.isnan(jobs["recorded_wait"].iloc[1])
    assert jobs["group"].tolist() == ["physics", "chemistry"]
    with pytest.raises(TraceError) as error:
        parse_workload(csv.replace(",12,", ",soon,"), "csv", source="log.csv")
    assert (error.value.field, error.value.line) == ("recorded_wait", 2)
