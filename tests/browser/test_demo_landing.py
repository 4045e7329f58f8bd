"""The landing page's one-click demos in headless Chromium: each opens its page with a result and its headline."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120

DEMOS = [
    ("backfilling", batch_page, "EASY cuts average wait by", "batch"),
    ("hierarchy", fairshare_page, "utilisation", "fairshare"),
    ("isolation", network_page, "Libra raises the worst-off application's isolation from 0.50", "network"),
    ("elasticity", elastic_page, "YARN-ME finishes jobs", "memory"),
]


def _headline(dash_duo, page):
    return dash_duo.find_element(f"#{page.ids.PANEL.headline}").text


@pytest.mark.parametrize("demo, page, words, name", DEMOS)
def test_a_demo_card_opens_its_page_with_a_result_and_its_headline(dash_duo, tmp_path, demo, page, words, name):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(1024, 768)
    dash_duo.wait_for_contains_text(".home-page", "What would change", timeout=TIMEOUT)
    if demo == "backfilling":
        save_screenshot(dash_duo.driver, "demo-landing-1024.png")
    dash_duo.find_element(f".home-card a.button[href$='?demo={demo}']").click()
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: words in _headline(dash_duo, page),
                                                  f"no headline with {words!r}")
    assert "simulated" in dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    # The demo ran once: the URL loses its ?demo= so a reload does not run it again.
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: "demo=" not in d.current_url)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.PANEL.headline}').scrollIntoView()")
    save_screenshot(dash_duo.driver, f"demo-headline-{name}.png")
    assert dash_duo.get_logs() == []
