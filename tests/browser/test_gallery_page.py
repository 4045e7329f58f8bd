"""The gallery in headless Chromium: every card runs and agrees with its paper."""

import pytest

from app import create_app
from components.pages import gallery as page
from components.pages.gallery.cards import CARDS
from screenshots import save_screenshot
from tests.test_app_gallery import KNOWN_DISAGREEMENTS

pytestmark = pytest.mark.browser
TIMEOUT = 120


def test_run_all_fills_every_card_without_an_error(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/gallery")
    dash_duo.wait_for_element(f"#{page.ids.RUN_ALL}", timeout=TIMEOUT).click()
    for card in CARDS:
        status = f'[id=\'{{"card":"{card.key}","type":"{page.ids.STATUS}"}}\']'
        dash_duo.wait_for_contains_text(status, "agree with the paper", timeout=TIMEOUT)
        text = dash_duo.find_element(status).text
        agreeing, total = text.split(" agree")[0].split(" of ")
        expected = int(total) - len(KNOWN_DISAGREEMENTS.get(card.key, ()))
        assert int(agreeing) == expected, f"{card.key}: {text}"
    dash_duo.driver.set_window_size(1400, 3400)
    save_screenshot(dash_duo.driver, "screenshot-gallery.png")
    assert dash_duo.get_logs() == []
