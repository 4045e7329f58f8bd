"""A prepared download that the disk refused says so beside the button that asked for it (Compare, Sweeps)."""

import errno
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from app import create_app
from clicks import click_when_clear
from components.pages import compare as compare_page
from components.pages import sweeps as sweeps_page
from components.pages.sweeps.store import SweepStore
from components.services import prepared
from components.services.runs import ResultCache
from sched_engine.sweeps.registry import normalize_spec
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120

# The message's box and the button's: the message must start within a few pixels right of the button, on its line.
_BESIDE = """
const button = arguments[0].getBoundingClientRect(), message = arguments[1].getBoundingClientRect();
return {gap: message.left - button.right, top: message.top - button.top, bottom: message.bottom - button.bottom,
        overlapsRow: message.top < button.bottom && message.bottom > button.top};
"""


def _disk_full_for_prepared(monkeypatch):
    real = Path.write_bytes

    def full(path, data):
        if path.name.endswith(".tmp") and "prepared" in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)
    monkeypatch.setattr(Path, "write_bytes", full)


def _assert_beside(dash_duo, button_selector: str, link_id: str, text: str) -> None:
    message = f"#{prepared.message_id(link_id)}"
    dash_duo.wait_for_contains_text(message, text, timeout=TIMEOUT)
    where = dash_duo.driver.execute_script(_BESIDE, dash_duo.find_element(button_selector),
                                           dash_duo.find_element(message))
    assert where["overlapsRow"] and 0 <= where["gap"] <= 24, where
    # Nothing else on the page says it: the message is the one beside the button.
    assert dash_duo.find_element("body").text.count("was not saved") == 1


@pytest.mark.parametrize("width", [1024, 1440])
def test_compare_report_not_saved_is_said_beside_its_button(dash_duo, tmp_path, monkeypatch, width):
    cache = ResultCache(tmp_path / "results")
    model = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 100}}
    cache.run({"engine": "batch", "policy": "easy", "seed": 1, "model": model, "name": "mine"})
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(width, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element(f"#{compare_page.ids.RUNS}", timeout=TIMEOUT).click()
    dash_duo.wait_for_element("[role=option]", timeout=TIMEOUT).click()
    ActionChains(dash_duo.driver).send_keys(Keys.ESCAPE).perform()
    dash_duo.find_element("h2").click()
    dash_duo.wait_for_contains_text(f"#{compare_page.ids.TABLE}", "Mean wait", timeout=TIMEOUT)
    _disk_full_for_prepared(monkeypatch)
    click_when_clear(dash_duo, f"#{compare_page.ids.EXPORT_REPORT}")
    _assert_beside(dash_duo, f"#{compare_page.ids.EXPORT_REPORT}", compare_page.ids.REPORT_LINK,
                   "comparison-report.html was not saved")
    dash_duo.driver.execute_script(f"document.getElementById('{compare_page.ids.EXPORT_REPORT}')"
                                   ".scrollIntoView({block: 'center'})")
    save_screenshot(dash_duo.driver, f"first-ten-compare-not-saved-{width}.png")
    assert dash_duo.get_logs() == []


@pytest.mark.parametrize("width", [1024, 1440])
def test_sweep_csv_not_saved_is_said_beside_its_buttons(dash_duo, tmp_path, monkeypatch, width):
    # A small stored sweep (one scheme, one interval, 4 applications), opened by its Workspace link.
    spec = normalize_spec({"kind": "libra-intervals", "schemes": ["drf"], "intervals": [1.0], "width": 4,
                           "machines": 8, "applications": 4, "seeds": 1})
    key, _, _ = SweepStore(tmp_path / "sweeps").run(spec, None)
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(width, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/sweeps?sweep={key}")
    dash_duo.wait_for_contains_text(f"#{sweeps_page.ids.HEADING}", "1 point", timeout=TIMEOUT)
    _disk_full_for_prepared(monkeypatch)
    summary = f'[id=\'{{"table":"summary","type":"{sweeps_page.ids.EXPORT_BUTTONS}"}}\']'
    click_when_clear(dash_duo, summary)
    _assert_beside(dash_duo, summary, sweeps_page.ids.DOWNLOAD, "was not saved")
    dash_duo.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", dash_duo.find_element(summary))
    save_screenshot(dash_duo.driver, f"first-ten-sweeps-not-saved-{width}.png")
    assert dash_duo.get_logs() == []
