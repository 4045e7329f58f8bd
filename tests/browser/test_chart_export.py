"""Every chart offers PNG (Plotly's camera) and SVG exports drawn in the browser, and PDF drawn on the server."""

import pytest

from app import create_app
from downloads import downloaded

pytestmark = pytest.mark.browser
TIMEOUT = 60


def test_a_chart_downloads_as_svg(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element("#compare-overlay-graph .modebar", timeout=TIMEOUT)
    dash_duo.wait_for_element("#compare-overlay-graph .schedscope-svg-export", timeout=TIMEOUT)
    assert dash_duo.find_elements("#compare-overlay-graph [data-title='Download plot as a PNG']")
    dash_duo.driver.execute_script(
        "document.querySelector('#compare-overlay-graph .schedscope-svg-export').click();")
    target = downloaded(dash_duo, "chart.svg", TIMEOUT)   # an untitled chart (the placeholder sentence)
    assert target.read_text().startswith("<svg")
    assert dash_duo.get_logs() == []


def test_a_chart_downloads_as_pdf_drawn_on_the_server(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element("#compare-overlay-graph .schedscope-pdf-export", timeout=TIMEOUT)
    dash_duo.driver.execute_script(
        "document.querySelector('#compare-overlay-graph .schedscope-pdf-export').click();")
    target = downloaded(dash_duo, "chart.pdf", TIMEOUT)
    assert target.read_bytes().startswith(b"%PDF")
    assert dash_duo.get_logs() == []
