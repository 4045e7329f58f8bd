"""The Gallery's missing cards are computed once per server: two web processes over one data directory (here two
apps in one process, each with its own results cache, as two gunicorn workers have) do not both compute them."""

import threading
import time
from collections import Counter

import pytest
from werkzeug.serving import make_server

from app import create_app
from components.pages import gallery as page
from components.pages.gallery import warm
from components.pages.gallery.cards import CARDS
from components.services.runs import ResultCache
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 180
MISSING = "mch-fig4"   # the card left to the background computation; the others are in the cache


def _status(card: str) -> str:
    return f'[id=\'{{"card":"{card}","type":"{page.ids.STATUS}"}}\']'


def test_two_web_processes_compute_the_missing_card_once(dash_duo, tmp_path, gallery_runs, monkeypatch):
    monkeypatch.setenv(warm.BACKGROUND_ENV, "1")
    gallery_runs.seed([card for card in CARDS if card.key != MISSING], ResultCache(tmp_path / "results"))
    # Every background computation of a card is counted, and held until both pages have asked for the cards.
    computed, gate, real = Counter(), threading.Event(), warm.run_card

    def counted(card, results):
        computed[card.key] += 1
        gate.wait(TIMEOUT)
        return real(card, results)
    monkeypatch.setattr(warm, "run_card", counted)
    first, second = create_app(tmp_path), create_app(tmp_path)
    dash_duo.start_server(first)
    other = make_server("127.0.0.1", 0, second.server, threaded=True)
    serving = threading.Thread(target=other.serve_forever, daemon=True)
    serving.start()
    try:
        dash_duo.wait_for_page(url=f"{dash_duo.server_url}/gallery")
        dash_duo.wait_for_contains_text(_status(MISSING), "Computing in the background", timeout=TIMEOUT)
        # The second process is asked too, while the first computes: it leaves the cards to it.
        dash_duo.driver.get(f"http://127.0.0.1:{other.server_port}/gallery")
        dash_duo.wait_for_contains_text(_status(MISSING), "Computing in the background", timeout=TIMEOUT)
        assert sum(computed.values()) == 1, computed   # one computation, blocked at its first card
        gate.set()
        # The second process's page fills from the cache as the first one's runs land.
        dash_duo.wait_for_contains_text(_status(MISSING), "agree with the paper", timeout=TIMEOUT)
        assert "all from the cache" in dash_duo.find_element(_status(MISSING)).text
        # The first process goes on through the other cards (each found in the cache) after the missing one
        # landed: wait for it to finish, then every card was looked at once, by one process.
        every_card_once = Counter({card.key: 1 for card in CARDS})
        deadline = time.monotonic() + TIMEOUT
        while computed != every_card_once and time.monotonic() < deadline and all(
                count <= 1 for count in computed.values()):
            time.sleep(0.2)
        assert computed == every_card_once, computed
        assert (tmp_path / warm.LOCK_NAME).exists()
        dash_duo.driver.set_window_size(1024, 900)
        save_screenshot(dash_duo.driver, "first-ten-gallery-second-process-1024.png")
        assert dash_duo.get_logs() == []
    finally:
        gate.set()
        other.shutdown()

