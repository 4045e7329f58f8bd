"""A prepared download that the disk refused says so beside the button that asked for it (Compare, Sweeps).

On the way, Compare's overlay draws one legend entry per line one can see (two runs with the same line are one
entry named by both), and a chart's mode bar shows only while the pointer is on it, never over a title at rest.
"""

import errno
from pathlib import Path

import pytest
from dash.testing.wait import until
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


# Each chart's mode bar: how opaque it is and whether it lies over one of the chart's titles or legend entries.
_MODE_BARS = """
return [...document.querySelectorAll('.js-plotly-plot')].filter(plot => plot.querySelector('.modebar')).map(plot => {
  const bar = plot.querySelector('.modebar'), b = bar.getBoundingClientRect();
  const over = [...plot.querySelectorAll('.gtitle, .legend text')].map(t => t.getBoundingClientRect())
    .some(r => r.width > 0 && r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom);
  return {id: plot.parentElement.id, opacity: parseFloat(getComputedStyle(bar).opacity), over: over};
});
"""

_OVERLAY_LEGEND = """
const plot = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
return [...plot.querySelectorAll('.legend .traces .legendtext')].map(t => t.textContent);
"""


_HEIGHTS = "return arguments[0].reduce((sum, id) => sum + document.getElementById(id).getBoundingClientRect().height, 0);"


def _choose(dash_duo, words: str) -> None:
    """Pick the run whose label holds ``words`` in Compare's run picker."""
    dash_duo.find_element(f"#{compare_page.ids.RUNS}").click()
    until(lambda: [o for o in dash_duo.find_elements("[role=option]") if words in o.text], timeout=TIMEOUT)[0].click()
    ActionChains(dash_duo.driver).send_keys(Keys.ESCAPE).perform()
    dash_duo.find_element("h2").click()


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
    for seed in (1, 2):   # nothing random in this run: two seeds, the same line twice
        cache.run({"engine": "batch", "policy": "easy", "seed": seed, "model": model, "name": "mine"})
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(width, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element(f"#{compare_page.ids.RUNS}", timeout=TIMEOUT)
    # Nothing chosen yet: the job-by-job sentence once, its charts small and silent, no lone table header.
    dash_duo.wait_for_contains_text(f"#{compare_page.ids.PAIRED_TEXT}", "Pick two runs", timeout=TIMEOUT)
    until(lambda: dash_duo.driver.execute_script(_HEIGHTS, [compare_page.ids.PAIRED_HISTOGRAM,
                                                            compare_page.ids.PAIRED_USERS]) <= 2 * 40, timeout=TIMEOUT)
    assert not dash_duo.find_elements(f"#{compare_page.ids.TABLE} th")
    for words in ("seed 1 ", "seed 2 "):
        _choose(dash_duo, words)
    dash_duo.wait_for_contains_text(f"#{compare_page.ids.TABLE}", "Mean wait", timeout=TIMEOUT)
    # One legend entry per line one can see: the two runs' one line is one entry, named by both.
    until(lambda: dash_duo.driver.execute_script(_OVERLAY_LEGEND, compare_page.ids.OVERLAY) == ["#1 easy = #2 easy"],
          timeout=TIMEOUT)
    # The timeline metric is chosen by its catalogue name, not its key.
    dash_duo.wait_for_contains_text(f"#{compare_page.ids.METRIC}", "CPUs in use", timeout=TIMEOUT)
    # At rest no mode bar shows, so none lies over a title; the pointer on a chart shows that chart's, clear of its title.
    ActionChains(dash_duo.driver).move_to_element(dash_duo.find_element("h2")).perform()
    until(lambda: all(bar["opacity"] == 0 for bar in dash_duo.driver.execute_script(_MODE_BARS)), timeout=TIMEOUT)
    overlay = dash_duo.find_element(f"#{compare_page.ids.OVERLAY}")
    ActionChains(dash_duo.driver).move_to_element(overlay).perform()
    until(lambda: {bar["id"]: bar for bar in dash_duo.driver.execute_script(_MODE_BARS)}[compare_page.ids.OVERLAY]
          == {"id": compare_page.ids.OVERLAY, "opacity": 1, "over": False}, timeout=TIMEOUT)
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
