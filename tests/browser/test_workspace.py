"""Workspace and permalinks in headless Chromium: save, restart the server, reopen, what-if, bad upload."""

import json

import pytest

from app import create_app
from components.pages import scenario as scenario_page
from components.pages import workspace as workspace_page
from components.services.workspace import permalink
from sched_engine import normalize_scenario
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120
SCENARIO = {"engine": "batch", "policy": "easy", "seed": 1, "name": "two-cluster test",
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 300},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


def _upload(dash_duo, path):
    dash_duo.find_element(f"#{workspace_page.ids.SCENARIO_UPLOAD} input[type=file]").send_keys(str(path))


def test_save_restart_reopen_by_permalink_and_what_if(dash_duo, tmp_path):
    data = tmp_path / "data"
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/workspace")
    bad = tmp_path / "bad.json"
    bad.write_text('{"engine": "batch",\n "policy": "easy",\n "model": {"trace": {"path": 7}}\n')
    _upload(dash_duo, bad)
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.UPLOAD_MSG}", "Not saved", timeout=TIMEOUT)
    assert "bad.json" in dash_duo.find_element(f"#{workspace_page.ids.UPLOAD_MSG}").text

    good = tmp_path / "good.json"
    good.write_text(json.dumps(SCENARIO))
    _upload(dash_duo, good)
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.UPLOAD_MSG}", "Saved two-cluster test", timeout=TIMEOUT)
    scenario_hash = normalize_scenario(SCENARIO).content_hash()

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{permalink(scenario_hash)}")
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "Not run yet", timeout=TIMEOUT)
    dash_duo.find_element(f"#{scenario_page.ids.RUN}").click()
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "from the cache", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.SUMMARY}", "Mean slowdown", timeout=TIMEOUT)
    before = dash_duo.find_element(f"#{scenario_page.ids.SUMMARY}").text

    # Restart: a new server process state on the same data directory.
    dash_duo.server.stop()
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/?scenario={scenario_hash}")
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "from the cache", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.SUMMARY}", "Mean slowdown", timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{scenario_page.ids.SUMMARY}").text == before
    assert "Saved as\ntwo-cluster test" in dash_duo.find_element(f"#{scenario_page.ids.META}").text

    dash_duo.select_dcc_dropdown(f"#{scenario_page.ids.WHATIF_POLICY}", value="Conservative")
    dash_duo.find_element(f"#{scenario_page.ids.WHATIF_RUN}").click()
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.WHATIF_TABLE}", "Δ% what-if", timeout=TIMEOUT)
    assert "/scenario/" in dash_duo.find_element(f"#{scenario_page.ids.WHATIF_MSG}").text
    dash_duo.driver.set_window_size(1400, 1500)
    save_screenshot(dash_duo.driver, "screenshot-scenario.png")

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/workspace")
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.SCENARIOS}", "two-cluster test", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.RUNS}", "what if cons", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1400, 1300)
    save_screenshot(dash_duo.driver, "screenshot-workspace.png")
    assert dash_duo.get_logs() == []
