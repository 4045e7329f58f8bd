"""What a first-time visitor and a presenter meet, in headless Chromium: tab titles, the nav's current page, no cloud
button on any chart, an empty trace refused, an unknown permalink's 404 page, a permalink's report and brief."""

import re
import urllib.request

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import PAGES, create_app
from components import shell
from components.pages import batch as batch_page
from components.pages import scenario as scenario_page
from components.services.runs import ResultCache
from downloads import downloaded
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 90
SCENARIO = {"engine": "batch", "policy": "easy", "name": "cve",
            "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}}


def _modebar_titles(dash_duo):
    return dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title') || '');")


def _links(dash_duo):
    return dash_duo.driver.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href);")


def test_every_page_has_its_title_its_nav_mark_and_no_cloud_button(dash_duo, tmp_path):
    """Every page in the navigation, one after another in one browser (one server, one browser start)."""
    dash_duo.start_server(create_app(tmp_path))
    host = dash_duo.server_url.split("//")[1]
    for page in [p for p in PAGES if p.label]:
        dash_duo.wait_for_page(url=f"{dash_duo.server_url}{page.route}")
        WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.title == f"{page.label} · schedscope", "title")
        current = dash_duo.driver.execute_script(
            "return [...document.querySelectorAll('.app-header nav a[aria-current=page]')].map(a => a.textContent);")
        assert current == [page.label], page.route
        charts = dash_duo.driver.execute_script("return document.querySelectorAll('.js-plotly-plot').length;")
        if charts:
            WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: _modebar_titles(dash_duo), "no mode bar drawn")
        titles = _modebar_titles(dash_duo)
        assert not [t for t in titles if "Share" in t or "Cloud" in t or "plotly" in t.lower()], (page.route, titles)
        # At rest (no pointer on a chart) no mode bar shows, so none lies over a chart's title or legend.
        shown = dash_duo.driver.execute_script(
            "return [...document.querySelectorAll('.js-plotly-plot .modebar')].map(m => getComputedStyle(m).opacity);")
        assert set(shown) <= {"0"}, (page.route, shown)
        # No link leaves the machine (the Plotly logo links to plotly.com; it is off).
        links = _links(dash_duo)
        assert all(host in link or link.startswith(("blob:", "data:")) for link in links), (page.route, links)


def test_an_empty_trace_is_refused_and_the_previous_one_stays(dash_duo, tmp_path):
    empty = tmp_path / "empty.swf"
    empty.write_bytes(b"")
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    dash_duo.find_element(f"#{batch_page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(empty))
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_MSG}", "empty.swf not loaded", timeout=TIMEOUT)
    assert "empty" in dash_duo.find_element(f"#{batch_page.ids.TRACE_MSG}").text
    assert "previous file stays" in dash_duo.find_element(f"#{batch_page.ids.TRACE_MSG}").text
    assert "hpc2n-excerpt.swf" in dash_duo.find_element(f"#{batch_page.ids.TRACE_INFO}").text
    # Still the sample after a reload: nothing of the empty file was kept as the working trace.
    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)


def test_an_unknown_permalink_is_a_404_page_without_run(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    url = f"{dash_duo.server_url}/scenario/{'ab' * 32}"
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(url, timeout=30)
    assert answer.value.code == 404
    dash_duo.wait_for_page(url=url)
    dash_duo.wait_for_contains_text(".scenario-not-found", "No saved scenario or stored run has the hash",
                                    timeout=TIMEOUT)
    assert not dash_duo.driver.find_elements("css selector", f"#{scenario_page.ids.RUN}")
    assert not dash_duo.driver.find_elements("css selector", f"#{scenario_page.ids.WHATIF_RUN}")
    # The tab says it too, after the shell's "Scenario" title for every /scenario/ URL.
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.title == "Not found · schedscope", "title")
    save_screenshot(dash_duo.driver, "demo-permalink-404.png")


def test_a_permalinks_report_and_brief_carry_the_charts(dash_duo, tmp_path):
    result, _ = ResultCache(tmp_path / "results").run(SCENARIO)
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/scenario/{result.scenario_hash}")
    dash_duo.wait_for_contains_text(f"#{scenario_page.ids.STATUS}", "Result from the cache", timeout=TIMEOUT)
    for name, charts in (("report.html", 2), ("brief.html", 2)):
        dash_duo.find_element(f"[id*='\"file\":\"{name}\"']").click()
        suffix = "-brief.html" if name == "brief.html" else ".html"
        path = downloaded(dash_duo, f"{result.scenario_hash[:12]}{suffix}")
        text = path.read_text(encoding="utf-8")
        assert text.count('class="plotly-graph-div"') == charts and not re.search(r"<script[^>]+src=", text)
    dash_duo.find_element("a[id*='\"file\":\"brief.pdf\"']").click()
    assert downloaded(dash_duo, f"{result.scenario_hash[:12]}-brief.pdf").read_bytes().startswith(b"%PDF-")
    # The summary reads as the catalogue names it; the chart's axis title carries the metric's definition.
    summary = dash_duo.find_element(f"#{scenario_page.ids.SUMMARY}").text
    assert "CPU utilisation" in summary and "75.8%" in summary and "mean_wait_s" not in summary
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda d: d.execute_script(
        "const t = document.querySelector('.js-plotly-plot .infolayer text.ytitle title');"
        "return t && t.textContent;") == "CPUs in use: CPUs held by running jobs", "no axis definition")
    # The brief opens from the file, offline, and shows its charts.
    dash_duo.driver.set_window_size(1024, 900)
    dash_duo.driver.get(path.as_uri())
    WebDriverWait(dash_duo.driver, TIMEOUT).until(
        lambda d: d.execute_script("return document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2;"))
    assert "EASY: mean wait" in dash_duo.find_element(".headline").text
    save_screenshot(dash_duo.driver, "demo-brief.png")


def test_the_not_found_page_of_an_unknown_path(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/no-such-page")
    dash_duo.wait_for_contains_text(f"#{shell.CONTENT}", "No page at /no-such-page", timeout=TIMEOUT)
    assert dash_duo.driver.title == "Not found · schedscope"
