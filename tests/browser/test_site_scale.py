"""A site's own trace on the batch page in headless Chromium: its hardware, an early upload, a large run.

The large run holds the payload budget: no callback response over 3 MB for
a 200,000-job trace, and zooming the time axis brings each job back.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest
from flask import request
from selenium.webdriver.common.keys import Keys

from app import create_app
from clicks import show_inputs
from components.pages import batch as page

pytestmark = [pytest.mark.browser, pytest.mark.slow]   # a 200,000-job trace
TIMEOUT = 240
BUDGET_BYTES = 3 * 2**20


def write_swf(path: Path, jobs: int, max_procs: int, nodes: int, seed: int = 7, largest_job: int = 128) -> Path:
    """A generated SWF trace: Poisson arrivals (mean 40 s apart), power-of-two sizes, log-normal run times."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(40.0, jobs)).astype(np.int64)
    procs = 2 ** rng.integers(0, int(np.log2(largest_job)) + 1, jobs)
    run = np.maximum(rng.lognormal(6.0, 1.2, jobs).astype(np.int64), 1)
    lines = [f"; MaxNodes: {nodes}", f"; MaxProcs: {max_procs}"]
    lines += [f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {2 * r} -1 1 {i % 97} {i % 7} -1 1 -1 -1 -1"
              for i, (s, r, p) in enumerate(zip(submit.tolist(), run.tolist(), procs.tolist()))]
    text = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        # gzip's default level 9 spends 6.7 s on 200,000 jobs; level 6 takes 0.9 s for a file 3% larger.
        path.write_bytes(gzip.compress(text.encode(), compresslevel=6))
    else:
        path.write_text(text)
    return path


def _wait_until(dash_duo, script: str, timeout: float = TIMEOUT) -> None:
    """Wait until the JavaScript expression ``script`` is true in the page."""
    deadline = time.monotonic() + timeout
    while not dash_duo.driver.execute_script(f"return Boolean({script});"):
        assert time.monotonic() < deadline, f"not true within {timeout} s: {script}"
        time.sleep(0.2)


def _wait_for_every_callback(dash_duo, timeout: float = TIMEOUT) -> None:
    """Wait until the renderer has no callback requested, waiting or running (twice in a row, 0.2 s apart)."""
    deadline, idle = time.monotonic() + timeout, 0
    while idle < 2:
        assert dash_duo.window_store, "no Dash renderer store in the page"
        idle = idle + 1 if dash_duo.redux_state_rqs == [] else 0
        assert time.monotonic() < deadline, f"callbacks still pending after {timeout} s: {dash_duo.redux_state_rqs}"
        time.sleep(0.2)


def _open(dash_duo, app):
    dash_duo.start_server(app)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_element(f"#{page.ids.TRACE_UPLOAD} input[type=file]", timeout=TIMEOUT)


def _upload(dash_duo, component_id, path):
    dash_duo.find_element(f"#{component_id} input[type=file]").send_keys(str(path))


def test_an_uploaded_trace_runs_on_its_header_machine_unless_clusters_were_chosen(dash_duo, tmp_path):
    _open(dash_duo, create_app(tmp_path / "data"))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    assert "806 CPUs, from metacentrum-2009.machines" in dash_duo.find_element(f"#{page.ids.HARDWARE}").text
    _upload(dash_duo, page.ids.TRACE_UPLOAD, write_swf(tmp_path / "site.swf", 400, 512, 64))
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "from the trace header of site.swf", timeout=TIMEOUT)
    assert "1 cluster, 512 CPUs" in dash_duo.find_element(f"#{page.ids.HARDWARE}").text
    dash_duo.wait_for_contains_text(f"#{page.ids.CLUSTERS}", "64", timeout=TIMEOUT)
    assert len(dash_duo.find_elements(f"#{page.ids.CLUSTERS} tbody tr")) == 2     # header row + the one cluster
    # Runs record the hardware.
    for box in dash_duo.find_elements(f"#{page.ids.POLICIES} input:checked"):
        box.click()
    dash_duo.find_elements(f"#{page.ids.POLICIES} input")[0].click()             # FCFS only
    for box in dash_duo.find_elements(f"#{page.ids.SCENARIOS} input:checked")[1:]:
        box.click()                                                          # BASIC only
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "1 cluster, 512 CPUs (the trace header of site.swf)",
                                    timeout=TIMEOUT)
    show_inputs(dash_duo, page.ids.PANEL)   # folded away after the run
    # An explicit choice of clusters is kept for the next upload, and the page says how they differ.
    dash_duo.select_dcc_dropdown(f"#{page.ids.CLUSTER_CHOICE}", "metacentrum-2009.machines")
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "from metacentrum-2009.machines", timeout=TIMEOUT)
    _upload(dash_duo, page.ids.TRACE_UPLOAD, write_swf(tmp_path / "other.swf", 300, 4096, 512, seed=3, largest_job=256))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "other.swf", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "The trace header describes 4,096 CPUs", timeout=TIMEOUT)
    text = dash_duo.find_element(f"#{page.ids.HARDWARE}").text
    assert "14 clusters, 806 CPUs, from metacentrum-2009.machines" in text
    assert "ask for more CPUs than the largest cluster has (152): they will be cancelled" in text
    dash_duo.driver.save_screenshot(str(tmp_path / "hardware.png"))
    assert dash_duo.get_logs() == []


def test_an_upload_right_after_the_page_opens_is_not_overwritten(dash_duo, tmp_path):
    _open(dash_duo, create_app(tmp_path / "data"))
    _upload(dash_duo, page.ids.TRACE_UPLOAD, write_swf(tmp_path / "early.swf", 200, 256, 32))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "early.swf", timeout=TIMEOUT)
    _wait_for_every_callback(dash_duo)   # every callback the page load started has answered by now
    assert "early.swf" in dash_duo.find_element(f"#{page.ids.TRACE_INFO}").text
    assert "from the trace header of early.swf" in dash_duo.find_element(f"#{page.ids.HARDWARE}").text
    assert dash_duo.get_logs() == []


def test_a_200000_job_run_stays_within_the_payload_budget_and_zooming_shows_each_job(dash_duo, tmp_path):
    app = create_app(tmp_path / "data")
    responses: list[tuple[int, str]] = []   # (bytes, path) of every callback response

    @app.server.after_request
    def _measure(response):
        if request.path.endswith("_dash-update-component"):   # callback responses (not the page's scripts)
            responses.append((len(response.get_data()), request.path))
        return response

    _open(dash_duo, app)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    for box in dash_duo.find_elements(f"#{page.ids.POLICIES} input"):
        if box.is_selected() != (box.get_attribute("value") == "easy"):
            box.click()
    for box in dash_duo.find_elements(f"#{page.ids.SCENARIOS} input:checked")[1:]:
        box.click()
    field = dash_duo.find_element(f"#{page.ids.MAX_JOBS}")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.BACKSPACE)
    _upload(dash_duo, page.ids.TRACE_UPLOAD, write_swf(tmp_path / "big.swf.gz", 200_000, 2048, 256))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "200,000", timeout=TIMEOUT)
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "1 run(s)", timeout=TIMEOUT)
    gantt = f"document.querySelector('#{page.ids.GANTT} .js-plotly-plot')"
    _wait_until(dash_duo, f"({gantt} || {{}}).data?.length > 0")
    assert dash_duo.driver.execute_script(f"return {gantt}.data[0].type") == "heatmap"
    # Zoom to two hours: the Gantt draws each job of the window.
    dash_duo.wait_for_contains_text(f"#{page.ids.WINDOW_MSG}", "whole run", timeout=TIMEOUT)
    time.sleep(1)   # the charts' last redraw has settled
    dash_duo.driver.execute_script(
        f"Plotly.relayout(document.querySelector('#{page.ids.QUEUE} .js-plotly-plot'), "
        "{'xaxis.range[0]': 500, 'xaxis.range[1]': 502});")
    dash_duo.wait_for_contains_text(f"#{page.ids.WINDOW_MSG}", "window 500.0–502.0 h", timeout=TIMEOUT)
    _wait_until(dash_duo, f"{gantt}.data.some(t => t.type === 'bar' && t.name === 'finished')")
    largest = max(size for size, _ in responses)
    assert largest <= BUDGET_BYTES, f"largest response {largest / 2**20:.1f} MB"
    assert dash_duo.get_logs() == []


def test_an_upload_then_run_with_nothing_else_touched_runs_the_whole_trace(dash_duo, tmp_path):
    """The landing page's advice: drop an .swf on the upload box, then Run. The sample's set-up gives way."""
    _open(dash_duo, create_app(tmp_path / "data"))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    _wait_for_every_callback(dash_duo)
    _upload(dash_duo, page.ids.TRACE_UPLOAD, write_swf(tmp_path / "mine.swf", 400, 512, 64))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_MSG}", "Failures set to none", timeout=TIMEOUT)
    said = dash_duo.find_element(f"#{page.ids.TRACE_MSG}").text
    assert "Jobs to simulate: all 400 of mine.swf (was the first 2,000)" in said
    _wait_for_every_callback(dash_duo)
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    # BASIC and EXT-REQ under FCFS, EASY, CONS and LS: 8 runs of the whole trace on its header's machine.
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "8 run(s)", timeout=TIMEOUT)
    assert "Not run" not in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "1 cluster, 512 CPUs (the trace header of mine.swf)",
                                    timeout=TIMEOUT)
    assert dash_duo.get_logs() == []
