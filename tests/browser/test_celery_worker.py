"""Scale-out in headless Chromium: a real redis-server, real Celery workers, the app built with REDIS_URL.

Each test starts its own ``redis-server`` on a free loopback port and Celery
workers as subprocesses (``python -m celery -A app:celery_app worker``, one
prefork process each, in their own process group). The web server runs in
this process (dash_duo); it has no job processes of its own, so a run that
finishes was run by a worker. ``make test`` installs ``redis-server``;
without it these tests fail rather than skip.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from app import create_app
from components.pages import fairshare as fairshare_page
from components.pages import scenario as scenario_page
from components.services.jobs import JOB_LOST
from components.services.runs import ResultCache
from components.services.workspace import ScenarioStore, permalink
from tests.browser.test_job_failure import LONG_RUN
from tests.support.processes import redis_server

pytestmark = [pytest.mark.browser, pytest.mark.system]   # redis-server and Celery workers
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
TASK = "background_callback_"
# LONG_RUN on its first 900 jobs: about 4.5 s of simulation, ample to be killed mid-run once it has started.
KILLED_RUN = {**LONG_RUN, "model": {**LONG_RUN["model"], "trace": {**LONG_RUN["model"]["trace"], "max_jobs": 900}}}


class Worker:
    """One ``celery worker`` subprocess, logging to ``<directory>/<name>.log``."""

    def __init__(self, name: str, redis_url: str, data: Path, directory: Path):
        self.name = name
        self.log = directory / f"{name}.log"
        env = {**os.environ, "REDIS_URL": redis_url, "SCHEDSCOPE_DATA": str(data), "PYTHONPATH": str(ROOT)}
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "app:celery_app", "worker", "--pool=prefork",
                 "--concurrency=1", "--loglevel=INFO", f"--hostname={name}@%h", "--without-gossip",
                 "--without-mingle", "--without-heartbeat"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if self.process.poll() is not None:
                raise AssertionError(f"worker {self.name} exited ({self.process.returncode}):\n{self.text()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"worker {self.name}: no {needle!r} within {timeout} s:\n{self.text()[-3000:]}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool), as when its machine goes away."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)


def _wait_for_key(url: str, pattern: str, timeout: float = TIMEOUT) -> None:
    """Wait until a Redis key matching ``pattern`` exists."""
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + timeout
    while not client.keys(pattern):
        assert time.monotonic() < deadline, f"no Redis key {pattern!r} within {timeout} s"
        time.sleep(0.05)


@pytest.fixture
def scale_out(tmp_path, monkeypatch):
    """``(redis url, start_worker)``; the app built in this test uses that Redis; workers and Redis stop at the end."""
    workers: list[Worker] = []
    with redis_server(tmp_path / "redis") as url:
        monkeypatch.setenv("REDIS_URL", url)

        def start_worker(name: str, data: Path) -> Worker:
            """A worker starting (seconds of imports): the test waits for its `` ready.`` when it needs it."""
            worker = Worker(name, url, data, tmp_path)
            workers.append(worker)
            return worker

        try:
            yield url, start_worker
        finally:
            for worker in workers:
                worker.stop()


def test_runs_are_executed_by_a_worker_and_results_shared_through_redis(dash_duo, tmp_path, scale_out):
    url, start_worker = scale_out
    # The worker has a data directory of its own, as on another machine: only Redis is shared.
    worker = start_worker("alpha", tmp_path / "worker-data")
    web = tmp_path / "web-data"
    dash_duo.start_server(create_app(web))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/fairshare")
    dash_duo.wait_for_element(f"#{fairshare_page.ids.PRESET}", timeout=TIMEOUT)
    worker.wait_for(" ready.")
    dash_duo.find_element(f"#{fairshare_page.ids.PRESET}").click()
    dash_duo.find_element(f"#{fairshare_page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{fairshare_page.ids.PANEL.message}", "4 run(s): 4 simulated", timeout=TIMEOUT)
    # The page's tables come from results the web server read back from Redis.
    dash_duo.wait_for_contains_text(f"#{fairshare_page.ids.PAPER}", "n31", timeout=TIMEOUT)

    log = worker.text()
    assert f"Task {TASK}" in log and "succeeded" in log, log[-3000:]
    listed = ResultCache(tmp_path / "unused", redis_url=url).listing()
    assert sorted(e["policy"] for e in listed) == sorted(fairshare_page.draft.FIG4_POLICIES), listed
    assert {e["engine"] for e in listed} == {"fairshare"}
    # Neither side kept results or job state on disk.
    for data in (web, tmp_path / "worker-data"):
        assert not (data / "results").exists() and not (data / "callbacks").exists()
    assert not (tmp_path / "unused").exists()
    assert dash_duo.get_logs() == []


def test_a_worker_killed_mid_run_shows_the_failed_state_and_another_worker_retries(dash_duo, tmp_path, scale_out):
    url, start_worker = scale_out
    # Saved scenarios are files: web server and workers share the data directory here (as over NFS).
    data = tmp_path / "data"
    scenario_hash = ScenarioStore(data / "scenarios").save(KILLED_RUN, "long run")["hash"]
    first = start_worker("bravo", data)
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{permalink(scenario_hash)}")
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "Not run yet", timeout=TIMEOUT)
    first.wait_for(" ready.")

    dash_duo.find_element(f"#{scenario_page.ids.RUN}").click()
    first.wait_for(f"Task {TASK}")                          # received by the worker
    _wait_for_key(url, "schedscope:job:*:started")          # and started: its heartbeat is in Redis
    assert "succeeded" not in first.text()
    first.kill()
    # The retry's worker starts while the page finds the job lost; it must not run the lost task.
    second = start_worker("charlie", data)
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", JOB_LOST, timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{scenario_page.ids.RUN}:not([disabled])", timeout=TIMEOUT)
    assert ResultCache(data / "results", redis_url=url).get(scenario_hash) is None
    # The lost task was acknowledged when the worker took it: no other worker will run it again later.
    assert redis.Redis.from_url(url).hlen("unacked") == 0

    second.wait_for(" ready.")
    assert f"Task {TASK}" not in second.text()
    dash_duo.find_element(f"#{scenario_page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "Result from the cache", timeout=TIMEOUT)
    assert "succeeded" in second.text()
    assert ResultCache(data / "results", redis_url=url).get(scenario_hash) is not None
    assert dash_duo.get_logs() == []
