"""Load, for behaviour: a few concurrent sessions each run a scenario through the Dash callback endpoint.

The app is served in-process on a loopback port; each session (``tests/support/load.py``)
opens a scenario's permalink, presses Run (a background callback, polled with
its signed handles) and shows the result. Figures at scale -- 50 sessions
through the production server, and a flood of runs beside page loads -- are
``bench/load.py``'s, not a test's.
"""

from __future__ import annotations

import threading
import time

import multiprocess
import pytest
from diskcache import Timeout
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app import create_app
from components.services.progress import JobStore, ThrottledProgress
from components.services.runs import ResultCache
from tests.support.dash_client import DEADLINE_S, split_output
from tests.support.load import concurrent_sessions, percentile
from tests.support.served import served_app

SESSIONS = 3


@pytest.fixture
def served(tmp_path):
    """The app on a loopback port, in this process; yields ``(base url, data dir, job processes())``."""
    data = tmp_path / "data"
    with served_app(create_app(data)) as (url, job_processes):
        yield url, data, job_processes


@pytest.mark.system
def test_concurrent_sessions_each_run_a_scenario_without_errors(served):
    base_url, data, job_processes = served
    hashes, outcomes, _ = concurrent_sessions(base_url, data, SESSIONS, time.monotonic() + DEADLINE_S)
    assert len(set(hashes)) == SESSIONS

    errors = [f"session {i + 1}: {type(o).__name__}: {o}" for i, o in enumerate(outcomes) if isinstance(o, Exception)]
    assert not errors, "\n".join(errors)
    cache = ResultCache(data / "results")
    assert all(cache.get(h) is not None for h in hashes), "every run's result must be in the result cache"
    settle = time.monotonic() + 10
    while job_processes() and time.monotonic() < settle:
        time.sleep(0.1)
    assert job_processes() == [], "every finished run's job process must be gone"



def test_percentile_interpolates_between_ranks():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 100) == 5.0


def test_split_output_reads_single_and_multiple_outputs():
    assert split_output("a.children") == [{"id": "a", "property": "children"}]
    assert split_output("..a.data...b.children@9f..") == [{"id": "a", "property": "data"},
                                                         {"id": "b", "property": "children@9f"}]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_is_written_at_most_once_per_interval_and_the_final_report_always():
    written, clock = [], FakeClock()
    report = ThrottledProgress(written.append, interval=0.3, clock=clock)
    for step in range(10):           # ten reports within 0.09 s: only the first goes out
        clock.now = step * 0.01
        report(step, 100)
    clock.now = 0.31
    report(40, 100)
    report(100, 100)                 # final: written although only just after the last write
    report(100, 100)                 # unchanged: not written again
    assert written == [(0, 100), (40, 100), (100, 100)]
    assert report.written == 3


@pytest.mark.parametrize("error", [Timeout, RedisConnectionError, RedisTimeoutError])
def test_a_busy_store_costs_one_progress_update_and_never_the_run(error):
    calls = []

    def busy_then_free(value):
        calls.append(value)
        if len(calls) == 1:
            raise error
    clock = FakeClock()
    report = ThrottledProgress(busy_then_free, interval=0.3, clock=clock)
    report(1, 10)                    # refused by the store: skipped, no exception
    report(2, 10)                    # nothing was written yet, so this one is tried at once
    assert calls == [(1, 10), (2, 10)] and report.skipped == 1 and report.written == 1
    report.fraction(1.0)
    assert calls[-1] == (100, 100)


def test_jobs_forked_while_request_threads_use_the_store_all_finish(tmp_path):
    """A fork in the middle of another thread's store operation used to leave the child waiting for ever."""
    store = JobStore(str(tmp_path / "jobs"), timeout=5)
    stop = threading.Event()

    def request_thread():
        while not stop.is_set():
            store.set("progress", (1, 2))
            store.delete("progress")
            with store.transact():
                store.get("result")

    def job(index):
        for step in range(50):
            store.set(f"progress-{index}", (step, 50))
        store.set(f"result-{index}", index)

    threads = [threading.Thread(target=request_thread) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        jobs = [multiprocess.get_context("fork").Process(target=job, args=(i,)) for i in range(20)]
        for process in jobs:
            process.start()
        deadline = time.monotonic() + 60
        for process in jobs:
            process.join(max(0.1, deadline - time.monotonic()))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        for process in jobs:
            if process.exitcode is None:
                process.kill()
                process.join()
    assert [p.exitcode for p in jobs] == [0] * 20
    assert [store.get(f"result-{i}") for i in range(20)] == list(range(20))
