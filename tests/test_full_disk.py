"""A full, over-quota or read-only data directory: the upload is refused with a message, nothing half-written stays."""

from __future__ import annotations

import base64
import errno
import os

import pytest

from components.services import storage
from components.services.saved_items import HIERARCHY, save_item
from components.services.uploads import UploadError, UploadStore
from components.widgets.tree_editor import Ids, item_action

TRACE = b"1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n"


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "data" / "uploads")


def disk_fails(monkeypatch, code):
    """Every file's bytes fail to reach the disk (at the fsync, once the temporary file exists) with ``code``."""
    def refuse(fd):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(storage.os, "fsync", refuse)


def data_url(data: bytes) -> str:
    return "data:text/plain;base64," + base64.b64encode(data).decode()


def stored(uploads) -> list[str]:
    return sorted(path.name for path in uploads.directory.iterdir())


@pytest.mark.parametrize("code, trouble", [(errno.ENOSPC, "is full"), (errno.EROFS, "is read-only"),
                                           (errno.EDQUOT, "is over its disk quota")])
def test_an_upload_on_a_troubled_disk_is_refused_by_name(uploads, monkeypatch, code, trouble):
    earlier = uploads.save_data_url(data_url(TRACE), "trace", "old.swf")
    before = stored(uploads)
    disk_fails(monkeypatch, code)
    with pytest.raises(UploadError) as caught:
        uploads.save_data_url(data_url(TRACE.replace(b"10", b"20")), "trace", "mine.swf")
    assert str(caught.value) == (f"the upload store (data/uploads) {trouble}: mine.swf was not saved; "
                                 "earlier uploads and results are kept")
    assert stored(uploads) == before and earlier.read_bytes() == TRACE


def test_a_label_that_cannot_be_written_takes_its_new_file_with_it(uploads, monkeypatch):
    real = storage.atomic_write

    def data_only(target, data):
        if str(target).endswith(".meta.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, data)
    monkeypatch.setattr("components.services.uploads.atomic_write", data_only)
    with pytest.raises(UploadError, match="mine.swf was not saved"):
        uploads.save_data_url(data_url(TRACE), "trace", "mine.swf")
    assert stored(uploads) == []


def test_other_os_errors_are_not_taken_for_a_full_disk(uploads, monkeypatch):
    disk_fails(monkeypatch, errno.EIO)
    with pytest.raises(OSError, match="Input/output error") as caught:
        uploads.save_data_url(data_url(TRACE), "trace", "mine.swf")
    assert not isinstance(caught.value, UploadError) and stored(uploads) == []


def test_saving_an_item_on_a_full_disk_answers_the_page(uploads, monkeypatch):
    kept = save_item(uploads, HIERARCHY, {"name": "root"}, "first")
    disk_fails(monkeypatch, errno.ENOSPC)
    with pytest.raises(UploadError, match=r"\(data/uploads\) is full: org was not saved"):
        save_item(uploads, HIERARCHY, {"name": "other"}, "org")
    out = item_action(Ids("fullpage").save, Ids("fullpage"), {"name": "other"}, {"name": "org"}, uploads,
                      noun="hierarchy", read=lambda document, source: document)
    message = out["message"].children
    assert "the upload store (data/uploads) is full: org was not saved" in message
    assert "unchanged" in message
    assert stored(uploads) == [kept, kept + ".meta.json"]


def tiny_run(name: str) -> dict:
    return {"engine": "fairshare", "policy": "drf", "name": name,
            "model": {"resources": [{"name": "cpu", "capacity": 2}],
                      "tree": {"name": "root", "children": [{"name": "a", "demand": {"cpu": 1}, "tasks": 1,
                                                             "duration": 1}]}}}


def test_a_result_store_on_a_full_disk_names_the_run_and_keeps_the_others(tmp_path, monkeypatch):
    from components.services.runs import ResultCache, ResultStoreUnreachable

    cache = ResultCache(tmp_path / "data" / "results")
    earlier, _ = cache.run(tiny_run("first"))
    files = sorted(p.name for p in (tmp_path / "data").rglob("*"))
    disk_fails(monkeypatch, errno.ENOSPC)
    fresh = ResultCache(tmp_path / "data" / "results")
    with pytest.raises(ResultStoreUnreachable) as caught:
        fresh.run({**tiny_run("second"), "seed": 7})
    assert str(caught.value) == ("the result store (results/store) is full: the result of 'second' was not saved; "
                                 "earlier uploads and results are kept")
    assert sorted(p.name for p in (tmp_path / "data").rglob("*")) == files
    assert fresh.get(earlier.scenario_hash) is not None


def test_a_result_stored_but_not_indexed_is_removed(tmp_path, monkeypatch):
    from components.services import result_store
    from components.services.runs import ResultCache, ResultStoreUnreachable

    cache = ResultCache(tmp_path / "data" / "results")

    def index_fails(self, entry):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(result_store.FileIndex, "add", index_fails)
    with pytest.raises(ResultStoreUnreachable, match=r"is read-only: the result of 'first' was not saved"):
        cache.run(tiny_run("first"))
    left = [path.name for path in (tmp_path / "data" / "results" / "store").iterdir()]
    assert left in ([], [".lock"])   # the pruning lock, never a result or a temporary


def test_a_full_result_store_is_said_as_not_saved_and_what_to_do(tmp_path, monkeypatch):
    import errno
    from types import SimpleNamespace

    from components.services import jobs
    from components.services.runs import ResultStoreFull, ResultStoreUnreachable

    outputs = [{"id": "batch-run-message", "property": "children"}, {"id": "batch-runs-store", "property": "data"}]
    monkeypatch.setattr(jobs, "callback_context", SimpleNamespace(outputs_list=outputs))
    full = ResultStoreFull(tmp_path / "results" / "store", errno.ENOSPC, "'EASY'")
    message, store = jobs.report_lost_job(full)
    assert message.children.startswith("Not saved: the result store (results/store) is full")
    assert "Free space in the data directory" in message.children and store is jobs.no_update
    # Redis down still reads as before.
    message, _ = jobs.report_lost_job(ResultStoreUnreachable("127.0.0.1:6379"))
    assert message.children.startswith("Cannot run or show results:") and "Try again once it is back" in message.children


def test_a_scenario_uploaded_to_a_full_workspace_is_refused_by_name(tmp_path, monkeypatch):
    import json
    from pathlib import Path

    from components.pages.workspace.lists import save_uploaded_scenario
    from components.services.workspace import ScenarioStore
    from sched_engine import ScenarioError

    store = ScenarioStore(tmp_path / "data" / "scenarios")
    root = Path(__file__).resolve().parents[1]
    scenario = json.loads((root / "sample_traces" / "fairshare-fig4.scenario.json").read_text())
    store.save(scenario, "kept")
    before = sorted(p.name for p in store.directory.iterdir())
    disk_fails(monkeypatch, errno.ENOSPC)
    contents = "data:application/json;base64," + base64.b64encode(json.dumps({**scenario, "name": "new"}).encode()).decode()
    with pytest.raises(ScenarioError) as caught:
        save_uploaded_scenario(contents, "new.json", store)
    assert "the scenario store (data/scenarios) is full: 'new' was not saved" in str(caught.value)
    assert sorted(p.name for p in store.directory.iterdir()) == before


def test_a_sweep_table_on_a_full_disk_is_refused_by_name(tmp_path, monkeypatch):
    import pandas as pd

    from components.pages.sweeps.store import SweepStore
    from sched_engine import ScenarioError

    store = SweepStore(tmp_path / "data" / "sweeps")
    store.directory.mkdir(parents=True)
    run = type("Run", (), {"table": pd.DataFrame({"x": [1.0, 2.0]}), "spec": {"kind": "k"}, "executor": "serial",
                           "workers": 1, "wall_seconds": 0.1})()
    disk_fails(monkeypatch, errno.ENOSPC)
    with pytest.raises(ScenarioError) as caught:
        store.put("a" * 64, run)
    assert str(caught.value).startswith("the sweep store (data/sweeps) is full: the table of this sweep (2 points) "
                                        "was not saved; earlier sweeps and results are kept")
    assert list(store.directory.iterdir()) == []


def test_an_access_record_on_a_read_only_disk_refuses_the_item_by_name(tmp_path, monkeypatch):
    from components.services.access import RUN, UPLOAD, AccessRecordsFull, open_access
    from components.services.scoped import UserUploads

    access = open_access(tmp_path / "data")
    disk_fails(monkeypatch, errno.EROFS)
    with pytest.raises(AccessRecordsFull, match=r"^the access records \(data/access\) is read-only: who owns this "
                                                r"run could not be written, so the run was not saved"):
        access.own(RUN, "b" * 64, "ada")
    uploads = UploadStore(tmp_path / "data" / "uploads")
    view = UserUploads(uploads, access, user=lambda: "ada")
    with pytest.raises(UploadError, match=r"^mine.swf was not saved: the access records \(data/access\) is "
                                          r"read-only: who owns this upload"):
        view.save_data_url(data_url(TRACE), "trace", "mine.swf")
    assert stored(uploads) == [] and access.grant(UPLOAD, "c" * 64).owners == ()


def test_a_prepared_download_on_a_full_disk_answers_why_instead_of_an_address(tmp_path, monkeypatch):
    from pathlib import Path

    from components.services.prepared import NOT_SAVED, PreparedFiles

    prepared = PreparedFiles(tmp_path / "data" / "prepared")
    kept = prepared.put("earlier", "old.csv")
    real = Path.write_bytes

    def full(path, data):
        if path.name.endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    answer = prepared.put("x" * 100, "batch-report.html")
    assert answer == (f"{NOT_SAVED}The prepared-download store (data/prepared) is full: batch-report.html was not saved. "
                      "Free space in the data directory (or make it writable) and export it again.")
    assert [p.name for p in prepared.directory.iterdir()] == [kept.split("/")[2]]
