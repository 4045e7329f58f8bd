"""Compare: window resizes while a seeds run goes on never let the overlay chart cover the Seeds box or its buttons."""

import pytest
from dash.testing.wait import until
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from app import create_app
from components.pages import compare as page
from components.services.runs import ResultCache
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120

# The overlay's box and what the Seeds box holds, each with the element drawn at its centre.
_GEOMETRY = """
const rect = r => ({left: r.left + scrollX, top: r.top + scrollY, right: r.right + scrollX,
                    bottom: r.bottom + scrollY});   // page coordinates: the same whatever is scrolled meanwhile
const svgs = [...document.querySelectorAll('#' + arguments[0] + ' svg.main-svg')]
  .map(s => rect(s.getBoundingClientRect()));
const overlay = rect(document.getElementById(arguments[0]).getBoundingClientRect());
const parts = {};
for (const id of arguments[1]) {
  const element = document.getElementById(id);
  element.scrollIntoView({block: 'center'});
  const r = element.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  parts[id] = {rect: rect(r), clear: top !== null && (top === element || element.contains(top))};
}
return {overlay: overlay, svgs: svgs, parts: parts};
"""


def _intersect(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def _assert_apart(dash_duo, when: str) -> None:
    parts = (page.ids.SEEDS_BOX, page.ids.SEEDS_COUNT, page.ids.SEEDS_RUN, page.ids.SEEDS_CANCEL)
    geometry = dash_duo.driver.execute_script(_GEOMETRY, page.ids.OVERLAY, list(parts))
    overlay = geometry["overlay"]
    for name, part in geometry["parts"].items():
        assert part["clear"], (when, name, geometry)
        assert not _intersect(overlay, part["rect"]), (when, name, geometry)
        # What plotly draws stays inside the overlay's box (in the page's coordinates of the same moment).
        for svg in geometry["svgs"]:
            assert svg["bottom"] <= overlay["bottom"] + 0.5, (when, geometry)


def test_resizing_during_a_seeds_run_never_lets_the_overlay_cover_the_seeds_box(dash_duo, tmp_path):
    cache = ResultCache(tmp_path / "results")
    base = {"engine": "batch", "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 100}},
            "name": "seeds"}
    hashes = [cache.run({**base, "policy": policy, "seed": 1})[0].scenario_hash for policy in ("easy", "ls")]
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(1440, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element(f"#{page.ids.RUNS}", timeout=TIMEOUT)
    labels = {o["value"]: o["label"] for o in page.table.run_options(cache.listing())}
    for value in hashes:
        dash_duo.select_dcc_dropdown(f"#{page.ids.RUNS}", value=labels[value])
        ActionChains(dash_duo.driver).send_keys(Keys.ESCAPE).perform()
        dash_duo.find_element("h2").click()
    dash_duo.wait_for_element(f"#{page.ids.OVERLAY} .scatterlayer .trace:nth-child(2)", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.SEEDS_HINT}", "random parts (Local Search)", timeout=TIMEOUT)
    _assert_apart(dash_duo, "before the run")
    count = dash_duo.find_element(f"#{page.ids.SEEDS_COUNT}")
    count.send_keys(Keys.CONTROL, "a")
    count.send_keys("6")
    dash_duo.find_element(f"#{page.ids.SEEDS_RUN}").click()
    dash_duo.wait_for_element(f"#{page.ids.SEEDS_CANCEL}:not([disabled])", timeout=TIMEOUT)
    # Narrow, wide, short, narrow again while the seeds run: each time the layout settles apart.
    for width, height in ((1024, 768), (1440, 900), (1100, 600), (1024, 900)):
        dash_duo.driver.set_window_size(width, height)
        _assert_apart(dash_duo, f"{width}×{height} during the run")
    dash_duo.wait_for_contains_text(f"#{page.ids.SEEDS_MESSAGE}", "12 run(s)", timeout=TIMEOUT)
    until(lambda: dash_duo.find_element(f"#{page.ids.SEEDS_RUN}").is_enabled(), timeout=TIMEOUT)
    for width in (1024, 1440):
        dash_duo.driver.set_window_size(width, 900)
        _assert_apart(dash_duo, f"{width} px after the run")
        dash_duo.driver.execute_script(f"document.getElementById('{page.ids.OVERLAY}').scrollIntoView()")
        save_screenshot(dash_duo.driver, f"first-ten-compare-seeds-{width}.png")
    assert dash_duo.get_logs() == []
