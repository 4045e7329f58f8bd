"""The brief from an engine page's result, in headless Chromium: the button downloads a one-page PDF and its HTML
twin carries the page's headline, charts and permalinks."""

import time
from pathlib import Path

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.pages import batch as batch_page
from screenshots import save_screenshot
from tests.test_pdf_title import info_title

pytestmark = pytest.mark.browser
TIMEOUT = 120
PANEL = batch_page.ids.PANEL


def _downloaded(dash_duo, pattern: str) -> Path:
    """The one complete download matching ``pattern`` (no ``.crdownload`` partial left)."""
    folder = Path(dash_duo.download_path)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = [p for p in folder.glob(pattern) if p.stat().st_size > 0]
        if found and not list(folder.glob("*.crdownload")):
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no {pattern} downloaded; found {sorted(p.name for p in folder.iterdir())}")


def test_the_brief_button_downloads_a_pdf_and_its_html_twin_carries_the_headline(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(1024, 768)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch?demo=backfilling")
    headline = f"#{PANEL.headline}"
    WebDriverWait(dash_duo.driver, TIMEOUT).until(
        lambda _: "EASY cuts average wait by" in dash_duo.find_element(headline).text, "no headline")
    sentence = dash_duo.find_element(headline).text
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")   # the first screen: Run, the brief's links, the headline
    save_screenshot(dash_duo.driver, "demo-brief-headline-batch.png")

    # The links follow the runs Store (greyed out, without an address, until it holds the runs).
    WebDriverWait(dash_duo.driver, TIMEOUT).until(
        lambda _: "disabled" not in dash_duo.find_element(f"#{PANEL.brief_pdf}").get_attribute("class"), "no link")
    assert "/brief.pdf?page=batch&runs=" in dash_duo.find_element(f"#{PANEL.brief_pdf}").get_attribute("href")
    dash_duo.find_element(f"#{PANEL.brief_pdf}").click()
    pdf = _downloaded(dash_duo, "batch-brief-*.pdf")
    data = pdf.read_bytes()
    # No PDF reader in the requirements: a one-page PDF of real size, its text checked through the HTML twin
    # (both renderings draw one Brief) and through the figure it is drawn from (tests/test_demo_brief.py).
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF") and len(data) > 20_000
    assert data.count(b"/Type /Page\n") + data.count(b"/Type /Page>") + data.count(b"/Type /Page ") == 1
    # Its document title is the brief's, not the renderer's page ("Kaleido-fier"): UTF-16 text in hex.
    assert info_title(data).startswith(b"<FEFF")

    dash_duo.find_element(f"#{PANEL.brief_html}").click()
    twin = _downloaded(dash_duo, "batch-brief-*.html")
    text = twin.read_text(encoding="utf-8")
    assert f"<p class='headline'>{sentence}</p>" in text.replace("&gt;", ">")
    assert text.count('class="plotly-graph-div"') == 3 and text.count("/scenario/") >= 2
    assert "error" not in dash_duo.find_element(f"#{PANEL.message}").get_attribute("innerHTML")

    dash_duo.driver.get(twin.as_uri())
    WebDriverWait(dash_duo.driver, TIMEOUT).until(
        lambda d: d.execute_script("return document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3;"))
    assert dash_duo.find_element(".headline").text == sentence
    save_screenshot(dash_duo.driver, "demo-brief-batch.png")
