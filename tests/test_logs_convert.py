"""``python -m sched_engine convert``: a site's log as SWF read back as the same jobs, anonymised stably."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.__main__ import main
from sched_engine.batch.traces import Workload, parse_workload
from sched_engine.logs import pbs
from sched_engine.logs.convert_command import SALT_FILE
from sched_engine.logs.swf_writer import pseudonym, read_legend, write_swf

T0 = 1_700_000_000


def _record(job, user, group, queue, submit, wait, run, cpus, limit="01:00:00", mem="4gb", exit_status=0):
    return (f"11/15/2023 10:00:00;E;{job}.srv;user={user} group={group} queue={queue} ctime={T0 + submit} "
            f"start={T0 + submit + wait} end={T0 + submit + wait + run} exec_host=n1/0*{cpus} "
            f"Resource_List.walltime={limit} Resource_List.mem={mem} Exit_status={exit_status}")


LOG = "\n".join([
    _record(1, "alice", "staff", "batch", 0, 10, 100, 4),
    _record(2, "bob", "phys", "long", 30, 0, 3600, 2, exit_status=271),          # killed at its limit: 0
    _record(3, "alice", "staff", "long", 20, 5, 50, 1, mem="1gb", exit_status=1),  # failed: 0
    "11/15/2023 10:00:00;D;4.srv;requestor=bob",
    _record(4, "bob", "phys", "batch", 40, 1, 9, 8, exit_status=271),             # deleted while running: 5
    "11/15/2023 10:00:00;Q;5.srv;queue=batch",
]) + "\n"


def _convert(tmp_path, text, *options, name="20231115"):
    source = tmp_path / name
    source.write_text(text)
    return main(["convert", str(source), "--out", str(tmp_path / "out.swf"), *options])


def test_a_pbs_log_becomes_swf_with_header_legend_and_statuses(tmp_path, capsys):
    assert _convert(tmp_path, LOG, "--timezone", "Europe/Prague") == 0
    text = (tmp_path / "out.swf").read_text()
    header = [line for line in text.splitlines() if line.startswith(";")]
    assert "; UnixStartTime: 1700000000" in header and "; TimeZoneString: Europe/Prague" in header
    assert "; StartTime: Tue Nov 14 23:13:20 CET 2023" in header
    # Legends in order of first appearance (jobs by submission: 1 alice, 3 alice, 2 bob, 4 bob).
    assert read_legend(text) == {"User": {1: "alice", 2: "bob"}, "Group": {1: "staff", 2: "phys"},
                                 "Queue": {1: "batch", 2: "long"}, "Partition": {}}
    rows = [list(map(int, line.split())) for line in text.splitlines() if not line.startswith(";")]
    assert rows == [
        # job submit wait run alloc cpu used req-procs req-time req-mem(KB/CPU) status user group exe queue part prec think
        [1, 0, 10, 100, 4, -1, -1, 4, 3600, 1048576, 1, 1, 1, -1, 1, -1, -1, -1],
        [2, 20, 5, 50, 1, -1, -1, 1, 3600, 1048576, 0, 1, 1, -1, 2, -1, -1, -1],
        [3, 30, 0, 3600, 2, -1, -1, 2, 3600, 2097152, 0, 2, 2, -1, 2, -1, -1, -1],
        [4, 40, 1, 9, 8, -1, -1, 8, 3600, 524288, 5, 2, 2, -1, 1, -1, -1, -1],
    ]
    out = capsys.readouterr().out
    assert "pbs, 4 jobs from 4 records: 0 never started (not runs)" in out and "wrote" in out


def test_max_procs_and_nodes_are_written_when_the_hardware_is_known():
    workload = pbs.parse(LOG, source="log")
    stream = io.StringIO()
    assert write_swf(workload, stream, max_procs=64, max_nodes=4) == 4
    assert "; MaxNodes: 4\n; MaxProcs: 64\n" in stream.getvalue()


def test_only_queued_jobs_exit_2_with_one_line(tmp_path, capsys):
    assert _convert(tmp_path, "11/15/2023 10:00:00;Q;5.srv;queue=batch\n11/15/2023 10:00:00;S;6.srv;start=1\n") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing to convert" in err[0] and "queued or running" in err[0]
    assert not (tmp_path / "out.swf").exists()


def test_a_bad_record_exits_2_naming_file_line_and_field(tmp_path, capsys):
    bad = LOG.replace(f"start={T0 + 30}", "start=later")
    assert _convert(tmp_path, bad) == 2
    assert capsys.readouterr().err.strip() == "error: 20231115, line 2, start: 'later' is not a time in seconds since 1970"
    assert _convert(tmp_path, bad, "--skip-malformed") == 0


@pytest.mark.parametrize("options, message", [
    (("--timezone", "Mars/Olympus"), "--timezone: unknown time zone"),
    (("--format", "lotus"), "unknown log kind 'lotus'"),
])
def test_bad_options_exit_2(tmp_path, capsys, options, message):
    assert _convert(tmp_path, LOG, *options) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_output_suffix_exits_2(tmp_path, capsys):
    (tmp_path / "log").write_text(LOG)
    assert main(["convert", str(tmp_path / "log"), "--out", str(tmp_path / "out.txt")]) == 2
    assert "end it in .swf, .machines, .json" in capsys.readouterr().err


def test_anonymised_names_are_stable_under_the_data_directorys_salt(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_DATA", str(tmp_path / "data"))
    assert _convert(tmp_path, LOG, "--anonymise") == 0
    first = (tmp_path / "out.swf").read_text()
    salt = (tmp_path / "data" / SALT_FILE).read_text().strip().encode()
    assert _convert(tmp_path, LOG, "--anonymise") == 0
    assert (tmp_path / "out.swf").read_text() == first
    users = read_legend(first)["User"]
    assert users == {1: pseudonym("alice", "user", salt), 2: pseudonym("bob", "user", salt)}
    assert "alice" not in first and "staff" not in first and "batch" in first   # queues are kept
    assert pseudonym("alice", "user", b"another salt") != users[1]


@settings(max_examples=25, deadline=None)
@given(names=st.lists(st.text("abcxyz_-.", min_size=1, max_size=8), min_size=1, max_size=6),
       salt=st.binary(min_size=8, max_size=32))
def test_anonymising_twice_with_one_salt_gives_the_same_names(names, salt):
    jobs = pd.DataFrame({"job_id": [str(i) for i in range(len(names))], "submit_time": np.arange(len(names), dtype=float),
                         "run_time": 1.0, "procs": 1, "user": names, "group": names[::-1]})
    texts = []
    for _ in range(2):
        stream = io.StringIO()
        write_swf(Workload(jobs=jobs, format="csv"), stream, anonymise=True, salt=salt)
        texts.append(stream.getvalue())
    assert texts[0] == texts[1]
    assert len(read_legend(texts[0])["User"]) == len(set(names))


_jobs = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**5), st.integers(1, 512),
                           st.sampled_from(["alice", "bob", "carol"]), st.sampled_from(["q1", "q2"]),
                           st.integers(1, 48), st.integers(1, 64), st.sampled_from([0, 1, 271])),
                 min_size=1, max_size=25)


@settings(max_examples=40, deadline=None)
@given(jobs=_jobs)
def test_a_log_converted_to_swf_and_read_back_gives_the_same_jobs(jobs):
    text = "\n".join(_record(i, user, "g" + user, queue, submit, wait, run, cpus, limit=f"{hours}:00:00",
                             mem=f"{gb}gb", exit_status=code)
                     for i, (submit, wait, run, cpus, user, queue, hours, gb, code) in enumerate(jobs, start=1))
    log = pbs.parse(text, source="log")
    stream = io.StringIO()
    write_swf(log, stream, source="log")
    back = parse_workload(stream.getvalue(), source="out.swf")
    legend = read_legend(stream.getvalue())
    assert back.header["UnixStartTime"] == log.header["UnixStartTime"]
    a, b = log.jobs, back.jobs
    assert len(a) == len(b)
    for column in ("submit_time", "run_time", "procs", "requested_time", "recorded_wait"):
        assert a[column].to_numpy(float).tolist() == b[column].to_numpy(float).tolist(), column
    assert np.allclose(a.memory_per_cpu_mb.to_numpy(float), b.memory_per_cpu_mb.to_numpy(float), atol=1 / 1024)
    # Fields 12, 13 and 15 number the legend's names; read back, the jobs have the names again.
    assert sorted(legend["User"].values()) == sorted(set(a.user))
    assert b.user.tolist() == a.user.tolist()
    assert b.queue.tolist() == a.queue.tolist()
    assert b.group.tolist() == a.group.tolist()


@pytest.mark.parametrize("kind", ["pbs", "sge", "lsf"])
def test_each_readers_hand_made_log_reads_back_from_swf_as_the_same_jobs(kind):
    from sched_engine.logs import reader
    from tests import test_logs_lsf, test_logs_pbs, test_logs_sge

    text = {"pbs": test_logs_pbs.LOG, "sge": test_logs_sge.LOG, "lsf": test_logs_lsf.LOG}[kind]
    log = reader(kind).parse(text, source=kind)
    stream = io.StringIO()
    write_swf(log, stream, source=kind)
    back = parse_workload(stream.getvalue(), source="out.swf")
    assert back.header["UnixStartTime"] == log.header["UnixStartTime"]
    for column in ("submit_time", "run_time", "procs", "recorded_wait"):
        assert log.jobs[column].to_numpy(float).tolist() == back.jobs[column].to_numpy(float).tolist(), column
    for column in ("requested_time", "memory_per_cpu_mb"):   # whole seconds and KB
        assert np.allclose(log.jobs[column].to_numpy(float), back.jobs[column].to_numpy(float), atol=1 / 1024,
                           equal_nan=True), column
    assert back.jobs.user.fillna("").tolist() == log.jobs.user.tolist()


def test_hardware_from_slurm_conf_is_written_as_machines(tmp_path, capsys):
    from sched_engine.logs import slurm_conf

    text = "NodeName=DEFAULT CPUs=8 RealMemory=32000\nNodeName=n[1-2]\nPartitionName=batch Nodes=n[1-2]\n"
    (tmp_path / "slurm.conf").write_text(text)
    assert main(["convert", str(tmp_path / "slurm.conf"), "--out", str(tmp_path / "site.machines")]) == 0, \
        capsys.readouterr().err
    assert (tmp_path / "site.machines").read_text() == slurm_conf.read_slurm_conf(text, source="slurm.conf")


def test_organisation_from_sacctmgr_is_written_as_json(tmp_path, capsys):
    import json

    from sched_engine.logs import accounts

    text = "Cluster|Account|Par Name|User|Share\nc|root||| 1\nc|physics|root||40\nc|physics||alice|1\n"
    (tmp_path / "assoc.txt").write_text(text)
    assert main(["convert", str(tmp_path / "assoc.txt"), "--out", str(tmp_path / "org.json")]) == 0, \
        capsys.readouterr().err
    assert json.loads((tmp_path / "org.json").read_text()) == accounts.read_accounts(text, source="assoc.txt")
