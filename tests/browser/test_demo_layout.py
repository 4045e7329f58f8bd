"""Every page at 1024 × 768 (a projector): nothing scrolls sideways, the nav on one line, Run on the first screen,
and after a run the inputs fold away so the results follow Run."""

import pytest
from batch_choices import run_easy_basic
from selenium.webdriver.support.ui import WebDriverWait

from app import PAGES, create_app
from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from components.pages import site as site_page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 60
ENGINE_PAGES = [("/batch", batch_page), ("/fairshare", fairshare_page), ("/network", network_page),
                ("/memory", elastic_page), ("/site", site_page)]
#: The batch page's results after a run, in the order they follow Run.
BATCH_RESULTS = [batch_page.ids.PANEL.headline, batch_page.ids.PANEL.summary, batch_page.ids.OBJECTIVES,
                 batch_page.ids.UTILISATION, batch_page.ids.LOG_HEADLINE, batch_page.ids.WHY_WAITED,
                 batch_page.ids.SIZE_METRIC]


def _projector(dash_duo):
    """A 1024 × 768 viewport (the page's own area, as on a projector in full screen)."""
    dash_duo.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 1024, "height": 768, "deviceScaleFactor": 1, "mobile": False})


def _box(dash_duo, selector):
    return dash_duo.driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, height: r.height};", selector)


# Whether every annotation of a chart lies inside the chart's box.
_TEXT_INSIDE = """
const box = document.getElementById(arguments[0]).getBoundingClientRect();
const texts = [...document.querySelectorAll('#' + arguments[0] + ' .annotation-text')];
return texts.length > 0 && texts.every(t => { const r = t.getBoundingClientRect();
  return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom; });
"""


def _sideways(dash_duo) -> int:
    return dash_duo.driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;")


def _inner_scroll_boxes(dash_duo, selector) -> list:
    """Boxes inside ``selector`` that scroll up and down on their own (inputs squeezed into them)."""
    return dash_duo.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' *')].filter(e => {"
        "  const s = getComputedStyle(e); return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 4"
        "    && e.clientHeight > 0 && !e.closest('.dash-spreadsheet-container, .Select-menu-outer');"
        "}).map(e => e.className + '#' + e.id);", selector)


def test_no_page_scrolls_sideways_and_the_nav_fits_on_one_line_at_1024(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    _projector(dash_duo)
    dash_duo.wait_for_contains_text(".home-page", "What would change", timeout=TIMEOUT)
    links = dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('.app-header nav a')].map(a => a.getBoundingClientRect());")
    assert len(links) == len([p for p in PAGES if p.label])
    assert max(r["top"] for r in links) - min(r["top"] for r in links) < 4, links
    assert max(r["right"] for r in links) <= 1024, "the last link is cut"
    assert _box(dash_duo, ".app-header")["height"] < 60
    for page in PAGES:
        if not page.label:
            continue
        dash_duo.find_element(f".app-header nav a[href='{page.route}']").click()
        WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d, p=page: p.label in d.title)
        dash_duo.wait_for_element(f"#{page.route.strip('/')}-page, .page, h2", timeout=TIMEOUT)
        WebDriverWait(dash_duo.driver, 5).until(lambda _: _sideways(dash_duo) <= 0,
                                                f"{page.route} scrolls sideways at 1024 px")


@pytest.mark.parametrize("path, page", [ENGINE_PAGES[0], ENGINE_PAGES[4]])
def test_after_a_run_the_inputs_fold_and_the_results_follow_run(dash_duo, tmp_path, path, page):
    dash_duo.start_server(create_app(tmp_path))
    _projector(dash_duo)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{path}")
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}", timeout=TIMEOUT)
    viewport = dash_duo.driver.execute_script("return window.innerHeight;")
    assert _box(dash_duo, f"#{page.ids.PANEL.run}")["bottom"] <= viewport
    assert _inner_scroll_boxes(dash_duo, f"#{page.ids.PANEL.inputs}") == []
    if page is batch_page:
        dash_duo.wait_for_contains_text(f"#{page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
        run_easy_basic(dash_duo, TIMEOUT)
    else:
        dash_duo.wait_for_contains_text(f"#{page.ids.TRACE}", "hpc2n", timeout=TIMEOUT)
        dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
        dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "run(s)", timeout=TIMEOUT)
    # Folded: the inputs are gone, the runs table is on the first screen and one click opens the inputs again.
    dash_duo.wait_for_element(f"#{page.ids.PANEL.inputs}.folded", timeout=TIMEOUT)
    assert not dash_duo.find_element(f"#{page.ids.PANEL.inputs}").is_displayed()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "EASY" if page is batch_page else "H-DRF",
                                    timeout=TIMEOUT)
    assert _box(dash_duo, f"#{page.ids.PANEL.summary}")["top"] < viewport
    assert _sideways(dash_duo) <= 0
    save_screenshot(dash_duo.driver, f"demo-1024{path.replace('/', '-')}-after-run.png")
    if page is batch_page:
        tops = [_box(dash_duo, f"#{component}")["top"] for component in BATCH_RESULTS]
        assert tops == sorted(tops), dict(zip(BATCH_RESULTS, tops))
        # The Calibrate link sits whole above the chart that follows it (its border not under the chart).
        dash_duo.wait_for_element(f"#{page.ids.CALIBRATE}[href]", timeout=TIMEOUT)
        assert _box(dash_duo, f"#{page.ids.CALIBRATE}")["bottom"] <= _box(dash_duo, f"#{page.ids.LOG_TIMELINE}")["top"]
        # 'Nothing killed' is said whole inside its chart at 1024 px, not cut at both ends.
        dash_duo.wait_for_contains_text(f"#{page.ids.KILLED}", "none in the runs shown", timeout=TIMEOUT)
        assert dash_duo.driver.execute_script(_TEXT_INSIDE, page.ids.KILLED)
    dash_duo.find_element(f"#{page.ids.PANEL.inputs_toggle}").click()
    dash_duo.wait_for_element(f"#{page.ids.PANEL.inputs}:not(.folded)", timeout=TIMEOUT)
    assert dash_duo.find_element(f"#{page.ids.PANEL.inputs}").is_displayed()
    assert _sideways(dash_duo) <= 0
    dash_duo.find_element(f"#{page.ids.PANEL.inputs_toggle}").click()   # and folds again
    dash_duo.wait_for_element(f"#{page.ids.PANEL.inputs}.folded", timeout=TIMEOUT)
