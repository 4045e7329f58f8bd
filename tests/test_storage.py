"""On-disk state: atomic writes, content-addressed uploads, the run index of the result cache."""

from __future__ import annotations

import os

import pytest

from components.services.runs import ResultCache
from components.services.storage import atomic_write, remove_stale_temporaries
from components.services.uploads import UploadError, UploadStore
from sched_engine import ScenarioError

SCENARIO = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": "tests/data/batch/failure.swf"}},
            "name": "tiny"}


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = atomic_write(tmp_path / "a.json", b"old")

    def crash(*_):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):   # noqa: PT011 -- the test's own crash, whatever its message
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_uploads_are_named_by_content_and_stored_once(tmp_path):
    store = UploadStore(tmp_path, max_bytes=10)
    first = store.save(b"hello", "trace")
    assert first.name.startswith("2cf24dba5fb0a30e") and first.suffix == ".trace"
    assert store.save(b"hello", "trace") == first
    assert store.path_of(first.name) == first
    with pytest.raises(UploadError, match="upload limit"):
        store.save(b"x" * 11, "trace")
    with pytest.raises(UploadError, match="base64"):
        store.save_data_url("data:text/plain;base64,@@@", "trace")


def test_finished_runs_are_listed_newest_first_and_survive_a_new_cache_object(tmp_path):
    cache = ResultCache(tmp_path)
    first, _ = cache.run(SCENARIO)
    second, _ = cache.run({**SCENARIO, "policy": "fcfs"})
    reopened = ResultCache(tmp_path)                       # as after a server restart
    listed = reopened.listing()
    assert {e["hash"] for e in listed} == {first.scenario_hash, second.scenario_hash}
    assert listed[0]["finished"] >= listed[1]["finished"]
    assert {e["policy"] for e in listed} == {"easy", "fcfs"} and listed[0]["name"] == "tiny"
    assert reopened.get(first.scenario_hash).jobs.equals(first.jobs)


def test_a_damaged_index_entry_or_an_evicted_result_is_not_listed(tmp_path):
    cache = ResultCache(tmp_path)
    result, _ = cache.run(SCENARIO)
    (tmp_path / "index" / "junk.json").write_text("{not json")
    assert [e["hash"] for e in cache.listing()] == [result.scenario_hash]
    (tmp_path / "store" / f"{result.scenario_hash}.parquet.zip").unlink()
    assert cache.listing() == []


def test_saved_scenarios_are_validated_named_and_listed(tmp_path):
    from components.services.workspace import ScenarioStore
    store = ScenarioStore(tmp_path)
    entry = store.save(SCENARIO, "  first  ")
    assert entry["name"] == "first" and store.get(entry["hash"])["scenario"]["name"] == "first"
    assert [e["name"] for e in ScenarioStore(tmp_path).listing()] == ["first"]
    renamed = store.save(SCENARIO, "second")                      # same content, same file, new name
    assert renamed["hash"] == entry["hash"] and [e["name"] for e in store.listing()] == ["second"]
    with pytest.raises(ScenarioError, match="name"):
        store.save(SCENARIO, " ")
    with pytest.raises(ScenarioError) as caught:
        store.save({**SCENARIO, "policy": "nope"}, "x", source="mine.json")
    assert caught.value.source == "mine.json"
    assert store.get("../../etc/passwd") is None and store.get("0" * 64) is None


def test_a_scenario_upload_error_names_file_and_line():
    from components.services.workspace import parse_scenario_upload
    with pytest.raises(ScenarioError) as caught:
        parse_scenario_upload(b'{"engine": "batch",\n "policy": }', "mine.json")
    assert (caught.value.source, caught.value.line) == ("mine.json", 2)
    with pytest.raises(ScenarioError, match="UTF-8"):
        parse_scenario_upload(b"\xff\xfe", "mine.json")


def test_what_if_changes_one_thing_and_names_it():
    from components.pages.scenario.content import what_if
    changed = what_if({**SCENARIO, "seed": 3, "policy_params": {}}, "cons", 3)
    assert (changed["policy"], changed["seed"], changed["model"]) == ("cons", 3, SCENARIO["model"])
    assert changed["name"] == "tiny · what if cons, seed 3"
    with pytest.raises(ScenarioError, match="seed"):
        what_if(SCENARIO, "cons", "x")


def test_upload_listing_keeps_the_original_name(tmp_path):
    store = UploadStore(tmp_path)
    store.save(b"1 0 -1 5 1\n", "trace", "site-2024.swf")
    [entry] = store.listing()
    assert (entry["label"], entry["kind"], entry["size"]) == ("site-2024.swf", "trace", 11)


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_a_write_interrupted_at_any_step_leaves_the_old_version(tmp_path, monkeypatch, step):
    import components.services.storage as storage
    target = atomic_write(tmp_path / "state.json", b'{"version": 1}')

    def crash(*_, **__):
        raise OSError(f"crash during {step}")

    if step == "write":
        real_fdopen = os.fdopen

        class Torn:
            def __init__(self, handle, mode):
                self.stream = real_fdopen(handle, mode)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.stream.close()

            def write(self, data):
                self.stream.write(data[: len(data) // 2])   # half written, then the crash
                raise OSError("crash during write")

        monkeypatch.setattr(storage.os, "fdopen", Torn)
    else:
        monkeypatch.setattr(storage.os, step, crash)
    with pytest.raises(OSError, match=step):
        atomic_write(target, b'{"version": 2, "padding": "' + b"x" * 1000 + b'"}')
    assert target.read_bytes() == b'{"version": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_temporaries_left_by_a_crash_are_removed_at_start_but_not_fresh_ones(tmp_path):
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    stale, fresh, other = uploads / ".incoming-abc", uploads / ".incoming-def", uploads / "notes.txt"
    for path in (stale, fresh, other):
        path.write_bytes(b"partial")
    old = os.path.getmtime(stale) - 7200
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    UploadStore(uploads)
    assert not stale.exists() and fresh.exists() and other.exists()
    assert remove_stale_temporaries(uploads, older_than_s=-1) == 1 and not fresh.exists()
