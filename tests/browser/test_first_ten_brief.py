"""The HTML brief in headless Chromium: its timeline has one legend entry per line one can see, and it says which
run-time estimates the runs used."""

import time
from pathlib import Path

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.services import brief as briefs
from components.services.runs import ResultCache
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120

# Each chart's legend entries and its drawn lines' widths (a line drawn on top narrower than the one below it).
_CHARTS = """
return [...document.querySelectorAll('.js-plotly-plot')].map(plot => ({
  legend: [...plot.querySelectorAll('.legend .traces .legendtext')].map(t => t.textContent),
  widths: [...plot.querySelectorAll('.scatterlayer .trace path.js-line')]
    .map(p => parseFloat(getComputedStyle(p).strokeWidth))}));
"""


def _downloaded(folder: Path, pattern: str) -> Path:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = [p for p in folder.glob(pattern) if p.stat().st_size > 0]
        if found and not list(folder.glob("*.crdownload")):
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no {pattern} downloaded; found {sorted(p.name for p in folder.iterdir())}")


def test_the_brief_draws_one_legend_entry_per_visible_line_and_names_the_estimates(dash_duo, tmp_path):
    cache = ResultCache(tmp_path / "results")
    model = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 200}}
    fcfs = cache.run({"engine": "batch", "policy": "fcfs", "seed": 1, "name": "est", "model": model})[0]
    easy = cache.run({"engine": "batch", "policy": "easy", "seed": 1, "name": "est",
                      "model": {**model, "estimates": "trace"}})[0]
    # The page's records: EASY twice under two labels (one line), FCFS another.
    records = [{"hash": fcfs.scenario_hash, "label": "FCFS"}, {"hash": easy.scenario_hash, "label": "EASY"},
               {"hash": easy.scenario_hash, "label": "EASY again"}]
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.driver.set_window_size(1440, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.driver.get(dash_duo.server_url + briefs.page_href("batch", records, "html"))
    brief = _downloaded(Path(dash_duo.download_path), "batch-brief-*.html")
    text = brief.read_text(encoding="utf-8")
    assert ("<dt>Run-time estimates</dt><dd>FCFS: perfect (each job&#x27;s actual run time); EASY: the users&#x27; "
            "requested times (from the log); EASY again: the users&#x27; requested times (from the log)</dd>") in text
    for width in (1024, 1440):
        dash_duo.driver.set_window_size(width, 1000)
        dash_duo.driver.get(brief.as_uri())
        WebDriverWait(dash_duo.driver, TIMEOUT).until(
            lambda d: d.execute_script("return document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3;"))
        charts = dash_duo.driver.execute_script(_CHARTS)
        timeline = charts[-1]
        assert timeline["legend"] == ["FCFS", "EASY = EASY again"], charts
        assert len(timeline["widths"]) == 2 and timeline["widths"][0] > timeline["widths"][1], charts
        assert all(chart["legend"] == [] for chart in charts[:-1]), charts   # the bars name their runs below them
        dash_duo.driver.execute_script("document.querySelectorAll('.js-plotly-plot')[2].scrollIntoView()")
        save_screenshot(dash_duo.driver, f"first-ten-brief-{width}.png")
