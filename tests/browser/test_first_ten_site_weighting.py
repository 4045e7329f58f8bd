"""Site study: Run pressed right after choosing another weighting runs the new weights (the tree the page then shows),
and the weighting stays chosen, with the tree it made, across a reload. Then, on the same page, an upload with a
truncated line is refused offering 'skip malformed lines', and ticking the box loads it skipping that line."""

import json
import re
from pathlib import Path

import pytest
from dash.testing.wait import until
from selenium.webdriver.common.keys import Keys

from app import create_app
from clicks import show_inputs
from components.pages import compare as compare_page
from components.pages import site as page
from components.services.runs import ResultCache

pytestmark = pytest.mark.browser
TIMEOUT = 90   # the whole test takes about 15 s; a run that never reports costs this, not minutes
SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "hpc2n-excerpt.swf"

# The weighting radio and Run pressed in one go: the re-weighing callback has not answered when Run is pressed.
_WEIGH_AND_RUN = """
document.querySelector('#' + arguments[0] + ' input[value="cpu_hours"]').click();
document.getElementById(arguments[1]).click();
"""


# Pairs of a chart's lines drawn with the same colour through the same points (two legend entries, one line seen),
# read from the decoded points (_fullData: data may hold them still encoded).
_SAME_LINES = """
const plot = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
const key = t => JSON.stringify([t.line && t.line.color, Array.from(t.x || []), Array.from(t.y || [])]);
const seen = {}, twice = [];
for (const t of plot._fullData) { const k = key(t); if (k in seen) twice.push([seen[k], t.name]); else seen[k] = t.name; }
return twice;
"""


def _weights(tree: dict) -> dict[str, float]:
    """Every node's weight below the root, by name."""
    found = {}

    def visit(node):
        for child in node.get("children", ()):
            found[child["name"]] = round(float(child["weight"]), 3)
            visit(child)

    visit(tree)
    return found


def _shown(dash_duo) -> dict:
    """The organisation the page holds (its Store, kept in the browser's local storage)."""
    return json.loads(dash_duo.driver.execute_script(f"return localStorage.getItem('{page.ids.ORG}')"))


def test_run_right_after_a_new_weighting_runs_the_new_weights(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    jobs = dash_duo.find_element(f"#{page.ids.MAX_JOBS}")
    jobs.send_keys(Keys.CONTROL, "a")
    jobs.send_keys("400", Keys.ENTER)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "first 400 jobs, users grouped", timeout=TIMEOUT)
    equal = _weights(_shown(dash_duo)["tree"])
    assert set(equal.values()) == {1.0}
    dash_duo.driver.execute_script(_WEIGH_AND_RUN, page.ids.WEIGHTING, page.ids.PANEL.run)
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "2 run(s)", timeout=TIMEOUT)
    until(lambda: "then weights by CPU-hours" in _shown(dash_duo)["origin"], timeout=TIMEOUT)   # inputs folded
    shown = _weights(_shown(dash_duo)["tree"])
    assert shown.keys() == equal.keys() and len(set(shown.values())) > 1   # by CPU-hours: the users differ
    results = ResultCache(tmp_path / "results")
    ran = [results.get(entry["hash"]).scenario["model"]["organisation"]["tree"] for entry in results.listing()]
    assert len(ran) == 2
    for tree in ran:   # each run's organisation is the one the page shows, not the equal weights it replaced
        assert _weights(tree) == shown
    # A reload keeps the weighting chosen and the tree it made; Run runs them again (from the cache).
    dash_duo.driver.refresh()
    dash_duo.wait_for_element(f"#{page.ids.PANEL.run}", timeout=TIMEOUT)
    until(lambda: "then weights by CPU-hours" in dash_duo.driver.execute_script(
        f"return document.getElementById('{page.ids.ORG_ORIGIN}').textContent"), timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.WEIGHTING} input[value='cpu_hours']:checked", timeout=TIMEOUT)
    assert _weights(_shown(dash_duo)["tree"]) == shown
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "2 run(s)", timeout=TIMEOUT)
    assert len(results.listing()) == 2
    # The runs table in the catalogue's names and rounding, never raw keys or long decimals.
    table = dash_duo.find_element(f"#{page.ids.PANEL.summary}").text
    assert "Mean wait (s)" in table and "Mean minimum isolation" in table, table
    assert "mean_wait_s" not in table and not re.search(r"\d\.\d{4,}", table), table
    # One legend entry per line one can see: no two lines of a chart are the same, point for point.
    for graph in (page.ids.SHARES, page.ids.UTILISATION):
        dash_duo.wait_for_element(f"#{graph} .scatterlayer .trace", timeout=TIMEOUT)
        assert dash_duo.driver.execute_script(_SAME_LINES, graph) == [], graph
    # Nothing killed: one sentence, not a chart-sized empty frame.
    dash_duo.wait_for_contains_text(f"#{page.ids.KILLED}", "No job was killed", timeout=TIMEOUT)
    assert dash_duo.driver.execute_script(
        f"return document.getElementById('{page.ids.KILLED}').getBoundingClientRect().height") <= 100
    # An upload with a line cut short is refused, offering to skip it; ticking the box reads it again, skipping.
    show_inputs(dash_duo, page.ids.PANEL)
    truncated = tmp_path / "mine.swf"
    truncated.write_text("".join(SAMPLE.read_text().splitlines(keepends=True)[:60]) + "9999 40 -1 10 2\n")
    dash_duo.find_element(f"#{page.ids.UPLOAD} input[type=file]").send_keys(str(truncated))
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "Tick 'skip malformed lines' to load the rest",
                                    timeout=TIMEOUT)
    assert "The previous trace stays." in dash_duo.find_element(f"#{page.ids.UPLOAD_MSG}").text
    dash_duo.find_element(f"#{page.ids.SKIP_MALFORMED} input[value='skip']").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "1 malformed line(s) skipped", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.TRACE}", "mine.swf", timeout=TIMEOUT)
    # Compare's picker tells the two site runs by policy and size, not by their hash written twice.
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/compare")
    dash_duo.wait_for_element(f"#{compare_page.ids.RUNS}", timeout=TIMEOUT).click()
    labels = until(lambda: [o.text for o in dash_duo.find_elements("[role=option]")], timeout=TIMEOUT)
    assert sorted(label.split(" [")[0] for label in labels) == ["FCFS · 400 jobs · Site study · seed 1",
                                                                "H-DRF · 400 jobs · Site study · seed 1"], labels
    assert dash_duo.get_logs() == []
