"""A resource manager's own log on the batch page: read through the same upload box, what was read said."""

from __future__ import annotations

import base64

from components.pages import batch as batch_page
from components.services.uploads import UploadStore
from components.widgets import run_time
from sched_engine import logs
from sched_engine.batch.model import TRACE_FORMATS
from sched_engine.runner import run_scenario

SACCT = "\n".join([
    "JobID|User|Group|Account|Partition|Submit|Start|End|NCPUS|State|Timelimit",
    "10|alice|staff|phys|batch|2024-03-01T09:00:00|2024-03-01T09:01:40|2024-03-01T09:31:40|4|COMPLETED|01:00:00",
    "10.batch||||||2024-03-01T09:01:40|2024-03-01T09:31:40|4|COMPLETED|",
    "11|bob|staff|chem|gpu|2024-03-01T09:05:00|2024-03-01T09:05:00|2024-03-01T10:05:00|8|TIMEOUT|01:00:00",
    "12|bob|staff|chem|gpu|2024-03-01T09:06:00|Unknown|2024-03-01T09:07:00|0|CANCELLED by 1001|01:00:00",
    "13|carol|staff|phys|batch|2024-03-01T09:10:00|2024-03-01T09:12:00|2024-03-01T09:40:00|2|COMPLETED|30:00",
]) + "\n"


def _data_url(text: str) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(text.encode()).decode()


def _facts(children) -> dict[str, list[str]]:
    """The trace panel's ``Dt``/``Dd`` pairs (a key may repeat)."""
    items = children[0].children
    facts: dict[str, list[str]] = {}
    for term, value in zip(items[::2], items[1::2]):
        facts.setdefault(term.children, []).append(value.children)
    return facts


def test_every_reader_kind_is_a_trace_format_the_model_knows():
    assert logs.KINDS == logs.kinds()
    assert set(logs.KINDS) <= set(TRACE_FORMATS)


def test_an_sacct_upload_reads_and_says_what_was_left_out(tmp_path):
    uploads = UploadStore(tmp_path / "uploads")
    draft, message = batch_page.draft.apply_upload(batch_page.draft.initial_draft(), _data_url(SACCT), "jobs.sacct",
                                                   "trace", uploads)
    assert "jobs.sacct" in message
    workload = batch_page.draft.parse_trace(draft["trace"], uploads)
    assert workload.format == "sacct" and sorted(workload.jobs["job_id"]) == ["10", "11", "13"]
    facts = _facts(batch_page.draft.trace_info(workload, "jobs.sacct"))
    assert facts["File"] == ["jobs.sacct (sacct)"] and facts["Jobs"] == ["3"]
    read = " ".join(facts["Read (sacct)"])
    assert "1 job step record(s)" in read and "never started" in read
    assert facts["Partitions"] == ["batch (2 jobs), gpu (1)"]
    assert facts["Accounts"] == ["phys (2 jobs), chem (1)"]


def test_an_sacct_log_runs_on_the_machine_given_beside_it(tmp_path):
    path = tmp_path / "jobs.sacct"
    path.write_text(SACCT)
    machines = tmp_path / "site.machines"
    machines.write_text("0\tcluster\t2\t8\t1\t1048576\n")
    result = run_scenario({"engine": "batch", "policy": "easy", "model": {
        "trace": {"path": str(path)}, "machines_path": str(machines), "estimates": "trace"}})
    jobs = result.jobs.set_index("job_id")
    # 16 CPUs: 10 (4 CPUs) at 0, 11 (8 CPUs) at 300, 13 (2 CPUs) at 600, each at once.
    assert jobs["start_time"].tolist() == [0.0, 300.0, 600.0]
    assert jobs["status"].tolist() == ["finished"] * 3


SLURM_CONF = """\
ClusterName=tiny
NodeName=DEFAULT RealMemory=64000
NodeName=n[1-2] CPUs=4
NodeName=g1 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1
PartitionName=batch Nodes=n[1-2] Default=YES
PartitionName=gpu Nodes=g1
"""


def test_a_jobs_partition_holds_it_to_its_machines_and_a_partition_without_any_cancels_it(tmp_path):
    log = SACCT + ("14|dave|staff|phys|debug|2024-03-01T09:20:00|2024-03-01T09:20:00|2024-03-01T09:21:00|1|"
                   "COMPLETED|05:00\n")
    path = tmp_path / "jobs.sacct"
    path.write_text(log)
    conf = tmp_path / "slurm.conf"
    conf.write_text(SLURM_CONF)
    result = run_scenario({"engine": "batch", "policy": "easy", "model": {
        "trace": {"path": str(path)}, "machines_path": str(conf), "estimates": "trace"}})
    jobs = result.jobs.set_index("job_id")
    # batch: 2 machines x 4 CPUs; gpu: one of 2 x 4. Job 11 (gpu, 8 CPUs) fits only on g1.
    assert jobs.loc[["10", "11", "13"], "cluster"].tolist() == ["batch", "gpu", "batch"]
    assert jobs.loc["14", "status"] == "cancelled" and jobs.loc["14", "reason"] == "partition debug has no machine"


# sshare -a -P: accounts, their users, raw shares (an account's users share its part).
SSHARE = """\
Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root||||0|0.000000|
 phys||3|0.750000|0|0.000000|
  phys|alice|1|0.750000|0|0.000000|1.000000
  phys|carol|1|0.750000|0|0.000000|1.000000
 chem||1|0.250000|0|0.000000|
  chem|bob|1|0.250000|0|0.000000|1.000000
"""


def test_an_sshare_file_uploaded_as_the_site_organisation_becomes_its_tree(tmp_path):
    from components.pages.site import organisation
    from components.pages.site.ids import EDITOR

    uploads = UploadStore(tmp_path / "uploads")
    payload = {"trace": None, "max_jobs": None, "weighting": "equal", "name": None, "weight": None, "group": None,
               "choice": None, "item_name": None, "contents": _data_url(SSHARE), "filename": "shares.txt"}
    out = organisation.edit(EDITOR.upload, None, None, payload, uploads)
    tree = out["draft"]["tree"]
    groups = {child["name"]: (child["weight"], sorted(leaf["user"] for leaf in child["children"]))
              for child in tree["children"]}
    assert groups == {"phys": (3.0, ["alice", "carol"]), "chem": (1.0, ["bob"])}
    # A JSON tree still reads as before; a file that is neither says so and changes nothing.
    bad = organisation.edit(EDITOR.upload, out["draft"], None, {**payload, "contents": _data_url("not a tree\n"),
                                                                 "filename": "notes.txt"}, uploads)
    assert "draft" not in bad and "notes.txt" in str(bad["item_msg"].children)


def test_a_slurm_conf_uploaded_as_the_site_hardware_fills_its_table(tmp_path):
    from components.pages.site import hardware
    from components.pages.site.ids import HW_UPLOAD

    uploads = UploadStore(tmp_path / "uploads")
    out = hardware.edit(HW_UPLOAD, None, [], uploads, None, upload=(_data_url(SLURM_CONF), "slurm.conf"))
    rows = {row["name"]: row for row in out["rows"]}
    assert set(rows) == {"batch", "gpu"} and out["draft"]["origin"] == "the table"
    assert (rows["batch"]["machines"], rows["batch"]["cpus_per_machine"]) == (2, "4")
    assert (rows["gpu"]["machines"], rows["gpu"]["cpus_per_machine"]) == (1, "8")
    assert rows["gpu"]["memory_per_machine_mb"] == 64000.0
    model = hardware.hardware_model(out["draft"]["rows"], 2048)
    assert [cluster["name"] for cluster in model["clusters"]] == ["batch", "gpu"]
    # A file that is no hardware description: said, the table unchanged.
    bad = hardware.edit(HW_UPLOAD, out["draft"], out["rows"], uploads, None, upload=(_data_url("hello\n"), "x.txt"))
    assert "draft" not in bad and "x.txt" in str(bad["message"].children)


def test_the_batch_pages_time_zone_rereads_a_log_in_the_sites_zone(tmp_path):
    from components.pages.batch import ids

    uploads = UploadStore(tmp_path / "uploads")
    draft, _ = batch_page.draft.apply_upload(batch_page.draft.initial_draft(), _data_url(SACCT), "jobs.sacct",
                                             "trace", uploads)
    utc = batch_page.draft.parse_trace(draft["trace"], uploads).header["UnixStartTime"]
    payload = {"format": "auto", "skip": False, "timezone": "Europe/Prague"}
    out = batch_page.draft.edit_draft(ids.TIMEZONE, draft, payload, uploads)
    trace = out["draft"]["trace"]
    assert trace["timezone"] == "Europe/Prague"
    # 09:00 in Prague in March (UTC+1) is 08:00 UTC: the log starts an hour earlier.
    assert batch_page.draft.parse_trace(trace, uploads).header["UnixStartTime"] == utc - 3600
    bad = batch_page.draft.edit_draft(ids.TIMEZONE, out["draft"], {**payload, "timezone": "Mars/Olympus"}, uploads)
    assert "draft" not in bad and "Mars/Olympus" in str(bad["trace_msg"])


def test_a_scenario_names_its_logs_time_zone_and_a_bad_one_is_refused(tmp_path):
    import pytest

    from sched_engine import ScenarioError

    path = tmp_path / "jobs.sacct"
    path.write_text(SACCT)
    scenario = {"engine": "batch", "policy": "fcfs", "model": {"trace": {"path": str(path), "timezone": "Europe/Prague"},
                                                               "clusters": [{"name": "c", "machines": 2,
                                                                             "cpus_per_machine": 8}]}}
    assert len(run_scenario(scenario).jobs) == 3
    scenario["model"]["trace"]["timezone"] = "Nowhere/Land"
    with pytest.raises(ScenarioError, match="trace.timezone"):
        run_scenario(scenario)


def test_a_bad_trace_on_the_site_page_is_named_once_and_the_previous_one_stays(tmp_path):
    from components.pages.site import callbacks

    uploads = UploadStore(tmp_path / "uploads")
    bad = 'job_id,submit_time,run_time,procs\n1,0,"10\n'
    options, value, message = callbacks.upload(uploads, _data_url(bad), "garbage.csv")
    said = message.children
    assert options is value is callbacks.no_update
    assert said.count("garbage.csv") == 1 and said.endswith("The previous trace stays.")
    assert "C error" not in said and "not a readable CSV table" in said


def test_a_large_trace_says_how_long_a_whole_run_takes(tmp_path, monkeypatch):
    """From the engine's measured speed: RICC's 447,794 jobs, about 13 s compiled and 45 s on the Python kernel."""
    note = batch_page.draft.run_time_note(447_794)
    assert note.startswith("about 13 s per policy and scenario for EASY and Conservative, up to 45 s for the others")
    uploads = UploadStore(tmp_path / "uploads")
    draft, _ = batch_page.draft.apply_upload(batch_page.draft.initial_draft(), _data_url(SACCT), "jobs.sacct",
                                             "trace", uploads)
    workload = batch_page.draft.parse_trace(draft["trace"], uploads)
    assert "Time to run it whole" not in _facts(batch_page.draft.trace_info(workload, "jobs.sacct"))
    monkeypatch.setattr(run_time, "LARGE_TRACE", 3)
    facts = _facts(batch_page.draft.trace_info(workload, "jobs.sacct"))
    assert facts["Time to run it whole"] == [batch_page.draft.run_time_note(3)]


def test_the_site_upload_says_how_long_a_whole_run_takes(tmp_path, monkeypatch):
    from components.pages.site import callbacks as site_callbacks

    uploads = UploadStore(tmp_path / "uploads")
    monkeypatch.setattr(run_time, "LARGE_TRACE", 3)
    monkeypatch.setitem(run_time.JOBS_PER_SECOND, "site", 1)
    _, _, message = site_callbacks.upload(uploads, _data_url(SACCT), "jobs.sacct")
    assert "a whole run takes about 3 s per policy" in str(message.children)
