"""The Sweeps page in headless Chromium: a small Libra sweep runs in the background, shows progress, table, plot, CSV."""

import json
import time
from pathlib import Path

import pytest
from batch_choices import run_easy_basic
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.pages import batch as batch_page
from components.pages import sweeps as page
from components.pages import workspace as workspace_page
from downloads import downloaded
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
KIND = "libra-intervals"


def _param_id(kind, name):
    return json.dumps({"kind": kind, "name": name, "type": page.ids.PARAM}, separators=(",", ":"))


def _param(dash_duo, name):
    return dash_duo.find_element(f"[id='{_param_id(KIND, name)}']")


def _type(dash_duo, name, value):
    field = _param(dash_duo, name)
    dash_duo.clear_input(field)
    field.send_keys(str(value), Keys.TAB)   # inputs commit on blur


def _plot_traces(dash_duo) -> list[str]:
    return dash_duo.driver.execute_script(
        f"const g = document.querySelector('#{page.ids.GRAPH} .js-plotly-plot');"
        "return g && g.data ? g.data.map(t => t.name || '') : [];")


def test_small_libra_sweep_runs_with_progress_table_plot_and_csv(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/sweeps")
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "16 points", timeout=TIMEOUT)   # elastic-fig6 first
    dash_duo.find_element(f"#{page.ids.KIND} input[value='{KIND}']").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "40 points", timeout=TIMEOUT)
    assert "arrive more or less often" in dash_duo.find_element(f"#{page.ids.KIND_HINT}").text

    # A bad value is named by its label before anything runs.
    _type(dash_duo, "intervals", "0.02, soon")
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "Mean arrival intervals (s): 'soon' is not a number",
                                    timeout=TIMEOUT)
    _type(dash_duo, "intervals", "0.02, 0.1, 1")
    for name, value in (("width", 32), ("machines", 128), ("applications", 20)):
        _type(dash_duo, name, value)
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "24 points: 4 scheme(s) × 3 interval(s) × 2 seed(s)",
                                    timeout=TIMEOUT)

    dash_duo.find_element(f"#{page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.RUN_MSG}", "24 runs in", timeout=TIMEOUT)
    assert "local processes" in dash_duo.find_element(f"#{page.ids.RUN_MSG}").text
    dash_duo.wait_for_text_to_equal(f"#{page.ids.PROGRESS_TEXT}", "24 / 24 runs done", timeout=TIMEOUT)
    progress = dash_duo.find_element(f"#{page.ids.PROGRESS}")
    assert progress.get_attribute("value") == progress.get_attribute("max") == "24"

    dash_duo.wait_for_contains_text(f"#{page.ids.SUMMARY}", "Libra", timeout=TIMEOUT)
    rows = dash_duo.find_elements(f"#{page.ids.SUMMARY} tbody tr")
    assert len(rows) == 1 + 4 * 3   # header row + one row per scheme and interval
    assert "±" in dash_duo.find_element(f"#{page.ids.SUMMARY}").text
    dash_duo.wait_for_text_to_equal(f"#{page.ids.HEADING}", "Libra over arrival intervals: 24 points", timeout=TIMEOUT)
    deadline = time.monotonic() + TIMEOUT
    while not {"baseline", "drf", "hug", "libra"} <= set(_plot_traces(dash_duo)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert {"baseline", "drf", "hug", "libra"} <= set(_plot_traces(dash_duo))

    dash_duo.driver.set_window_size(1400, 1700)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    save_screenshot(dash_duo.driver, "screenshot-sweeps.png")

    dash_duo.find_element(f'[id=\'{{"table":"points","type":"{page.ids.EXPORT_BUTTONS}"}}\']').click()
    lines = downloaded(dash_duo, f"{KIND}-sweep.csv").read_text().splitlines()
    assert lines[0] == "point,scheme,interval_s,seed,mean_isolation,mean_duration_s,link_utilisation,mean_wait_s"
    assert len(lines) == 25 and lines[1].startswith("0,baseline,0.02,0,")

    # The same sweep again comes from the cache at once.
    dash_duo.find_element(f"#{page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.RUN_MSG}", "24 runs from cache", timeout=TIMEOUT)

    # The Workspace lists it; its link shows it on a browser that never ran it (nothing in its local storage).
    dash_duo.driver.execute_script("window.localStorage.clear()")
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/workspace")
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.SWEEPS}", "Libra over arrival intervals", timeout=TIMEOUT)
    href = dash_duo.find_element(f"#{workspace_page.ids.SWEEPS} a").get_attribute("href")
    assert "/sweeps?sweep=" in href
    dash_duo.driver.execute_script("window.localStorage.clear()")
    dash_duo.wait_for_page(url=href)
    dash_duo.wait_for_text_to_equal(f"#{page.ids.HEADING}", "Libra over arrival intervals: 24 points", timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{page.ids.RUN_MSG}").text == "Opened a stored sweep."
    assert dash_duo.get_logs() == []


def test_cancel_stops_the_sweep_and_its_processes(dash_duo, tmp_path):
    psutil = pytest.importorskip("psutil")
    # Processes this test process already had (another test's in this pytest worker, e.g. a chart export's
    # renderer) are not this sweep's.
    earlier = {child.pid for child in psutil.Process().children(recursive=True)}
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/sweeps")
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "16 points", timeout=TIMEOUT)   # the reduced Fig. 6 sweep
    dash_duo.find_element(f"#{page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PROGRESS_TEXT}", "/ 16 runs", timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{page.ids.RUN}").get_attribute("disabled") == "true"

    def simulations():
        """Python processes below the test still running (an exited one awaiting its parent's wait() is not)."""
        running = []
        for process in psutil.Process().children(recursive=True):
            try:
                if (process.pid not in earlier and process.name().startswith("python")
                        and process.status() != psutil.STATUS_ZOMBIE):
                    running.append(process)
            except psutil.NoSuchProcess:
                continue
        return running

    assert len(simulations()) >= 3   # the background job and its two pool workers
    dash_duo.find_element(f"#{page.ids.CANCEL}").click()
    dash_duo.wait_for_element(f"#{page.ids.RUN}:not([disabled])", timeout=TIMEOUT)

    deadline = time.monotonic() + 15
    while simulations() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert simulations() == []
    assert dash_duo.find_element(f"#{page.ids.RUN_MSG}").text == ""
    assert "16 / 16" not in dash_duo.find_element(f"#{page.ids.PROGRESS_TEXT}").text
    assert list((tmp_path / "sweeps").glob("*.json")) == []


def test_an_uploaded_log_is_calibrated_from_the_batch_pages_link(dash_duo, tmp_path):
    """Upload a log with recorded waits on the batch page, follow Calibrate, run it: the best setting, in words.
    A link to an upload the user has not got keeps the last results and says what it cannot use."""
    source = page.form.FORM["calibrate"][0].options[0]   # hpc2n-excerpt.swf: its header and first 300 jobs
    lines = (ROOT / "sample_traces" / source).read_text().splitlines()
    header = [line for line in lines if line.startswith(";")]
    log = tmp_path / "site-log.swf"
    log.write_text("\n".join(header + [line for line in lines if not line.startswith(";")][:300]) + "\n")
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", source, timeout=TIMEOUT)
    dash_duo.find_element(f"#{batch_page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(log))
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "site-log.swf", timeout=TIMEOUT)
    run_easy_basic(dash_duo, TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.LOG_HEADLINE}", "vs your log's", timeout=TIMEOUT)
    calibrate = dash_duo.find_element(f"#{batch_page.ids.CALIBRATE}")
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: calibrate.is_displayed())
    assert "trace=upload%3A" in calibrate.get_attribute("href")
    calibrate.click()

    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "32 points", timeout=TIMEOUT)   # limits from the log
    assert dash_duo.find_element(f"#{page.ids.KIND} input[value='calibrate']").is_selected()
    dash_duo.wait_for_contains_text(f"[id='{_param_id('calibrate', 'trace')}']", "site-log.swf (uploaded",
                                    timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{page.ids.LINK_MSG}").text == ""
    dash_duo.wait_for_contains_text(f"#{page.ids.POINTS}", "32 points", timeout=TIMEOUT)   # of the upload, not HPC2N's
    assert "Limits from the log (running jobs/CPUs per user): none, 2/" in dash_duo.find_element(
        f"#{page.ids.POINTS}").text
    dash_duo.find_element(f"#{page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.RUN_MSG}", "32 runs in", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.VERDICT}", "site-log.swf (294 jobs compared), EASY: Best: ",
                                    timeout=TIMEOUT)
    verdict = dash_duo.find_element(f"#{page.ids.VERDICT}").text
    assert "vs the log's" in verdict and "off by" in verdict and "Spearman" in verdict
    assert len(dash_duo.find_elements(f"#{page.ids.SUMMARY} tbody tr")) == 1 + 32
    dash_duo.wait_for_element(f"#{page.ids.GRAPH} .bars", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1400, 1500)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.POINTS}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "screenshot-sweeps-calibrate-upload.png")

    # Somebody else's upload (or one never stored): the default sample, a message, the last results kept.
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/sweeps?kind=calibrate&trace=upload%3A{'0' * 64}")
    dash_duo.wait_for_contains_text(f"#{page.ids.LINK_MSG}", "is none of your uploaded traces, or is no longer "
                                                             "stored", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"[id='{_param_id('calibrate', 'trace')}']", source, timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.VERDICT}", "site-log.swf", timeout=TIMEOUT)
    assert dash_duo.get_logs() == []
