"""The batch page in headless Chromium (dash_duo): preset run, linked charts, upload errors."""

import base64
from pathlib import Path

import pytest

from app import create_app
from components import batch_page as page

pytestmark = pytest.mark.browser
TIMEOUT = 120
DOCS = Path(__file__).resolve().parents[2] / "docs"


def _start(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_element(f"#{page.PRESET_COMPLETE}", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)


def _upload(dash_duo, component_id, path):
    field = dash_duo.find_element(f"#{component_id} input[type=file]")
    field.send_keys(str(path))


def test_preset_matrix_runs_and_charts_link(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.PRESET_COMPLETE}").click()
    dash_duo.find_element(f"#{page.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{page.RUN_MSG}", "run(s)", timeout=TIMEOUT)
    # 4 scenarios x (FCFS, EASY, CONS once + LS over 3 seeds) = 24 runs with synthetic requirements seeded
    assert "simulated" in dash_duo.find_element(f"#{page.RUN_MSG}").text
    dash_duo.wait_for_contains_text(f"#{page.SUMMARY}", "EXT-ALL", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.OBJECTIVES} .bars", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.GANTT} .bars", timeout=TIMEOUT)
    DOCS.mkdir(exist_ok=True)
    dash_duo.driver.set_window_size(1600, 3900)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    dash_duo.driver.save_screenshot(str(DOCS / "screenshot-batch.png"))
    assert dash_duo.get_logs() == []
