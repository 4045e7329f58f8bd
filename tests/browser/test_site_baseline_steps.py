"""The Site study page's baseline steps in headless Chromium: the Batch page's widget on an EASY batch replay of the
site's trace and clusters."""

import pytest
from selenium.webdriver.common.keys import Keys

from app import create_app
from clicks import click_when_clear
from components.pages import site as page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 240
STEPS = page.steps.STEPS_IDS


def test_the_site_pages_log_is_explained_step_by_step(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    jobs = dash_duo.find_element(f"#{page.ids.MAX_JOBS}")
    jobs.send_keys(Keys.CONTROL, "a")
    jobs.send_keys("400", Keys.ENTER)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "first 400 jobs", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "240 CPUs", timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "run(s)", timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{STEPS.run}")
    dash_duo.wait_for_contains_text(f"#{STEPS.sentence}", "left unexplained", timeout=TIMEOUT)
    sentence = dash_duo.find_element(f"#{STEPS.sentence}").text
    assert sentence.startswith("On the hardware the simulated mean wait is")
    assert "Baseline: an EASY batch replay of this site's trace and clusters" in sentence
    rows = [row for row in dash_duo.find_elements(f"#{STEPS.table} tbody tr") if row.find_elements("css selector", "td")]
    assert len(rows) == 6
    dash_duo.wait_for_element(f"#{STEPS.graph} .bars", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1280, 1400)
    dash_duo.driver.execute_script(f"document.getElementById('{STEPS.sentence}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "screenshot-site-baseline-steps.png")
