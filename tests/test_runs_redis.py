"""The result cache and the job liveness checks in Redis, against a real redis-server on a loopback port.

:func:`redis_server` (a throwaway server: no persistence, a temporary
directory) is also used by the Celery browser test. ``make test`` installs
Debian's ``redis-server``; without it these tests fail, they are not skipped.
"""

from __future__ import annotations

import json
import pickle
import time
import zlib

import pandas as pd
import pytest
import redis

from components.scaleout.celery_app import celery_app
from components.services.celery_jobs import CeleryJobManager, Heartbeat
from components.services.jobs import JOB_LOST, lost_job_result
from components.services.result_store import REDIS_INDEX, REDIS_PREFIX
from components.services.runs import ResultCache
from sched_engine import SimulationResult
from tests.support.processes import redis_server

pytestmark = pytest.mark.system   # a real redis-server
SCENARIO = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": "tests/data/batch/failure.swf"}},
            "name": "tiny"}
UNPICKLED = []


@pytest.fixture
def redis_url(tmp_path):
    with redis_server(tmp_path / "redis") as url:
        yield url


def _record_unpickling():
    UNPICKLED.append(True)


class Booby:
    def __reduce__(self):
        return _record_unpickling, ()


def test_results_and_index_live_in_redis_and_are_shared_between_cache_objects(redis_url, tmp_path):
    web = ResultCache(tmp_path / "web", redis_url=redis_url)
    result, cached = web.run(SCENARIO)
    assert not cached
    # Another process (or machine) with its own directory sees the same result and listing.
    worker = ResultCache(tmp_path / "worker", redis_url=redis_url)
    assert worker.get(result.scenario_hash).jobs.equals(result.jobs)
    again, cached = worker.run(SCENARIO)
    assert cached and again.scenario_hash == result.scenario_hash
    [entry] = worker.listing()
    assert entry["hash"] == result.scenario_hash and entry["engine"] == "batch" and entry["policy"] == "easy"
    assert entry["name"] == "tiny" and entry["jobs"] == len(result.jobs)
    # Nothing was written to either directory.
    assert not (tmp_path / "web").exists() and not (tmp_path / "worker").exists()


def test_results_are_stored_as_parquet_bundles_not_pickles(redis_url, tmp_path):
    cache = ResultCache(tmp_path, redis_url=redis_url)
    result, _ = cache.run(SCENARIO)
    client = redis.Redis.from_url(redis_url)
    raw = client.get(REDIS_PREFIX + cache.key(result.scenario_hash))
    stored = SimulationResult.from_bundle(raw)
    for name in ("jobs", "timeline", "summary"):
        pd.testing.assert_frame_equal(getattr(stored, name), getattr(result, name), check_exact=True)
    assert json.loads(client.hget(REDIS_INDEX, result.scenario_hash))["hash"] == result.scenario_hash


def test_a_value_of_the_earlier_compressed_json_form_is_read_and_rewritten_as_a_bundle(redis_url, tmp_path):
    result, _ = ResultCache(tmp_path, redis_url=redis_url).run(SCENARIO)
    client = redis.Redis.from_url(redis_url)
    key = REDIS_PREFIX + ResultCache.key(result.scenario_hash)
    client.set(key, zlib.compress(result.to_json().encode("utf-8")))   # as the JSON-storing version wrote it
    again = ResultCache(tmp_path, redis_url=redis_url).get(result.scenario_hash)
    expected = SimulationResult.from_json(result.to_json())
    for name in ("jobs", "timeline", "summary"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(expected, name), check_exact=True)
    assert again.scenario == result.scenario and again.wall_seconds == result.wall_seconds
    assert SimulationResult.from_bundle(client.get(key)).scenario_hash == result.scenario_hash


def test_a_foreign_value_reads_as_a_miss_and_is_never_unpickled(redis_url, tmp_path):
    cache = ResultCache(tmp_path, redis_url=redis_url)
    client = redis.Redis.from_url(redis_url)
    for value in (b"!" + pickle.dumps(Booby()), pickle.dumps(Booby()), b"not compressed",
                  zlib.compress(pickle.dumps(Booby())), b"PK\x03\x04 not a zip"):
        client.set(REDIS_PREFIX + cache.key("f" * 64), value)
        assert cache.get("f" * 64) is None
    assert UNPICKLED == []


def test_evicted_results_and_damaged_entries_are_not_listed(redis_url, tmp_path):
    cache = ResultCache(tmp_path, redis_url=redis_url)
    first, _ = cache.run(SCENARIO)
    second, _ = cache.run({**SCENARIO, "policy": "fcfs"})
    client = redis.Redis.from_url(redis_url)
    client.hset(REDIS_INDEX, "junk", "{not json")
    assert {e["hash"] for e in cache.listing()} == {first.scenario_hash, second.scenario_hash}
    client.delete(REDIS_PREFIX + cache.key(first.scenario_hash))    # as evicted by Redis under memory pressure
    assert [e["hash"] for e in ResultCache(tmp_path, redis_url=redis_url).listing()] == [second.scenario_hash]


def test_listing_is_newest_first_and_capacity_drops_the_oldest_run_with_its_result(redis_url, tmp_path):
    cache = ResultCache(tmp_path, capacity=2, redis_url=redis_url)
    client = redis.Redis.from_url(redis_url)
    hashes = []
    for year, policy in zip((2001, 2002, 2003), ("easy", "fcfs", "cons")):
        result, _ = cache.run({**SCENARIO, "policy": policy})
        hashes.append(result.scenario_hash)
        entry = json.loads(client.hget(REDIS_INDEX, result.scenario_hash))
        client.hset(REDIS_INDEX, result.scenario_hash, json.dumps({**entry, "finished": f"{year}-01-01T00:00:00"}))
    assert [e["hash"] for e in cache.listing()] == [hashes[2], hashes[1]]
    assert client.hlen(REDIS_INDEX) == 2
    assert not client.exists(REDIS_PREFIX + cache.key(hashes[0]))
    assert ResultCache(tmp_path, redis_url=redis_url).get(hashes[0]) is None


# The Celery manager's view of a job, from the web server's side: queued, running, lost, stopped.

def test_a_started_job_is_running_while_its_heartbeat_lasts_and_lost_after(redis_url):
    manager = CeleryJobManager(celery_app(redis_url))
    client = manager.handle.backend.client
    job = "job-that-dies"
    assert manager.job_running(job)                       # queued: no worker took it yet
    beat = Heartbeat(client, manager._prefix(job), period=0.2, ttl=1, started_ttl=60)
    with beat:
        time.sleep(1.5)                                   # longer than the TTL: the beats keep it alive
        assert manager.job_running(job)
        assert manager.get_result("no-result-yet", job) is manager.UNDEFINED
    time.sleep(1.5)                                       # the heartbeat expired, as when the worker dies
    assert not manager.job_running(job)
    assert manager.get_result("no-result-yet", job) == lost_job_result()
    assert JOB_LOST in lost_job_result()["background_callback_error"]["msg"]


def test_a_job_stopped_on_purpose_is_not_reported_lost(redis_url):
    manager = CeleryJobManager(celery_app(redis_url))
    client = manager.handle.backend.client
    job = "job-cancelled"
    client.set(f"{manager._prefix(job)}:started", 1)     # started, and no heartbeat any more
    manager._mark_stopped(job)
    assert manager.get_result("no-result", job) is manager.UNDEFINED
    assert manager.get_result("no-result", job) == lost_job_result()   # the mark is used once


def test_a_result_written_by_the_job_is_returned_whatever_the_heartbeat(redis_url):
    manager = CeleryJobManager(celery_app(redis_url))
    backend = manager.handle.backend
    job = "job-finished"
    backend.client.set(f"{manager._prefix(job)}:started", 1)
    backend.set("result-key", json.dumps(["done"]))
    assert manager.get_result("result-key", job) == ["done"]
    assert not backend.client.exists(f"{manager._prefix(job)}:stopped")   # a finished job is no deliberate stop
