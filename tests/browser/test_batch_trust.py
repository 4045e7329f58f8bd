"""The Batch page's trust panels in headless Chromium: the log vs the simulation, why jobs waited, sizing."""

import re

import pytest
from batch_choices import run_easy_basic
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from zoom import zoom_until_shown

from app import create_app
from components.pages import batch as page
from downloads import downloaded
from sched_engine import sweeps
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120


def test_a_run_is_checked_against_the_log_and_a_job_says_why_it_waited(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    run_easy_basic(dash_duo, TIMEOUT)
    # The HPC2N excerpt records its waits: the panel says how far the run is from them, relative to which run.
    dash_duo.wait_for_contains_text(f"#{page.ids.LOG_HEADLINE}", "vs your log's", timeout=TIMEOUT)
    assert "of jobs within 10 minutes" in dash_duo.find_element(f"#{page.ids.LOG_HEADLINE}").text
    assert dash_duo.find_element(f"#{page.ids.LOG_BASELINE}").text.startswith("Baseline: BASIC · EASY · seed 1")
    # Calibrate opens the Sweeps page on the shown trace, when this build has the sweep kind.
    calibrate = dash_duo.find_element(f"#{page.ids.CALIBRATE}")
    if page.trust.CALIBRATE in sweeps.KINDS:
        WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: calibrate.is_displayed())
        assert calibrate.get_attribute("href").endswith("/sweeps?kind=calibrate&trace=sample%3Ahpc2n-excerpt.swf")
    else:
        assert not calibrate.is_displayed()
    dash_duo.wait_for_element(f"#{page.ids.LOG_TIMELINE} .scatterlayer .trace", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.LOG_BREAKDOWN} .bars", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.WHY_WAITED} .scatterlayer .trace", timeout=TIMEOUT)
    legend = dash_duo.find_element(f"#{page.ids.WHY_WAITED} .legend").text
    dash_duo.wait_for_element(f"#{page.ids.WHY_BY_GROUP} .bars", timeout=TIMEOUT)   # and per group, beside it
    assert "resources" in legend
    # A job that waited: its reasons over time, and the job blocking it as a link that shows that job's.
    names = dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.WHY_WAITED} .js-plotly-plot').data.map(t => t.name);")
    assert set(names) <= {"resources", "reservation", "priority", "failure", "requirements"}
    # The longest waits are offered as links; one shows that job's reasons, and its blocking jobs as links.
    dash_duo.wait_for_element(f"#{page.ids.BLOCKING_LINKS} button", timeout=TIMEOUT)
    first = dash_duo.find_elements(f"#{page.ids.BLOCKING_LINKS} button")[0]
    longest = first.text.removeprefix("job ")
    first.click()
    dash_duo.wait_for_contains_text(f"#{page.ids.JOB_REASONS}", f"Job {longest}: why it waited", timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{page.ids.JOB_CHOICE}").get_attribute("value") == longest
    dash_duo.driver.set_window_size(1600, 2400)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.LOG_HEADLINE}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "screenshot-batch-trust.png")
    # Typing a job id shows that job.
    job = dash_duo.find_element(f"#{page.ids.JOB_CHOICE}")
    job.send_keys(Keys.CONTROL, "a")
    job.send_keys("600", Keys.ENTER)
    dash_duo.wait_for_contains_text(f"#{page.ids.JOB_REASONS}", "600", timeout=TIMEOUT)
    # pending.csv of the run shown comes from the download route, as a file.
    dash_duo.find_element(f'[id=\'{{"frame":"pending","type":"{page.ids.FRAME_LINKS}"}}\']').click()
    pending = downloaded(dash_duo, "batch-BASIC-easy-pending.csv").read_text().splitlines()
    assert pending[0] == "job_id,from_time,to_time,reason,blocking_job" and len(pending) > 10
    assert {row.split(",")[3] for row in pending[1:]} <= {"resources", "reservation", "priority", "failure",
                                                          "requirements"}
    # A reason's tooltip names a blocking job only where there is one (never "blocking job" and nothing).
    tips = dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.JOB_REASONS} .js-plotly-plot').data"
        ".map(t => [t.hovertemplate, t.customdata.map(c => c[2])]);")
    assert all("blocking job" not in template for template, _ in tips), tips
    assert all(cell == "" or re.fullmatch(r"<br>blocking job \S+", cell) for _, cells in tips for cell in cells), tips
    # Zoomed in to two hours, the machines × time chart draws each job, coloured by its user, every bar outlined.
    zoom_until_shown(dash_duo, page.ids.QUEUE, 100, 102, f"#{page.ids.WINDOW_MSG}", "window 100.0–102.0 h")
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.execute_script(
        f"return document.querySelector('#{page.ids.GANTT} .js-plotly-plot').data.some(t => t.name === 'finished');"))
    finished = dash_duo.driver.execute_script(
        f"const t = document.querySelector('#{page.ids.GANTT} .js-plotly-plot').data.find(t => t.name === 'finished');"
        "return [new Set(t.marker.color).size, t.marker.line.width];")
    assert finished[0] > 1 and finished[1] > 0, finished
    assert "colour: user" in dash_duo.find_element(f"#{page.ids.GANTT}").text
    _size_the_shown_run(dash_duo)
    assert dash_duo.get_logs() == []


def _size_the_shown_run(dash_duo):
    """How much hardware a mean wait of 10 minutes needs: the probes are drawn while the search runs."""
    bound = dash_duo.find_element(f"#{page.ids.SIZE_BOUND}")
    bound.send_keys(Keys.CONTROL, "a")
    bound.send_keys("600")
    graph = f"document.querySelector('#{page.ids.SIZE_GRAPH} .js-plotly-plot')"

    def probes_drawn_while_running():
        return WebDriverWait(dash_duo.driver, TIMEOUT, poll_frequency=0.1).until(lambda driver: (
            driver.execute_script(f"const g = {graph}; return g && g.layout.title && g.layout.title.text.includes("
                                  "'searching') ? g.data[0].x.length : 0;")))

    # Cancelled after its first probe: the Size button comes back, the chart leaves the running search.
    dash_duo.find_element(f"#{page.ids.SIZE_RUN}").click()
    assert probes_drawn_while_running() >= 1
    dash_duo.find_element(f"#{page.ids.SIZE_CANCEL}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.SIZE_MESSAGE}", "Cancelled", timeout=TIMEOUT)
    WebDriverWait(dash_duo.driver, TIMEOUT).until(
        lambda _: dash_duo.find_element(f"#{page.ids.SIZE_RUN}").get_attribute("disabled") is None)
    assert "press Size" in dash_duo.find_element(f"#{page.ids.SIZE_GRAPH}").text
    # Run to the end: the probes of the cancelled search come from the cache.
    dash_duo.find_element(f"#{page.ids.SIZE_RUN}").click()
    assert probes_drawn_while_running() >= 1
    assert dash_duo.find_element(f"#{page.ids.SIZE_RUN}").get_attribute("disabled") == "true"
    dash_duo.wait_for_contains_text(f"#{page.ids.SIZE_SENTENCE}", "A mean wait ≤ 600 s needs", timeout=TIMEOUT)
    sentence = dash_duo.find_element(f"#{page.ids.SIZE_SENTENCE}").text
    assert "(today 806)" in sentence   # the MetaCentrum clusters the page opens with
    # The answer names its own baseline, so it is never read against another run shown above it.
    assert "Baseline: BASIC · EASY · seed 1 on 14 clusters, 806 CPUs" in sentence, sentence
    message = dash_duo.find_element(f"#{page.ids.SIZE_MESSAGE}").text
    assert "probes:" in message and " 0 from the cache" not in message
    names = dash_duo.driver.execute_script(f"return {graph}.data.map(t => t.name);")
    assert names[0] == "probes" and any(name.startswith("answer: ") for name in names)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.SIZE_SENTENCE}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "screenshot-batch-sizing.png")
    dash_duo.find_element(f"#{page.ids.SIZE_CSV}").click()
    rows = downloaded(dash_duo, "sizing.csv").read_text().splitlines()
    assert rows[0] == "size,mean_wait_s,holds,non_monotone"
    assert len(rows) - 1 == len(dash_duo.driver.execute_script(f"return {graph}.data[0].x;"))
