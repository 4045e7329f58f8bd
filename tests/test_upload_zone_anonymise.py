"""An upload read in the page's time zone, anonymised on request, and a slurm.conf's partitions on the Site page."""

from __future__ import annotations

import pandas as pd
import pytest
from dash import no_update

from components.pages import batch as batch_page
from components.pages.batch.sources import parse_trace, store_trace, trace_choice_ref
from components.pages.site import callbacks as site_callbacks
from components.pages.site import hardware
from components.pages.site import run as site_run
from components.services.uploads import UploadStore
from sched_engine.batch.traces import read_workload
from sched_engine.logs.convert_command import site_salt
from sched_engine.logs.swf_writer import pseudonym, read_legend
from tests.test_logs_on_the_pages import SACCT, SLURM_CONF, _data_url


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "data" / "uploads")


def test_an_anonymised_upload_keeps_no_name_and_hashes_as_convert_does(uploads):
    path, label = store_trace(uploads, _data_url(SACCT), "jobs.sacct", anonymise=True)
    text = path.read_text()
    assert label == "jobs.sacct (anonymised)" and path.suffix == ".trace"
    assert not any(name in text for name in ("alice", "bob", "carol", "staff", "phys"))
    salt = site_salt(uploads.directory.parent)   # the data directory's salt, as the convert command's
    assert sorted(read_legend(text)["User"].values()) == sorted(pseudonym(name, "user", salt)
                                                                for name in ("alice", "bob", "carol"))
    assert len(read_workload(path).jobs) == 3   # 10, 11 and 13 ran; 12 never started


def test_the_site_page_reads_an_upload_in_its_zone_and_every_reading_after_it_too(uploads):
    utc = site_callbacks.upload(uploads, _data_url(SACCT), "jobs.sacct", "UTC", [])
    assert trace_choice_ref(utc[1], uploads) == {"source": "upload", "kind": "trace", "name": utc[1][7:],
                                                 "label": "jobs.sacct"}
    header = parse_trace(trace_choice_ref(utc[1], uploads), uploads).header
    prague = site_callbacks.upload(uploads, _data_url(SACCT), "jobs.sacct", "Europe/Prague", [])
    assert prague[1] == utc[1] and uploads.path_of(prague[1][7:]).read_text() == SACCT   # the log as it came
    ref = trace_choice_ref(prague[1], uploads)
    assert ref["timezone"] == "Europe/Prague"
    # 09:00 in Prague (UTC+1 in March) is 08:00 UTC: the log starts an hour earlier; the runs read it so too.
    assert header["UnixStartTime"] - parse_trace(ref, uploads).header["UnixStartTime"] == 3600
    model = site_run.site_model(uploads, prague[1], None, "none", [], None, {"rows": [
        {"name": "c", "machines": 2, "cpus_per_machine": "8", "memory_per_machine_mb": None}]}, 2048)
    assert model["trace"]["timezone"] == "Europe/Prague"
    refused = site_callbacks.upload(uploads, _data_url(SACCT), "jobs.sacct", "Mars/Olympus", [])
    assert refused[1] is no_update and "Mars/Olympus" in str(refused[2])


def test_the_batch_page_reads_an_upload_in_its_zone_and_anonymises_on_request(uploads):
    start = batch_page.draft.initial_draft()
    zoned, _ = batch_page.draft.apply_upload(start, _data_url(SACCT), "jobs.sacct", "trace", uploads,
                                             timezone="Europe/Prague")
    assert zoned["trace"]["timezone"] == "Europe/Prague" and zoned["trace"]["label"] == "jobs.sacct"
    hidden, message = batch_page.draft.apply_upload(start, _data_url(SACCT), "jobs.sacct", "trace", uploads,
                                                    anonymise=True)
    assert hidden["trace"]["label"] == "jobs.sacct (anonymised)" and "3 jobs" in message
    assert "alice" not in uploads.path_of(hidden["trace"]["name"]).read_text()


def test_partitions_from_a_slurm_conf_show_in_the_site_hardware_table(uploads):
    out = hardware.edit(hardware.HW_UPLOAD, None, [], uploads, None, upload=(_data_url(SLURM_CONF), "slurm.conf"))
    rows = out["rows"]
    assert [(row["name"], row["partitions"], row["machines"]) for row in rows] == [("batch", "batch", 2),
                                                                                   ("gpu", "gpu", 1)]
    model = hardware.hardware_model(rows, 2048)
    assert [c["properties"] for c in model["clusters"]] == [["partition=batch"], ["partition=gpu"]]
    jobs = pd.DataFrame({"procs": [1], "memory_per_cpu_mb": [0.0]})
    said = " ".join(str(line) for line in hardware.statement(model, "the table", jobs, rows))
    assert "A job runs only on the clusters of its partition" in said
    header = hardware.statement(model, "the table", jobs, [{**row, "partitions": None} for row in rows])
    assert "its partition" not in " ".join(map(str, header))


def test_a_malformed_log_to_anonymise_is_not_kept_and_the_hint_says_to_upload_it_again(uploads):
    broken = SACCT.replace("|4|COMPLETED|01:00:00", "|four|COMPLETED|01:00:00", 1)
    payload = {"trace_contents": _data_url(broken), "trace_name": "jobs.sacct", "skip": False, "anonymise": True,
               "timezone": "UTC", "format": "auto", "machines_contents": None, "machines_name": None,
               "failure_contents": None, "failure_name": None}
    out = batch_page.draft.edit_draft(batch_page.ids.TRACE_UPLOAD, batch_page.draft.initial_draft(), payload,
                                      uploads)
    assert "Tick 'skip malformed lines' and upload it again" in str(out["trace_msg"])
    assert uploads.listing() == []   # nothing of the file stored
