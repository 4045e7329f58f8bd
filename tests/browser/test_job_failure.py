"""A run whose job process dies mid-run (embedded manager): the page says so and Run works again.

The server runs in this process (dash_duo), so each background job is a
forked child of it with this process's command line; the test finds it with
psutil and kills it with SIGKILL, as the out-of-memory killer would.
"""

import signal
import time

import psutil
import pytest

from app import create_app
from components.pages import scenario as page
from components.services.jobs import JOB_LOST
from components.services.runs import ResultCache
from components.services.workspace import ScenarioStore, permalink

pytestmark = pytest.mark.browser
TIMEOUT = 120
# Local search on 1,500 HPC2N jobs: several seconds of simulation, time enough to kill it mid-run.
LONG_RUN = {"engine": "batch", "policy": "ls", "seed": 1, "name": "long local search",
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 1500},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


def job_processes() -> list[psutil.Process]:
    """Background jobs of the in-process server: forked children with this process's command line."""
    me = psutil.Process()
    found = []
    for child in me.children():
        try:
            if child.cmdline() == me.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def wait_for_job(timeout: float = 60) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = job_processes()
        if jobs:
            assert len(jobs) == 1, f"expected one job process, found {jobs}"
            return jobs[0]
        time.sleep(0.05)
    raise AssertionError("no job process started")


def _open(dash_duo, tmp_path, monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)           # the embedded manager
    data = tmp_path / "data"
    scenario_hash = ScenarioStore(data / "scenarios").save(LONG_RUN, "long run")["hash"]
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{permalink(scenario_hash)}")
    dash_duo.wait_for_contains_text(f"#{page.ids.STATUS}", "Not run yet", timeout=TIMEOUT)
    return data, scenario_hash


def _wait_enabled(dash_duo, selector, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not dash_duo.find_element(selector).is_enabled():
        assert time.monotonic() < deadline, f"{selector} stayed disabled"
        time.sleep(0.1)


def test_a_killed_job_shows_the_failed_state_and_a_retry_finishes(dash_duo, tmp_path, monkeypatch):
    data, scenario_hash = _open(dash_duo, tmp_path, monkeypatch)
    dash_duo.find_element(f"#{page.ids.RUN}").click()
    job = wait_for_job()
    time.sleep(1.5)                                           # well into the simulation
    assert not dash_duo.find_element(f"#{page.ids.RUN}").is_enabled()
    job.send_signal(signal.SIGKILL)

    dash_duo.wait_for_contains_text(f"#{page.ids.STATUS}", JOB_LOST, timeout=TIMEOUT)
    _wait_enabled(dash_duo, f"#{page.ids.RUN}")
    assert not dash_duo.find_element(f"#{page.ids.CANCEL}").is_enabled()
    assert ResultCache(data / "results").get(scenario_hash) is None, "the job was meant to die before finishing"

    dash_duo.find_element(f"#{page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.STATUS}", "Result from the cache", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.SUMMARY}", "Mean slowdown", timeout=TIMEOUT)
    assert JOB_LOST not in dash_duo.find_element(f"#{page.ids.STATUS}").text
    assert ResultCache(data / "results").get(scenario_hash) is not None
    assert dash_duo.get_logs() == []


def test_a_cancelled_run_is_not_reported_as_failed(dash_duo, tmp_path, monkeypatch):
    data, scenario_hash = _open(dash_duo, tmp_path, monkeypatch)
    dash_duo.find_element(f"#{page.ids.RUN}").click()
    job = wait_for_job()
    _wait_enabled(dash_duo, f"#{page.ids.CANCEL}")
    dash_duo.find_element(f"#{page.ids.CANCEL}").click()
    job.wait(30)                                              # stopped by the manager
    _wait_enabled(dash_duo, f"#{page.ids.RUN}")                   # the page's run has ended
    time.sleep(2)                                             # and stays without a failure message
    assert JOB_LOST not in dash_duo.find_element(f"#{page.ids.STATUS}").text
    assert "Not run yet" in dash_duo.find_element(f"#{page.ids.STATUS}").text
    assert ResultCache(data / "results").get(scenario_hash) is None
    assert dash_duo.get_logs() == []
