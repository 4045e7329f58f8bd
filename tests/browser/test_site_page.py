"""The Site study page in headless Chromium (dash_duo): upload, the derived organisation, two policies, a clicked group."""

import os

import pytest
from dash.testing.wait import until

from app import create_app
from clicks import click_when_clear
from components.pages import site as page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 180
SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "sample_traces", "hpc2n-excerpt.swf")

_CLICK_GROUP = """
const gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
const index = gd.data.findIndex(trace => Array.isArray(trace.customdata) && trace.customdata[0] === arguments[1]);
gd.emit('plotly_click', {points: [{curveNumber: index, pointNumber: 0, pointIndex: 0, data: gd.data[index],
                                   x: gd.data[index].x[0], y: gd.data[index].y[0]}]});
return index;
"""

_WIDTHS = """
const gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
return gd.data.filter(trace => Array.isArray(trace.customdata) && !trace.name.endsWith('entitled'))
  .map(trace => [trace.customdata[0], trace.line.width]);
"""


def test_upload_derive_run_two_policies_and_click_a_group(dash_duo, tmp_path):
    # A site's own log: the first 800 lines of the HPC2N sample, uploaded under another name.
    with open(SAMPLE) as source:
        lines = source.readlines()
    trace = tmp_path / "my-site.swf"
    trace.write_text("".join(lines[:800]))
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_element(f"#{page.ids.UPLOAD} input[type=file]", timeout=TIMEOUT).send_keys(str(trace))
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "my-site.swf:", timeout=TIMEOUT)
    # The organisation derived from the upload: the log's one group id (1) over its users.
    dash_duo.wait_for_contains_text(f"#{page.ids.ORGANISATION} td", "group 1", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "CPUs", timeout=TIMEOUT)
    save_screenshot(dash_duo.driver, "site-derived.png")
    # Two policies: FCFS and H-DRF are checked by default.
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "2 polic", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.STAKEHOLDERS}", "of CPU time for", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "H-DRF", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.SHARES} .js-plotly-plot", timeout=TIMEOUT)
    until(lambda: dash_duo.driver.execute_script(_WIDTHS, page.ids.SHARES), timeout=TIMEOUT)
    assert dash_duo.driver.execute_script(_CLICK_GROUP, page.ids.SHARES, "group 1") >= 0
    dash_duo.wait_for_contains_text(f"#{page.ids.GROUP_MSG}", "Highlighted: group 1", timeout=TIMEOUT)
    for graph in (page.ids.SHARES, page.ids.ISOLATION, page.ids.WAITS):
        until(lambda graph=graph: {width for group, width in dash_duo.driver.execute_script(_WIDTHS, graph)
                                   if group == "group 1"} == {3}, timeout=TIMEOUT)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    save_screenshot(dash_duo.driver, "site-summary.png")
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.SHARES}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-charts.png")
