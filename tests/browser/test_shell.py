"""The app's frame in headless Chromium: landing page, tab titles, the nav's current page."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import PAGES, create_app
from components import shell
from components.pages import fairshare as fairshare_page
from components.pages import home
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 60


def _current(dash_duo):
    return dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('.app-header nav a[aria-current=page]')].map(a => a.textContent);")


def test_landing_page_titles_and_the_current_page(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_contains_text(".home-page", "What would change", timeout=TIMEOUT)
    cards = dash_duo.find_elements(".home-card")
    assert len(cards) == len(home.layout.CARDS)
    dash_duo.driver.set_window_size(1024, 768)
    save_screenshot(dash_duo.driver, "screenshot-home.png")
    assert dash_duo.driver.title == shell.page_title(PAGES, "/")
    assert _current(dash_duo) == []
    # A card opens its page: the title and the nav follow, without a page reload.
    dash_duo.find_element(".home-card a.button[href^='/fairshare']").click()
    dash_duo.wait_for_element(f"#{fairshare_page.ids.PRESET}", timeout=TIMEOUT)
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.title == "Fair sharing · schedscope", "title never changed")
    assert _current(dash_duo) == ["Fair sharing"]
    dash_duo.find_element(".app-header nav a[href='/batch']").click()
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.title == "Batch & failures · schedscope", "title never changed")
    assert _current(dash_duo) == ["Batch & failures"]
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/no-such-page")
    dash_duo.wait_for_contains_text(f"#{shell.CONTENT}", "No page at /no-such-page", timeout=TIMEOUT)
    assert dash_duo.driver.title == "Not found · schedscope" and _current(dash_duo) == []
    assert dash_duo.get_logs() == []
