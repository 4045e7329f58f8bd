"""The gallery in headless Chromium: it opens computed (one card computed in the background here), every card
agrees with its paper or says why, and draws its chart."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.pages import gallery as page
from components.pages.gallery.cards import CARDS
from components.services.runs import ResultCache
from screenshots import save_screenshot
from tests.test_app_gallery import KNOWN_DISAGREEMENTS

pytestmark = pytest.mark.browser
TIMEOUT = 120


# The one card this test leaves to the app's background computation; the others' results are the session's first
# runs of their cards (tests/support/gallery_runs.py, checked against the papers by tests/test_app_gallery.py),
# put in the app's results cache beforehand, so the page opens on them.
SIMULATED = "mch-fig4"


def test_the_gallery_opens_computed_and_run_again_recomputes_a_card(dash_duo, tmp_path, gallery_runs):
    gallery_runs.seed([card for card in CARDS if card.key != SIMULATED], ResultCache(tmp_path / "results"))
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/gallery")
    # Nothing pressed: the cards in the cache open filled, the missing one is computed in the background and fills
    # in by itself (what it says meanwhile: tests/test_app_gallery.py).
    simulated = f'[id=\'{{"card":"{SIMULATED}","type":"{page.ids.STATUS}"}}\']'
    dash_duo.wait_for_contains_text(simulated, "agree with the paper", timeout=TIMEOUT)
    assert "all from the cache" in dash_duo.find_element(simulated).text
    # Run again beside a card computes it anew (here: reads its runs from the cache again).
    dash_duo.find_element(f'[id=\'{{"card":"{SIMULATED}","type":"{page.ids.RUN}"}}\']').click()
    for card in CARDS:
        status = f'[id=\'{{"card":"{card.key}","type":"{page.ids.STATUS}"}}\']'
        dash_duo.wait_for_contains_text(status, "agree with the paper", timeout=TIMEOUT)
        text = dash_duo.find_element(status).text
        agreeing, total = text.split(" agree")[0].split(" of ")
        expected = int(total) - len(KNOWN_DISAGREEMENTS.get(card.key, ()))
        assert int(agreeing) == expected, f"{card.key}: {text}"
        assert "all from the cache" in text, f"{card.key}: {text}"
        # The paper's numbers and ours as bars beside the table; the why of every row that does not agree.
        chart = f'[id=\'{{"card":"{card.key}","type":"{page.ids.CHART}"}}\']'
        WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.execute_script(
            "return document.querySelectorAll(arguments[0] + ' .bars .point').length;", chart), card.key)
        why = dash_duo.find_element(f'[id=\'{{"card":"{card.key}","type":"{page.ids.WHY}"}}\']').text
        assert bool(why) == bool(KNOWN_DISAGREEMENTS.get(card.key)), (card.key, why)
    fig6 = dash_duo.find_element(f'[id=\'{{"card":"libra-fig6","type":"{page.ids.WHY}"}}\']')
    assert "NO: Mean isolation, Baseline (per-flow); Mean isolation, DRF; Mean isolation, HUG" in fig6.text
    assert fig6.find_element("css selector", "a").get_attribute("href").endswith("/sweeps?kind=libra-sensitivity")
    assert "drf" not in dash_duo.find_element(".gallery-page").text.replace("DRF", "")
    dash_duo.driver.set_window_size(1024, 4200)
    save_screenshot(dash_duo.driver, "screenshot-gallery.png")
    assert dash_duo.get_logs() == []
