"""Load: 20 concurrent sessions each run a scenario through the Dash callback endpoint.

The app is served in-process on a loopback port. Each session does what the
browser's renderer does for a scenario permalink, over plain HTTP: load the
page (``/scenario/<hash>``), its layout and callback list, route to the
scenario page, show it, press Run (a background callback: the first POST
returns signed ``cacheKey``/``job`` handles, then the same request is polled
with them until the response carries the outputs), and show the page again
with the result. Every request is bounded in time and the whole test by a
global deadline; the run latencies (p50/p95) and wall time are printed.

:class:`~tests.support.dash_client.DashClient` (``tests/support``) is the session's client;
:func:`concurrent_sessions` also drives ``bench/load.py``.
"""

from __future__ import annotations

import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import multiprocess
import pytest
from diskcache import Timeout
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app import create_app
from components import shell
from components.pages import scenario as scenario_page
from components.services.progress import JobStore, ThrottledProgress
from components.services.runs import ResultCache
from components.services.workspace import ScenarioStore
from tests.support.dash_client import (
    DEADLINE_S,
    DashClient,
    find_component,
    load_scenario,
    split_output,
)
from tests.support.served import served_app

pytestmark = [pytest.mark.system, pytest.mark.slow]   # a served app and 20 concurrent sessions
SESSIONS = 20
def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@pytest.fixture
def served(tmp_path):
    """The app on a loopback port, in this process; yields ``(base url, data dir, job processes())``."""
    data = tmp_path / "data"
    with served_app(create_app(data)) as (url, job_processes):
        yield url, data, job_processes


def session(base_url: str, scenario_hash: str, deadline: float) -> dict:
    """One user: open the permalink, show the scenario, Run it, show the result. Returns timings."""
    started = time.monotonic()
    client = DashClient(base_url, deadline)
    path = f"/scenario/{scenario_hash}"
    client.open_page(path)
    content = client.call(client.callback(shell.LOCATION, "pathname"),
                          {(shell.LOCATION, "pathname"): path, (shell.LOCATION, "search"): ""})
    page = content[shell.CONTENT]["children"]
    assert find_component(page, scenario_page.ids.URL_HASH)["props"]["data"] == scenario_hash
    body = client.call(client.callback(scenario_page.ids.URL_HASH, "data"),
                       {(scenario_page.ids.URL_HASH, "data"): scenario_hash})
    assert find_component(body[scenario_page.ids.BODY]["children"], scenario_page.ids.HASH)["props"]["data"] \
        == scenario_hash
    show = client.callback(scenario_page.ids.HASH, "data")
    before = client.call(show, {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 0})
    assert before[scenario_page.ids.SUMMARY]["data"] == [], "the scenario must not be cached before its run"
    clicked = time.monotonic()
    progress = []
    outputs = client.run_background(
        client.callback(scenario_page.ids.RUN, "n_clicks"),
        {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
         (scenario_page.ids.VERSION, "data"): 0},
        (scenario_page.ids.RUN, "n_clicks"), on_progress=progress.append)
    finished = time.monotonic()
    assert outputs.get(scenario_page.ids.VERSION) == {"data": 1}, f"the run did not finish: {outputs}"
    after = client.call(show, {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 1})
    rows = {row["metric"]: row["value"] for row in after[scenario_page.ids.SUMMARY]["data"]}
    assert rows["jobs"] == 300
    return {"run_s": finished - clicked, "session_s": time.monotonic() - started, "progress_reports": len(progress)}


def concurrent_sessions(base_url: str, data, count: int, deadline: float) -> tuple[list[str], list, float]:
    """Save ``count`` load scenarios (seeds 1..count) and run one :func:`session` per scenario, all at once.

    Returns the scenario hashes, each session's outcome (its timings, or the
    exception it raised) and the wall seconds of the whole.
    """
    store = ScenarioStore(data / "scenarios")
    hashes = [store.save(load_scenario(seed), f"load seed {seed}")["hash"] for seed in range(1, count + 1)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(session, base_url, h, deadline) for h in hashes]
        outcomes = []
        for future in futures:
            try:
                outcomes.append(future.result(timeout=max(1.0, deadline - time.monotonic() + 5)))
            except Exception as exc:  # noqa: BLE001 -- every failure is collected and reported by the caller
                outcomes.append(exc)
    return hashes, outcomes, time.monotonic() - started


def test_twenty_concurrent_sessions_each_run_a_scenario_without_errors(served):
    base_url, data, job_processes = served
    hashes, outcomes, wall = concurrent_sessions(base_url, data, SESSIONS, time.monotonic() + DEADLINE_S)
    assert len(set(hashes)) == SESSIONS

    errors = [f"session {i + 1}: {type(o).__name__}: {o}" for i, o in enumerate(outcomes) if isinstance(o, Exception)]
    assert not errors, "\n".join(errors)
    cache = ResultCache(data / "results")
    assert all(cache.get(h) is not None for h in hashes), "every run's result must be in the result cache"
    settle = time.monotonic() + 10
    while job_processes() and time.monotonic() < settle:
        time.sleep(0.1)
    assert job_processes() == [], "every finished run's job process must be gone"

    runs = [o["run_s"] for o in outcomes]
    sessions = [o["session_s"] for o in outcomes]
    print(f"\nload: {SESSIONS} concurrent sessions, 0 errors, wall {wall:.2f} s; "
          f"run latency p50 {percentile(runs, 50):.2f} s, p95 {percentile(runs, 95):.2f} s, "
          f"max {max(runs):.2f} s; whole session p50 {percentile(sessions, 50):.2f} s, "
          f"p95 {percentile(sessions, 95):.2f} s; progress reports seen "
          f"{statistics.mean(o['progress_reports'] for o in outcomes):.1f} per run")


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
