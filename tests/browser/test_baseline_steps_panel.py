"""The Batch page's baseline steps in headless Chromium: ask for the steps of the shown run, see the table and the
sentence."""

from pathlib import Path

import pytest
from batch_choices import run_easy_basic

from app import create_app
from components.pages import batch as page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 180
STEPS = page.trust.STEPS_IDS
ROOT = Path(__file__).resolve().parents[2]


def test_the_gap_is_explained_step_by_step_for_the_shown_run(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    # The sample's first 1,500 jobs, uploaded: a run on the header's machine (one cluster of 240 CPUs), whose
    # steps take seconds (on the page's 14 clusters each step's EASY is a Python-kernel run of about 15 s).
    lines = (ROOT / "sample_traces" / "hpc2n-excerpt.swf").read_text().splitlines(keepends=True)
    header = [line for line in lines if line.startswith(";")]
    trace = tmp_path / "hpc2n-1500.swf"
    trace.write_text("".join(header + [line for line in lines if not line.startswith(";")][:1500]))
    dash_duo.find_element(f"#{page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(trace))
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "from the trace header of hpc2n-1500.swf", timeout=TIMEOUT)
    run_easy_basic(dash_duo, TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.LOG_HEADLINE}", "vs your log's", timeout=TIMEOUT)
    # The sample records its waits: Explain runs the six steps from the run shown, in the background.
    dash_duo.find_element(f"#{STEPS.capacity} input[value='log_p999']").click()
    button = dash_duo.find_element(f"#{STEPS.run}")
    dash_duo.driver.execute_script("arguments[0].scrollIntoView()", button)
    button.click()
    dash_duo.wait_for_contains_text(f"#{STEPS.sentence}", "left unexplained", timeout=TIMEOUT)
    sentence = dash_duo.find_element(f"#{STEPS.sentence}").text
    assert sentence.startswith("On the hardware the simulated mean wait is")
    assert "the step that moved it most is" in sentence and "Baseline: BASIC · EASY · seed 1 on " in sentence
    rows = dash_duo.find_elements(f"#{STEPS.table} tbody tr")
    cells = [[cell.text for cell in row.find_elements("css selector", "td")] for row in rows]
    cells = [row for row in cells if row]     # the header row has no data cells
    assert [row[0] for row in cells] == [
        "On the hardware", "On the capacity the log used", "With the log's queues",
        "With each user's limits found in the log", "With the down times found in the log",
        "With the users' estimates"]
    assert all(row[1].endswith(" s") and row[3] not in ("", "–") for row in cells), cells
    assert "99.9th percentile" in cells[1][5] or "the same machine" in cells[1][5]
    dash_duo.wait_for_element(f"#{STEPS.graph} .bars", timeout=TIMEOUT)
    assert "runs:" in dash_duo.find_element(f"#{STEPS.message}").text
    assert dash_duo.find_element(f"#{STEPS.status}").text == ""     # the bar is idle again
    # The table stays within the panel (its long settings wrap).
    table_right, panel_right = dash_duo.driver.execute_script(
        "const t = document.getElementById(arguments[0]).querySelector('table').getBoundingClientRect();"
        "const p = document.getElementById(arguments[0]).closest('section').getBoundingClientRect();"
        "return [t.right, p.right];", STEPS.table)
    assert table_right <= panel_right
    dash_duo.driver.execute_script(f"document.getElementById('{STEPS.sentence}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "screenshot-batch-baseline-steps.png")
