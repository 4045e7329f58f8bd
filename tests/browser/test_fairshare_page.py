"""The fair-sharing page in headless Chromium (dash_duo)."""

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from clicks import show_inputs
from components.pages import fairshare as page

pytestmark = pytest.mark.browser
TIMEOUT = 60


def _start(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/fairshare")
    dash_duo.wait_for_element(f"#{page.ids.PRESET}", timeout=TIMEOUT)


def _run(dash_duo, expect):
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", expect, timeout=TIMEOUT)


def _paper_cells(dash_duo):
    table = dash_duo.find_element(f"#{page.ids.PAPER}")
    rows = table.find_elements(By.CSS_SELECTOR, "tr")
    header = [c.text for c in rows[0].find_elements(By.CSS_SELECTOR, "th")]
    return [dict(zip(header, [c.text for c in r.find_elements(By.CSS_SELECTOR, "td")])) for r in rows[1:]]


def _trace_count(dash_duo):
    return dash_duo.driver.execute_script(
        f"return document.getElementById('{page.ids.SHARES}').querySelector('.js-plotly-plot').data.length"
    )


def test_fig4_preset_runs_and_shows_the_papers_plateaus(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET}").click()
    _run(dash_duo, "4 run(s): 4 simulated")
    dash_duo.wait_for_contains_text(f"#{page.ids.PAPER}", "n31", timeout=TIMEOUT)
    cells = _paper_cells(dash_duo)
    expected = {"n11": 0.333, "n12": 0.5, "n21": 0.167, "n22": 0.167, "n23": 0.5, "n31": 0.333}
    weights = {"n11": 1, "n12": 1, "n21": 0.5, "n22": 0.5, "n23": 1, "n31": 1}
    for row in cells:
        leaf = row["leaf"]
        assert float(row["MCH"]) == pytest.approx(expected[leaf], abs=0.01)
        assert float(row["H-DRF"]) == pytest.approx(expected[leaf], abs=0.01)
        assert float(row["our MCH weight"]) == pytest.approx(weights[leaf])
    assert float(next(r for r in cells if r["leaf"] == "n23")["MCH at 900 s"]) == pytest.approx(1.0)
    assert _trace_count(dash_duo) == 4 * 6
    dash_duo.driver.save_screenshot(str(tmp_path / "fairshare-fig4.png"))


def test_second_identical_run_comes_from_the_cache(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    _run(dash_duo, "2 run(s): 2 simulated")
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}:not([disabled])", timeout=TIMEOUT)
    _run(dash_duo, "2 run(s): 0 simulated, 2 from the cache")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "cached", timeout=TIMEOUT)


def test_adding_a_job_in_the_tree_editor_shows_up_after_a_rerun(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.wait_for_element(f"#{page.ids.TREE} canvas", timeout=TIMEOUT)
    dash_duo.driver.execute_script(
        f"document.getElementById('{page.ids.TREE}')._cyreg.cy.$id('dev').emit('tap')"
    )
    dash_duo.wait_for_contains_text(f"#{page.ids.FORM_TITLE}", "Department dev", timeout=TIMEOUT)
    dash_duo.find_element(f"#{page.ids.ADD_JOB}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.FORM_TITLE}", "Job job1", timeout=TIMEOUT)
    tasks = dash_duo.find_element(f"#{page.ids.TASKS}")
    tasks.clear()
    tasks.send_keys("50")
    dash_duo.find_element(f"#{page.ids.APPLY}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.TREE_MSG}", "Applied", timeout=TIMEOUT)
    _run(dash_duo, "2 run(s)")
    # The charts follow the run message (another callback, on the new runs): wait for them.
    dash_duo.wait_for_element(f"#{page.ids.SHARES} .js-plotly-plot", timeout=TIMEOUT)
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda driver: "job1" in driver.execute_script(
        f"return (document.querySelector('#{page.ids.SHARES} .js-plotly-plot').data || []).map(t => t.name)"),
        "job1 never appeared in the shares chart")


def test_invalid_capacity_is_explained_and_keeps_earlier_results(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    _run(dash_duo, "2 run(s)")
    show_inputs(dash_duo, page.ids.PANEL)   # folded away after the run
    cell = dash_duo.find_element(f"#{page.ids.CAPACITY} td[data-dash-column='capacity']")
    cell.click()
    ActionChains(dash_duo.driver).send_keys("-5", Keys.ENTER).perform()
    dash_duo.wait_for_contains_text(f"#{page.ids.CAPACITY_MSG}", "resources[0].capacity: must be greater than 0",
                                    timeout=TIMEOUT)
    assert _trace_count(dash_duo) > 0
    assert "2 run(s)" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
