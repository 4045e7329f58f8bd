"""Load: 20 concurrent sessions each run a scenario through the Dash callback endpoint.

The app is served in-process on a loopback port. Each session does what the
browser's renderer does for a scenario permalink, over plain HTTP: load the
page (``/scenario/<hash>``), its layout and callback list, route to the
scenario page, show it, press Run (a background callback: the first POST
returns signed ``cacheKey``/``job`` handles, then the same request is polled
with them until the response carries the outputs), and show the page again
with the result. Every request is bounded in time and the whole test by a
global deadline; the run latencies (p50/p95) and wall time are printed.

:class:`DashClient` is also used by the fault tests.
"""

from __future__ import annotations

import json
import re
import statistics
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import multiprocess
import psutil
import pytest
from diskcache import Timeout
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from werkzeug.serving import WSGIRequestHandler, make_server

from app import create_app
from components import shell
from components.pages import scenario as scenario_page
from components.services.progress import JobStore, ThrottledProgress
from components.services.runs import ResultCache
from components.services.workspace import ScenarioStore

pytestmark = [pytest.mark.system, pytest.mark.slow]   # a served app and 20 concurrent sessions
SESSIONS = 20
DEADLINE_S = 240.0
REQUEST_TIMEOUT_S = 30.0
CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)


class CallbackFailed(AssertionError):
    """A callback request answered with an error status or an unexpected body."""


def split_output(output: str) -> list[dict]:
    """The outputs of a callback's ``output`` string, as the renderer sends them."""
    parts = output[2:-2].split("...") if output.startswith("..") else [output]
    outputs = []
    for part in parts:
        component, _, prop = part.rpartition(".")
        outputs.append({"id": json.loads(component) if component.startswith("{") else component, "property": prop})
    return outputs


class DashClient:
    """One browser session against a Dash app, over HTTP (urllib, no browser)."""

    def __init__(self, base_url: str, deadline: float | None = None):
        self.base_url = base_url.rstrip("/")
        self.deadline = deadline if deadline is not None else time.monotonic() + DEADLINE_S
        self.end_id: str | None = None
        self.dependencies: list[dict] = []
        self.layout: dict | None = None

    def _timeout(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the session's deadline passed")
        return min(REQUEST_TIMEOUT_S, left)

    def request(self, path: str, body: dict | None = None, args: list[tuple[str, str]] | None = None):
        """``(status, body bytes)`` of a GET (no body) or a JSON POST; raises CallbackFailed on 4xx/5xx."""
        url = self.base_url + path + ("?" + urllib.parse.urlencode(args) if args else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                         headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout()) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:2000].decode("utf-8", "replace")
            raise CallbackFailed(f"{exc.code} from {path}: {detail}") from None

    def open_page(self, path: str) -> None:
        """Load a page as the renderer does: HTML (its signed ``end_id``), layout, callback list."""
        status, html = self.request(path)
        assert status == 200, f"GET {path} answered {status}"
        config = json.loads(CONFIG.search(html.decode()).group(1))
        self.end_id = config["end_id"]
        self.layout = json.loads(self.request("/_dash-layout")[1])
        self.dependencies = json.loads(self.request("/_dash-dependencies")[1])

    def callback(self, component_id: str, prop: str) -> dict:
        """The server callback that has ``component_id.prop`` among its inputs (clientside ones run in the browser)."""
        found = [d for d in self.dependencies
                 if {"id": component_id, "property": prop} in d["inputs"] and not d.get("clientside_function")]
        if len(found) != 1:
            raise LookupError(f"{len(found)} callbacks take {component_id}.{prop} as an input")
        return found[0]

    def payload(self, dependency: dict, values: dict, changed: tuple[str, str] | None) -> dict:
        """The request body: every input and state with its value from ``values`` (``(id, prop)``), else None."""
        def filled(items):
            return [{**item, "value": values.get((item["id"], item["property"]))} for item in items]
        outputs = split_output(dependency["output"])
        return {"output": dependency["output"],
                "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
                "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
                "changedPropIds": [f"{changed[0]}.{changed[1]}"] if changed else []}

    def call(self, dependency: dict, values: dict, changed: tuple[str, str] | None = None) -> dict:
        """Fire a callback; returns ``{component id: {prop: value}}`` ({} when nothing was updated)."""
        if dependency.get("background"):
            return self.run_background(dependency, values, changed)
        status, body = self.request("/_dash-update-component", self.payload(dependency, values, changed),
                                    [("endId", self.end_id)])
        return {} if status == 204 else json.loads(body)["response"]

    def run_background(self, dependency: dict, values: dict, changed: tuple[str, str] | None = None,
                       on_progress=None, on_job=None) -> dict:
        """Fire a background callback and poll it as the renderer does until its outputs arrive."""
        payload = self.payload(dependency, values, changed)
        status, body = self.request("/_dash-update-component", payload, [("endId", self.end_id)])
        handles = json.loads(body)
        if status != 200 or "cacheKey" not in handles or "job" not in handles:
            raise CallbackFailed(f"a background callback did not start: {status} {body[:300]!r}")
        if on_job is not None:
            on_job(handles)
        # Polls carry the signed handles; the renderer blanks the input and state values.
        blank = {**payload, "inputs": [{**i, "value": None} for i in payload["inputs"]],
                 "state": [{**s, "value": None} for s in payload["state"]]}
        args = [("endId", self.end_id), ("cacheKey", handles["cacheKey"]), ("job", handles["job"])]
        interval = (dependency["background"].get("interval") or 1000) / 1000
        while True:
            time.sleep(min(interval, max(0.0, self.deadline - time.monotonic())))
            status, body = self.request("/_dash-update-component", blank, args)
            if status == 204:   # the job ended without updating anything (cancelled or lost)
                return {}
            data = json.loads(body)
            if data.get("progress") and on_progress is not None:
                on_progress(data["progress"])
            if "response" in data:
                return data["response"]


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


def load_scenario(seed: int, max_jobs: int = 300) -> dict:
    """A small batch scenario: EASY on the first ``max_jobs`` jobs of the HPC2N excerpt, synthetic failures."""
    return {"name": f"load seed {seed}", "engine": "batch", "policy": "easy", "seed": seed,
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": max_jobs},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines",
                      "failures": {"kind": "synthetic", "afc": 0.002}, "requirements": False,
                      "estimates": "perfect"}}


def find_component(tree, component_id: str):
    """The component with ``component_id`` in a serialised layout, else None."""
    if isinstance(tree, dict):
        if tree.get("props", {}).get("id") == component_id:
            return tree
        children = tree.get("props", {}).get("children")
        return find_component(children, component_id) if children is not None else None
    if isinstance(tree, list):
        for child in tree:
            found = find_component(child, component_id)
            if found is not None:
                return found
    return None


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@contextmanager
def served_app(app):
    """A built Dash ``app`` on a loopback port, in this process; yields ``(base url, job processes())``.

    Its job processes (forks of this process) still alive at the end are killed.
    """
    me = psutil.Process()
    earlier = {child.pid for child in me.children()}
    server = make_server("127.0.0.1", 0, app.server, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def job_processes() -> list[psutil.Process]:
        """This server's job processes (forks of this process) still alive."""
        alive = []
        for child in me.children():
            try:
                if (child.pid not in earlier and child.cmdline() == me.cmdline()
                        and child.status() != psutil.STATUS_ZOMBIE):
                    alive.append(child)
            except psutil.Error:
                continue
        return alive
    try:
        yield f"http://127.0.0.1:{server.server_port}", job_processes
    finally:
        server.shutdown()
        thread.join(timeout=10)
        for child in job_processes():
            child.kill()


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
    assert find_component(page, scenario_page.ids.HASH)["props"]["data"] == scenario_hash
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
