"""Sharing with a login, in headless Chromium: two users of a ``SCHEDSCOPE_USERS`` file; ada saves two scenarios on
the Workspace page and shares one with grace on its Sharing panel; grace, signed in after ada signed out, sees that
one, not the other, and the scenario made before the login was turned on, marked so."""

import json

import pytest
from werkzeug.security import generate_password_hash

from app import create_app
from components.pages import workspace as workspace_page
from components.pages.workspace.lists import BEFORE_SIGN_IN
from components.services.workspace import ScenarioStore
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 90
PASSWORDS = {"ada": "lovelace-1843", "grace": "hopper-1952"}


def scenario(name: str, seed: int) -> dict:
    return {"engine": "batch", "policy": "easy", "seed": seed, "name": name,
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 50},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


def sign_in(dash_duo, name: str) -> None:
    dash_duo.driver.get(f"{dash_duo.server.url}/logout")          # whoever was signed in: signed out
    dash_duo.driver.get(f"{dash_duo.server.url}/login")           # (not /login?next=/logout)
    dash_duo.wait_for_element("input[name=name]", timeout=TIMEOUT).send_keys(name)
    dash_duo.find_element("input[name=password]").send_keys(PASSWORDS[name])
    dash_duo.find_element("button[type=submit]").click()
    dash_duo.wait_for_element("#react-entry-point", timeout=TIMEOUT)
    dash_duo.wait_for_page(url=f"{dash_duo.server.url}/workspace")


def upload_scenario(dash_duo, path, name: str) -> None:
    dash_duo.find_element(f"#{workspace_page.ids.SCENARIO_UPLOAD} input[type=file]").send_keys(str(path))
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.UPLOAD_MSG}", f"Saved {name}", timeout=TIMEOUT)


def test_a_scenario_shared_on_the_sharing_panel_is_seen_by_that_user_alone(dash_duo, tmp_path, monkeypatch):
    users = tmp_path / "users"
    users.write_text("".join(f"{n}:{generate_password_hash(p)}\n" for n, p in PASSWORDS.items()))
    monkeypatch.setenv("SCHEDSCOPE_USERS", str(users))
    monkeypatch.delenv("SCHEDSCOPE_USER_HEADER", raising=False)
    data = tmp_path / "data"
    ScenarioStore(data / "scenarios").save(scenario("yesterday's study", 1), "yesterday's study")   # no login then
    dash_duo.start_server(create_app(data), navigate=False)   # its first page is /login, not the app

    sign_in(dash_duo, "ada")
    for name, seed in (("study for grace", 2), ("ada's own study", 3)):
        path = tmp_path / f"{seed}.json"
        path.write_text(json.dumps(scenario(name, seed)))
        upload_scenario(dash_duo, path, name)
    scenarios = f"#{workspace_page.ids.SCENARIOS}"
    dash_duo.wait_for_contains_text(scenarios, "ada's own study", timeout=TIMEOUT)
    assert f"yesterday's study{BEFORE_SIGN_IN}" in dash_duo.find_element(scenarios).text
    dash_duo.select_dcc_dropdown(f"#{workspace_page.ids.SHARE_ITEM}", value="Scenario · study for grace")
    dash_duo.find_element(f"#{workspace_page.ids.SHARE_WITH}").send_keys("grace")
    dash_duo.find_element(f"#{workspace_page.ids.SHARE}").click()
    dash_duo.wait_for_text_to_equal(f"#{workspace_page.ids.SHARE_MSG}", "Shared with grace.", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.SHARED}", "Scenario · study for grace: shared with grace",
                                    timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1400, 1300)
    save_screenshot(dash_duo.driver, "screenshot-sharing-ada.png")

    sign_in(dash_duo, "grace")
    dash_duo.wait_for_contains_text(scenarios, "study for grace", timeout=TIMEOUT)
    shown = dash_duo.find_element(scenarios).text
    assert "ada's own study" not in shown and f"yesterday's study{BEFORE_SIGN_IN}" in shown
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.SHARED}", "Nothing of yours is shared", timeout=TIMEOUT)
    save_screenshot(dash_duo.driver, "screenshot-sharing-grace.png")
    assert dash_duo.get_logs() == []
