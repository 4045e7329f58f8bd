"""The memory-elasticity page in headless Chromium (dash_duo): the two-job preset, a generated run, errors."""

import time

import pytest
from selenium.webdriver.common.keys import Keys
from zoom import zoom_until_shown

from app import create_app
from clicks import click_when_clear, show_inputs
from components.pages import elastic as page
from sched_engine import run_scenario
from sched_engine.elastic.presets import two_job_model
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120


def _start(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/memory")
    dash_duo.wait_for_element(f"#{page.ids.PRESET_TWO_JOB}", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "Tasks", timeout=TIMEOUT)
    # Graphs take their height once plotly.js has loaded: wait for that, so buttons below stop moving.
    deadline = time.monotonic() + TIMEOUT
    while not dash_duo.driver.execute_script(
            "return [...document.querySelectorAll('.dash-graph')].every(g => g.querySelector('.main-svg'));"):
        assert time.monotonic() < deadline, "the page's charts were not drawn"
        time.sleep(0.2)


def _type(dash_duo, component_id, text):
    field = dash_duo.find_element(f"#{component_id}")
    field.clear()
    field.send_keys(text + Keys.ENTER)


def _column(dash_duo, table, column):
    return [cell.text for cell in dash_duo.find_elements(f'#{table} td[data-dash-column="{column}"]')]


def _engine_runtimes(policy):
    jobs = run_scenario({"engine": "elastic", "policy": policy, "model": two_job_model(), "seed": 1}).jobs
    return [f"{value:g}" for value in jobs["runtime_s"].round(1)]


def _run_two_job_preset(dash_duo):
    dash_duo.find_element(f"#{page.ids.PRESET_TWO_JOB}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "listed jobs", timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "3 run(s)", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.JOB_TABLE}", "YARN-ME runtime (s)", timeout=TIMEOUT)


def test_two_job_preset_shows_the_engines_completion_times(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    _run_two_job_preset(dash_duo)
    yarn, yarn_me = _column(dash_duo, page.ids.JOB_TABLE, "YARN runtime (s)"), \
        _column(dash_duo, page.ids.JOB_TABLE, "YARN-ME runtime (s)")
    assert yarn == _engine_runtimes("yarn") == ["100", "199"]
    assert yarn_me == _engine_runtimes("yarn-me") == ["100", "150"]
    assert _column(dash_duo, page.ids.JOB_TABLE, "YARN-ME elastic tasks") == ["0", "1"]
    assert "YARN-ME / YARN average job runtime: 0.836" in dash_duo.find_element(f"#{page.ids.RATIO}").text
    # The job with an elastic task is shown per node: b held 600 MB on node-0 from 1 s to 151 s under YARN-ME.
    dash_duo.wait_for_contains_text(f"#{page.ids.NODE_GRAPH}", "Job b", timeout=TIMEOUT)
    bars = dash_duo.driver.execute_script(
        f"const d = document.querySelector('#{page.ids.NODE_GRAPH} .js-plotly-plot')._fullData;"
        "return d.map(t => [t.base[0], t.x[0], t.marker.color[0]]);")  # decoded arrays
    assert bars == [[100, 100, 6000], [1, 150, 600], [100, 100, 6000]]
    assert dash_duo.get_logs() == []


def test_a_generated_run_links_the_time_charts(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_PAPER}").click()
    _type(dash_duo, page.ids.JOBS, "40")
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "generated (uniform, seed 1)", timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "3 run(s): 3 simulated", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.RATIO}", "YARN-ME / YARN", timeout=TIMEOUT)
    assert _column(dash_duo, page.ids.PANEL.summary, "Jobs") == ["40", "40", "40"]
    assert int(_column(dash_duo, page.ids.PANEL.summary, "Under-sized tasks")[1]) > 0
    dash_duo.wait_for_element(f"#{page.ids.SCATTER} .scatterlayer .point", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.NODE_GRAPH} .bars", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1600, 3600)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    save_screenshot(dash_duo.driver, "screenshot-memory.png")
    zoom_until_shown(dash_duo, page.ids.MEMORY_GRAPH, 200, 700, f"#{page.ids.WINDOW_MSG}", "window 200–700 s")
    dash_duo.wait_for_contains_text(f"#{page.ids.WINDOW_MSG}", "window 200–700 s", timeout=TIMEOUT)
    # The window message and the linked charts are separate callback outputs: wait for each chart's range.
    for graph in (page.ids.TASKS_GRAPH, page.ids.NODE_GRAPH):
        _wait_for_range(dash_duo, graph, [200, 700])
    assert dash_duo.get_logs() == []


def _wait_for_range(dash_duo, graph: str, expected: list[float]) -> None:
    script = f"return document.querySelector('#{graph} .js-plotly-plot').layout.xaxis.range;"
    deadline = time.monotonic() + TIMEOUT
    while (seen := dash_duo.driver.execute_script(script)) != expected:
        assert time.monotonic() < deadline, f"{graph}: x range {seen}, expected {expected}"
        time.sleep(0.2)


def test_bad_input_says_why_and_keeps_the_results(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    _run_two_job_preset(dash_duo)
    show_inputs(dash_duo, page.ids.PANEL)   # folded away after the run
    _type(dash_duo, page.ids.CORES, "0")
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "Cores per node: must be at least 1, got 0",
                                    timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "Not run: Cores per node", timeout=TIMEOUT)
    assert "previous results stay" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    assert _column(dash_duo, page.ids.JOB_TABLE, "YARN runtime (s)") == ["100", "199"]
    _type(dash_duo, page.ids.CORES, "16")
    bad = tmp_path / "broken.csv"
    bad.write_text("job_id,arrival_s,tasks,memory_mb,duration_s\nj1,0,2,1000,10\nj2,5,1,much,10\n")
    dash_duo.find_element(f"#{page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(bad))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_MSG}", "broken.csv", timeout=TIMEOUT)
    message = dash_duo.find_element(f"#{page.ids.TRACE_MSG}").text
    assert "line 3" in message and "memory_mb" in message and "previous trace stays" in message
    assert "listed jobs" in dash_duo.find_element(f"#{page.ids.TRACE_INFO}").text
    big = tmp_path / "big.csv"
    big.write_text("job_id,arrival_s,tasks,memory_mb,duration_s\nj1,0,2,12000,10\n")
    dash_duo.find_element(f"#{page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(big))
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "needs 12000 MB per task, more than any node has",
                                    timeout=TIMEOUT)
    assert _column(dash_duo, page.ids.JOB_TABLE, "YARN-ME runtime (s)") == ["100", "150"]
    assert dash_duo.get_logs() == []
