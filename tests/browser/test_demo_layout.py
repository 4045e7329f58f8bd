"""Every page at 1024 × 768 (a projector): the nav on one line, Run and the first chart without scrolling past inputs."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import PAGES, create_app
from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 60
ENGINE_PAGES = [("/batch", batch_page), ("/fairshare", fairshare_page), ("/network", network_page),
                ("/memory", elastic_page)]


FIRST_CHART = "[...document.querySelectorAll('.js-plotly-plot')].find(e => !e.closest('.editor-grid'))"


def _projector(dash_duo):
    """A 1024 × 768 viewport (the page's own area, as on a projector in full screen)."""
    dash_duo.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 1024, "height": 768, "deviceScaleFactor": 1, "mobile": False})


def _box(dash_duo, selector):
    return dash_duo.driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, height: r.height};", selector)


def test_the_nav_fits_on_one_line_at_1024(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    _projector(dash_duo)
    dash_duo.wait_for_contains_text(".home-page", "What would change", timeout=TIMEOUT)
    links = dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('.app-header nav a')].map(a => a.getBoundingClientRect().top);")
    assert len(links) == len([p for p in PAGES if p.label]) and max(links) - min(links) < 4, links
    header = _box(dash_duo, ".app-header")
    assert header["height"] < 60, header


@pytest.mark.parametrize("path, page", ENGINE_PAGES)
def test_run_and_the_first_chart_are_on_the_first_screen(dash_duo, tmp_path, path, page):
    dash_duo.start_server(create_app(tmp_path))
    _projector(dash_duo)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{path}")
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}", timeout=TIMEOUT)
    viewport = dash_duo.driver.execute_script("return window.innerHeight;")
    run = _box(dash_duo, f"#{page.ids.PANEL.run}")
    # The first result chart: the first one outside the inputs (the batch page draws its trace's sizes there).
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.execute_script(f"return ({FIRST_CHART}) != null;"))
    chart = dash_duo.driver.execute_script(f"const r = ({FIRST_CHART}).getBoundingClientRect();"
                                           "return {top: r.top + window.scrollY};")
    save_screenshot(dash_duo.driver, f"demo-1024{path.replace('/', '-')}.png")
    assert run["bottom"] <= viewport, f"Run at {run['top']:.0f} px, below the first screen ({viewport} px)"
    assert chart["top"] < viewport, f"first chart at {chart['top']:.0f} px, below the first screen"
