"""The result store on disk: Parquet bundles that round-trip exactly and load fast, entries of the
earlier JSON-in-pickle store still read, nothing ever unpickled, the capacity kept with several
writing processes, partial writes never read. (The Redis side: tests/test_runs_redis.py.)"""

from __future__ import annotations

import hashlib
import io
import logging
import multiprocessing
import os
import pickle
import struct
import time
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from golden.regenerate import golden_cases

from components.services.result_store import BUNDLE_SUFFIX, LEGACY_COUNT_FILE, pickled_str
from components.services.runs import ResultCache
from components.services.storage import TEMPORARY_PREFIX
from sched_engine import SimulationResult, run_scenario
from sched_engine.core.result import FRAMES, summary_frame, timeline_frame
from sched_engine.elastic.presets import two_job_model
from sched_engine.network.presets import fig1_model
from sched_engine.registry import REGISTRY

SMALL_MODELS = {"network": fig1_model(), "elastic": two_job_model()}
# Every policy of every engine: the golden samples (batch, fairshare) and the small network and elastic presets.
CASES = [(f"{stem}-{policy}", scenario) for scenario, policy, stem in golden_cases()] + [
    (f"{engine}-{entry.name}", {"engine": engine, "policy": entry.name, "model": model})
    for engine, model in SMALL_MODELS.items() for entry in REGISTRY.policies(engine)]
TINY = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": "tests/data/batch/failure.swf"}},
        "name": "tiny"}


def assert_same_result(actual: SimulationResult, expected: SimulationResult, exact: bool = True) -> None:
    """Same scenario and wall time, frames equal with the same columns, order, dtypes and a RangeIndex."""
    assert (actual.scenario, actual.scenario_hash) == (expected.scenario, expected.scenario_hash)
    assert actual.wall_seconds == expected.wall_seconds
    for name in FRAMES:
        frame = getattr(actual, name)
        pd.testing.assert_frame_equal(frame, getattr(expected, name), check_exact=exact)
        assert isinstance(frame.index, pd.RangeIndex)


def reopened(directory, scenario_hash: str) -> SimulationResult | None:
    """``get`` through a new cache object: no in-process memo, as in another process."""
    return ResultCache(directory).get(scenario_hash)


def made_up_result(label: str, jobs: int = 3, timeline_rows: int = 4) -> SimulationResult:
    """A result without simulating: distinct hash per label, cheap to build and store."""
    rng = np.random.default_rng(len(label))
    submit = np.sort(rng.uniform(0, 1e6, jobs))
    frame = pd.DataFrame({
        "job_id": pd.Series([f"j{i}" for i in range(jobs)], dtype="string"),
        "submit_time": submit, "start_time": submit + 1.5, "end_time": submit + 100.25,
        "status": pd.Series(np.array(["finished", "killed", "finished"])[np.arange(jobs) % 3], dtype="string"),
    })
    times = np.arange(timeline_rows, dtype=float)
    timeline = timeline_frame(times, ["cluster"] * timeline_rows, ["running_jobs"] * timeline_rows, times % 7)
    return SimulationResult({"engine": "batch", "policy": "fcfs", "name": label},
                            hashlib.sha256(label.encode()).hexdigest(), frame, timeline,
                            summary_frame([("jobs", jobs, "jobs")]), wall_seconds=0.1 + 0.2)


def bundles(directory) -> list:
    return sorted((directory / "store").glob(f"*{BUNDLE_SUFFIX}"))


# Round trips.

@pytest.mark.parametrize("scenario", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_every_engine_result_comes_back_exactly_from_a_bundle_and_from_the_store(scenario, tmp_path):
    result = run_scenario(scenario)
    assert_same_result(SimulationResult.from_bundle(result.to_bundle()), result)
    ResultCache(tmp_path).put(result)
    stored = reopened(tmp_path, result.scenario_hash)
    assert_same_result(stored, result)
    # The same frames, dtypes and column order as the JSON form gave (whose floats keep 10 digits only).
    via_json = SimulationResult.from_json(result.to_json())
    for name in FRAMES:
        assert list(getattr(stored, name).columns) == list(getattr(via_json, name).columns)
        assert getattr(stored, name).dtypes.equals(getattr(via_json, name).dtypes)
    assert_same_result(stored, via_json, exact=False)


def test_missing_values_special_floats_and_empty_frames_come_back_exactly():
    jobs = pd.DataFrame({
        "job_id": pd.Series(["a", "ü-2", "", "d"], dtype="string"),
        "submit_time": [0.0, 1 / 3, -0.0, 1e300],
        "start_time": [np.nan, np.inf, -np.inf, 5e-324],
        "end_time": [np.nan, np.nan, 2.0, 3.0],
        "status": pd.Series(["finished", pd.NA, "killed", pd.NA], dtype="string"),
        "procs": np.array([1, 2**62, -3, 0], dtype="int64"),
        "user": pd.Series(["u1", np.nan, "u3", "u1"], dtype="str"),
        "exclusive": [True, False, True, False],
    })
    result = SimulationResult({"engine": "batch", "policy": "fcfs"}, "0" * 64, jobs, timeline_frame([], [], [], []),
                              summary_frame([("makespan_s", float("nan"), "s")]), wall_seconds=0.1 + 0.2)
    again = SimulationResult.from_bundle(result.to_bundle())
    assert_same_result(again, result)
    assert np.signbit(again.jobs["submit_time"].iloc[2])
    assert again.jobs["status"].isna().tolist() == [False, True, False, True]
    assert again.jobs["user"].dtype == jobs["user"].dtype and again.timeline.empty


def _with_pending(result: SimulationResult, pending: pd.DataFrame) -> SimulationResult:
    return SimulationResult(result.scenario, result.scenario_hash, result.jobs, result.timeline, result.summary,
                            wall_seconds=result.wall_seconds, extras={"pending": pending})


def test_an_engines_own_frame_comes_back_when_asked_and_is_stored_again_as_it_was():
    pending = pd.DataFrame({"job_id": pd.Series(["j1", "j2"], dtype="string"), "start": [0.0, 1.5],
                            "reason": pd.Series(["resources", "reservation"], dtype="category")})
    result = _with_pending(made_up_result("extras"), pending)
    again = SimulationResult.from_bundle(result.to_bundle())
    stored_twice = SimulationResult.from_bundle(again.to_bundle())   # written again before it was ever read
    for read in (again, stored_twice):
        pd.testing.assert_frame_equal(read.extra("pending"), pending, check_exact=True)
        assert set(read.frames()) == {"jobs", "timeline", "summary", "pending"}
    assert again.extra("missing") is None


def test_a_bundle_whose_own_frame_is_not_parquet_is_refused_when_read():
    bundle = _with_pending(made_up_result("planted"), pd.DataFrame({"x": [1]})).to_bundle()
    planted = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(bundle)) as source, zipfile.ZipFile(planted, "w", zipfile.ZIP_STORED) as target:
        for member in source.infolist():   # a well-formed archive whose own frame is not Parquet at all
            data = b"not parquet" if member.filename == "pending.parquet" else source.read(member)
            target.writestr(member.filename, data)
    with pytest.raises(pa.ArrowInvalid):
        SimulationResult.from_bundle(planted.getvalue())


def test_a_450000_job_result_with_a_million_row_timeline_comes_back_whole(tmp_path):
    """Its load time is bench/result_store.py's figure (tests assert behaviour, not time)."""
    big = made_up_result("big", jobs=450_000, timeline_rows=1_000_000)
    ResultCache(tmp_path).put(big)
    assert_same_result(reopened(tmp_path, big.scenario_hash), big)


# Entries of the earlier store (flask-caching's FileSystemCache holding SimulationResult.to_json text).

def write_file_system_cache_entry(store, key: str, value) -> None:
    """What FileSystemCache.set (flask-caching 2.5.1, default_timeout=0) wrote, byte for byte.

    The file is named by the sha256 of the key and holds the expiry (``struct`` "I", 0: never)
    followed by the pickled value.
    """
    store.mkdir(parents=True, exist_ok=True)
    path = store / hashlib.sha256(key.encode()).hexdigest()
    path.write_bytes(struct.pack("I", 0) + pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def test_an_entry_of_the_earlier_file_store_still_reads_and_is_rewritten_as_a_bundle(tmp_path):
    result = run_scenario(TINY)
    write_file_system_cache_entry(tmp_path / "store", f"result:{result.scenario_hash}", result.to_json())
    write_file_system_cache_entry(tmp_path / "store", "__wz_cache_count", 1)
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / f"{result.scenario_hash}.json").write_text(
        f'{{"hash": "{result.scenario_hash}", "engine": "batch", "policy": "easy", "name": "tiny", "seed": 0, '
        f'"finished": "2024-01-01T00:00:00+00:00", "wall_seconds": 0.5, "jobs": {len(result.jobs)}}}')
    cache = ResultCache(tmp_path)
    assert [e["hash"] for e in cache.listing()] == [result.scenario_hash]
    expected = SimulationResult.from_json(result.to_json())
    assert_same_result(cache.get(result.scenario_hash), expected)
    # Read once, then a bundle: the legacy file is gone, the count file untouched (never an entry, never read).
    assert bundles(tmp_path) == [tmp_path / "store" / f"{result.scenario_hash}{BUNDLE_SUFFIX}"]
    assert sorted(p.name for p in (tmp_path / "store").iterdir() if not p.name.startswith(".")) == sorted(
        [LEGACY_COUNT_FILE, f"{result.scenario_hash}{BUNDLE_SUFFIX}"])
    assert_same_result(reopened(tmp_path, result.scenario_hash), expected)
    assert [e["hash"] for e in ResultCache(tmp_path).listing()] == [result.scenario_hash]


@pytest.mark.parametrize("text", ["", "{}", "é" * 300, "x" * 200_000])   # unframed beyond 64 KiB
def test_the_text_of_a_pickled_str_is_read_and_anything_else_refused(text):
    for protocol in (4, 5):
        assert pickled_str(pickle.dumps(text, protocol)) == text
    for other in (1, b"bytes", [text], (text, text), {"text": text}, None):
        with pytest.raises(ValueError, match="not a pickled str"):
            pickled_str(pickle.dumps(other, 5))


class RunsCode:
    """Pickles to a call of ``os.system`` that creates ``canary``: unpickled, it runs."""

    def __init__(self, canary):
        self.canary = canary

    def __reduce__(self):
        return os.system, (f"touch {self.canary}",)


def test_a_planted_pickle_is_never_run_and_reads_as_a_miss(tmp_path, caplog):
    proof = tmp_path / "proof"
    pickle.loads(pickle.dumps(RunsCode(proof)))
    assert proof.exists(), "the payload runs when unpickled in the ordinary way"
    canary, store = tmp_path / "canary", tmp_path / "results" / "store"
    payload = pickle.dumps(RunsCode(canary))
    planted = "a" * 64
    write_file_system_cache_entry(store, f"result:{planted}", RunsCode(canary))          # where get looks
    write_file_system_cache_entry(store, "__wz_cache_count", RunsCode(canary))           # counted at start once
    write_file_system_cache_entry(store, "result:" + "b" * 64, ["a list", RunsCode(canary)])
    (store / f"{'c' * 64}{BUNDLE_SUFFIX}").write_bytes(payload)
    (store / f"{'d' * 64}{BUNDLE_SUFFIX}").write_bytes(struct.pack("I", 0) + payload)
    cache = ResultCache(tmp_path / "results", capacity=2)
    with caplog.at_level(logging.WARNING, logger="components.services.runs"):
        for scenario_hash in ("a", "b", "c", "d"):
            assert cache.get(scenario_hash * 64) is None
    assert not canary.exists()
    assert sum(planted in r.getMessage() for r in caplog.records) == 1 and "not a pickled str" in caplog.text
    for label in ("one", "two", "three"):      # writes that prune: the store is listed, nothing is opened
        cache.put(made_up_result(label))
    assert cache.listing() and not canary.exists()


# Capacity and atomic writes.

def _write_results(directory, capacity: int, worker: int, count: int, start) -> None:
    start.wait()
    cache = ResultCache(directory, capacity=capacity)
    for k in range(count):
        cache.put(made_up_result(f"worker {worker} result {k}"))


def test_capacity_holds_with_several_processes_writing_at_once(tmp_path):
    capacity, workers, each = 5, 4, 8
    context = multiprocessing.get_context("fork")
    start = context.Barrier(workers)
    processes = [context.Process(target=_write_results, args=(tmp_path, capacity, w, each, start))
                 for w in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
    assert [p.exitcode for p in processes] == [0] * workers
    kept = bundles(tmp_path)
    assert len(kept) == capacity
    listed = ResultCache(tmp_path).listing()
    assert sorted(e["hash"] for e in listed) == sorted(p.name.removesuffix(BUNDLE_SUFFIX) for p in kept)
    assert all(reopened(tmp_path, e["hash"]) is not None for e in listed)
    assert not list((tmp_path / "store").glob(TEMPORARY_PREFIX + "*"))


def test_the_oldest_written_entries_go_first(tmp_path):
    cache = ResultCache(tmp_path, capacity=2)
    first, second, third = (made_up_result(label) for label in ("first", "second", "third"))
    for written, result in ((1000, first), (2000, second)):   # write times set apart beyond clock resolution
        cache.put(result)
        os.utime(tmp_path / "store" / f"{result.scenario_hash}{BUNDLE_SUFFIX}", (written, written))
    cache.put(third)
    assert {e["hash"] for e in cache.listing()} == {second.scenario_hash, third.scenario_hash}
    assert reopened(tmp_path, first.scenario_hash) is None


def killed(*_):
    raise OSError("killed")


def test_a_partial_write_is_never_read(tmp_path, monkeypatch, caplog):
    import components.services.storage as storage
    kept, lost, other = made_up_result("kept"), made_up_result("lost"), made_up_result("other")
    cache = ResultCache(tmp_path, capacity=2)
    cache.put(kept)
    store = tmp_path / "store"
    partial = store / f"{TEMPORARY_PREFIX}left-by-a-killed-writer"
    partial.write_bytes(lost.to_bundle()[:1000])
    # A write that fails before the rename leaves no entry.
    monkeypatch.setattr(storage.os, "replace", killed)
    with pytest.raises(OSError, match="killed"):
        cache.put(lost)
    monkeypatch.undo()
    assert reopened(tmp_path, lost.scenario_hash) is None
    # The partial temporary is no entry: two results fit the capacity of two.
    cache.put(other)
    assert {e["hash"] for e in ResultCache(tmp_path).listing()} == {kept.scenario_hash, other.scenario_hash}
    assert_same_result(reopened(tmp_path, kept.scenario_hash), kept)
    # A torn bundle (copied in half, say) reads as a miss, logged.
    (store / f"{lost.scenario_hash}{BUNDLE_SUFFIX}").write_bytes(lost.to_bundle()[:-100])
    with caplog.at_level(logging.WARNING, logger="components.services.runs"):
        assert reopened(tmp_path, lost.scenario_hash) is None
    assert lost.scenario_hash in caplog.text
    # A temporary an hour old was left by a dead process: the next start removes it; a fresh one stays.
    old = time.time() - 7200
    os.utime(partial, (old, old))
    fresh = store / f"{TEMPORARY_PREFIX}being-written"
    fresh.write_bytes(b"partial")
    ResultCache(tmp_path)
    assert not partial.exists() and fresh.exists()


def test_only_scenario_hashes_are_looked_up_and_only_their_own_results_returned(tmp_path):
    cache = ResultCache(tmp_path)
    (tmp_path / "secret.parquet.zip").write_bytes(made_up_result("x").to_bundle())
    for key in ("../secret", "A" * 64, "a" * 63, None, 12):
        assert cache.get(key) is None
    (tmp_path / "store" / f"{'e' * 64}{BUNDLE_SUFFIX}").write_bytes(made_up_result("x").to_bundle())   # renamed
    assert cache.get("e" * 64) is None
