"""The batch page in headless Chromium (dash_duo): preset run, linked charts, upload errors."""

import time

import pytest
from batch_choices import run_easy_basic
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from zoom import zoom_until_shown

from app import create_app
from clicks import show_inputs
from components.pages import batch as page
from downloads import downloaded
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120


def _start(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_element(f"#{page.ids.PRESET_COMPLETE}", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)


def _upload(dash_duo, component_id, path):
    field = dash_duo.find_element(f"#{component_id} input[type=file]")
    field.send_keys(str(path))


def test_preset_matrix_runs_and_charts_link(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_COMPLETE}").click()
    # The preset runs at the paper's load; the trace's own load keeps this test quick (Local Search).
    load = dash_duo.find_element(f"#{page.ids.LOAD_FACTOR}")
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: load.get_attribute("value") == str(page.draft.PAPER_LOAD_FACTOR))
    load.send_keys(Keys.CONTROL, "a")
    load.send_keys("1")
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "16 run(s)", timeout=TIMEOUT)
    # 4 scenarios x (FCFS, EASY, CONS, LS) = 16 runs with synthetic requirements seeded
    assert "simulated" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "EXT-ALL", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.OBJECTIVES} .bars", timeout=TIMEOUT)
    # 2,000 jobs over the whole run: the Gantt is a density picture (a heatmap per cluster and layer).
    dash_duo.wait_for_element(f"#{page.ids.GANTT} .hm image", timeout=TIMEOUT)
    # The mode bar offers local exports only: no button uploads a chart to Plotly Cloud.
    titles = dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title'));")
    assert "Download plot as a PNG" in titles and not [t for t in titles if "Share" in (t or "")]
    dash_duo.driver.set_window_size(1600, 3900)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    save_screenshot(dash_duo.driver, "screenshot-batch.png")
    # Zooming one time chart sets the window for all of them (zoomed again if the resize's redraw swallows it).
    zoom_until_shown(dash_duo, page.ids.QUEUE, 100, 200, f"#{page.ids.WINDOW_MSG}", "window 100.0–200.0 h")
    dash_duo.wait_for_contains_text(f"#{page.ids.WINDOW_MSG}", "window 100.0–200.0 h", timeout=TIMEOUT)
    gantt_range = dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.GANTT} .js-plotly-plot').layout.xaxis.range;")
    assert gantt_range == [100, 200]
    # Exports land as files: the detail run's jobs CSV and the matrix's self-contained report.
    dash_duo.find_element(f'[id=\'{{"frame":"jobs","type":"{page.ids.FRAME_LINKS}"}}\']').click()
    dash_duo.find_element(f'[id=\'{{"frame":"report","type":"{page.ids.PANEL.export}"}}\']').click()
    jobs_csv = downloaded(dash_duo, "batch-EXT-ALL-ls-jobs.csv")
    assert jobs_csv.read_text().splitlines()[0].startswith("job_id,submit_time,start_time,end_time,status,cluster")
    assert len(jobs_csv.read_text().splitlines()) == 2001
    report = downloaded(dash_duo, "batch-report.html").read_text()
    assert "EXT-ALL · Local Search · seed 1" in report and "<script src=" not in report
    assert dash_duo.get_logs() == []


def test_a_bad_upload_says_where_and_keeps_trace_and_results(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    run_easy_basic(dash_duo, TIMEOUT)
    show_inputs(dash_duo, page.ids.PANEL)   # folded away after the run
    bad = tmp_path / "broken.swf"
    bad.write_text("1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1\n2 5 -1 ten 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    _upload(dash_duo, page.ids.TRACE_UPLOAD, bad)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_MSG}", "broken.swf", timeout=TIMEOUT)
    message = dash_duo.find_element(f"#{page.ids.TRACE_MSG}").text
    assert "line 2" in message and "run_time" in message and "previous file stays" in message
    assert "hpc2n-excerpt.swf" in dash_duo.find_element(f"#{page.ids.TRACE_INFO}").text
    assert "EASY" in dash_duo.find_element(f"#{page.ids.PANEL.summary}").text
    # Skipping malformed lines loads the rest of the rejected file.
    dash_duo.find_element(f"#{page.ids.SKIP_MALFORMED} input").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "broken.swf", timeout=TIMEOUT)
    assert "Malformed lines skipped" in dash_duo.find_element(f"#{page.ids.TRACE_INFO}").text
    # The box stays ticked, and the next truncated file is read as it says: skipping, not refused.
    truncated = tmp_path / "truncated.swf"
    truncated.write_text("1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1\n2 5 -1 10 2 -1 -1 2 10 -1 1 1 -1\n")
    _upload(dash_duo, page.ids.TRACE_UPLOAD, truncated)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "truncated.swf", timeout=TIMEOUT)
    assert "Tick" not in dash_duo.find_element(f"#{page.ids.TRACE_MSG}").text
    # A binary file: nothing can rescue it, so no skip hint (and never with the box ticked).
    dash_duo.find_element(f"#{page.ids.SKIP_MALFORMED} input").click()   # unticked
    binary = tmp_path / "image.swf"
    binary.write_bytes(bytes(range(256)) * 4)
    _upload(dash_duo, page.ids.TRACE_UPLOAD, binary)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_MSG}", "image.swf not loaded", timeout=TIMEOUT)
    assert "Tick" not in dash_duo.find_element(f"#{page.ids.TRACE_MSG}").text
    assert dash_duo.get_logs() == []


def test_cancel_says_how_long_the_run_went_and_keeps_the_results(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_COMPLETE}").click()
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_element(f"#{page.ids.PANEL.cancel}:not([disabled])", timeout=TIMEOUT)
    time.sleep(1.5)
    dash_duo.find_element(f"#{page.ids.PANEL.cancel}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "Cancelled after", timeout=TIMEOUT)
    assert "nothing was saved" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    # A poll answered while Cancel was pressed may still show the run's last report; the bar is empty once
    # the run's last poll is in.
    progress = dash_duo.find_element(f"#{page.ids.PANEL.progress}")
    WebDriverWait(dash_duo.driver, 10).until(lambda _: progress.get_attribute("value") == "0",
                                             "the progress bar never went back to empty")
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}:not([disabled])", timeout=TIMEOUT)
    # (No check of the browser's console: the stopped run's pending poll may be reported as aborted.)


def test_a_run_past_the_servers_memory_bound_is_stopped_and_says_why(dash_duo, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_RUN_MEMORY_MB", "1")   # any run's process is larger
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    # Stopped within a second of starting (the watch reads memory every 0.2 s): a run that never reports fails
    # the test in a minute, not in the two the page's slower answers may take.
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "The run was stopped", timeout=60)
    message = dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    assert "SCHEDSCOPE_RUN_MEMORY_MB" in message and "MiB over the 1 MiB" in message
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}:not([disabled])", timeout=TIMEOUT)


def test_a_run_past_the_servers_cpu_bound_is_stopped_and_says_why(dash_duo, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_RUN_CPU_SECONDS", "1")
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_COMPLETE}").click()   # 16 runs: several CPU-seconds
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "The run was stopped", timeout=TIMEOUT)
    assert "SCHEDSCOPE_RUN_CPU_SECONDS" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}:not([disabled])", timeout=TIMEOUT)



def test_the_job_sizes_chart_never_covers_the_controls_below_it(dash_duo, tmp_path):
    """Seen at 1440 x 900 on some fresh loads: the chart drawn 804 px tall over the panel, taking its clicks."""
    dash_duo.driver.set_window_size(1440, 900)
    _start(dash_duo, tmp_path)
    for _ in range(3):
        dash_duo.driver.refresh()
        dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
        dash_duo.wait_for_element(f"#{page.ids.SIZES} .bars", timeout=TIMEOUT)
        box = dash_duo.driver.execute_script(
            f"return document.getElementById('{page.ids.SIZES}').getBoundingClientRect().height;")
        assert box <= page.layout.SIZES_HEIGHT + 1
        for target in (f"#{page.ids.MAX_JOBS}", f"#{page.ids.FAILURE_KIND} input[value=none]"):
            covered = dash_duo.driver.execute_script(
                "const e = document.querySelector(arguments[0]); e.scrollIntoView({block: 'center'});"
                "const r = e.getBoundingClientRect();"
                "const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
                "return top === e || e.contains(top) ? null : (top ? top.outerHTML.slice(0, 80) : 'nothing');",
                target)
            assert covered is None, f"{target} is covered by {covered}"
    assert dash_duo.get_logs() == []
