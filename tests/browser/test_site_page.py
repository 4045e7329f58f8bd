"""The Site study page in headless Chromium (dash_duo): the sample, its derived tree, an edited weight, two
policies, a clicked group, and a second site compared."""

import re
from pathlib import Path

import pytest
from dash.testing.wait import until
from selenium.webdriver.common.keys import Keys

from app import create_app
from clicks import click_when_clear
from components.pages import site as page
from components.pages.batch import ids as batch_ids
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 240
EDITOR = page.ids.EDITOR

_CLICK_GROUP = """
const gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
const index = gd.data.findIndex(trace => Array.isArray(trace.customdata) && trace.customdata[0] === arguments[1]);
gd.emit('plotly_click', {points: [{curveNumber: index, pointNumber: 0, pointIndex: 0, data: gd.data[index],
                                   x: gd.data[index].x[0], y: gd.data[index].y[0],
                                   customdata: gd.data[index].customdata[0]}]});
return index;
"""

_WIDTHS = """
const gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
return gd.data.filter(trace => Array.isArray(trace.customdata) && !trace.name.endsWith('entitled'))
  .map(trace => [trace.customdata[0], trace.line.width]);
"""

_TAP_FIRST_USER = """
const cy = document.getElementById(arguments[0])._cyreg.cy;
const users = cy.nodes('.user');
if (users.length === 0) { return null; }
users[0].emit('tap');
return users[0].id();
"""


def write_second_site(path: Path, jobs: int = 300) -> Path:
    """A small SWF log of another site: 64 CPUs, three groups of three users, jobs every 5 minutes."""
    lines = ["; MaxNodes: 16", "; MaxProcs: 64", "; UnixStartTime: 1262304000", "; TimeZoneString: Europe/Prague"]
    for i in range(jobs):
        procs, run = 2 ** (i % 5), 300 + 97 * (i % 23)
        lines.append(f"{i + 1} {300 * i} -1 {run} {procs} -1 -1 {procs} {4 * run} -1 1 {i % 9 + 1} {i % 3 + 1} "
                     "-1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sample_tree_weight_two_policies_a_group_and_a_second_site(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    # The sample, its first 400 jobs: the organisation derived from them, drawn as a tree.
    jobs = dash_duo.find_element(f"#{page.ids.MAX_JOBS}")
    jobs.send_keys(Keys.CONTROL, "a")
    jobs.send_keys("400", Keys.ENTER)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "first 400 jobs", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORGANISATION}", "group 1", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "240 CPUs", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{EDITOR.tree} canvas", timeout=TIMEOUT)
    # The tree drawn is the new one (the 2,000-job tree before it had other users): as many users as it says.
    users = int(re.search(r"(\d+) users", dash_duo.find_element(f"#{page.ids.ORG_ORIGIN}").text).group(1))
    until(lambda: dash_duo.driver.execute_script(
        f"return document.getElementById('{EDITOR.tree}')._cyreg.cy.nodes('.user').length") == users, timeout=TIMEOUT)
    user = until(lambda: dash_duo.driver.execute_script(_TAP_FIRST_USER, EDITOR.tree), timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{EDITOR.form_title}", user, timeout=TIMEOUT)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.ORG_ORIGIN}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-derived-tree.png")
    # Edit the user's weight: the table shows it, the tree labels it.
    weight = dash_duo.find_element(f"#{EDITOR.weight}")
    weight.send_keys(Keys.CONTROL, "a")
    weight.send_keys("3")
    click_when_clear(dash_duo, f"#{EDITOR.apply}")
    dash_duo.wait_for_contains_text(f"#{EDITOR.message}", f"Applied to {user}.", timeout=TIMEOUT)
    until(lambda: "w=3" in dash_duo.driver.execute_script(
        f"return document.getElementById('{EDITOR.tree}')._cyreg.cy.$id(arguments[0]).data('label')", user),
        timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "edited", timeout=TIMEOUT)
    # Two policies (FCFS and H-DRF are checked by default).
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "2 run(s)", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.STAKEHOLDERS}", "group 1: 100% of CPU time", timeout=TIMEOUT)
    # The verdict leads with the difference between the policies, then what "its share" means.
    verdict = dash_duo.find_element(f"#{page.ids.STAKEHOLDERS} strong").text
    assert re.match(r"(H-DRF cuts the mean wait from|FCFS keeps the lowest mean wait|The policies barely differ)",
                    verdict), verdict
    assert "below its share while it had jobs waiting" in verdict, verdict
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "H-DRF", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.SHARES} .js-plotly-plot", timeout=TIMEOUT)
    # Why jobs waited, from the run's own reasons: a reason's share of the waiting time drawn over time.
    dash_duo.wait_for_contains_text(f"#{page.ids.WHY_WAITED}", "Why jobs waited", timeout=TIMEOUT)
    dash_duo.wait_for_element(f"#{page.ids.WHY_WAITED_GROUPS} .js-plotly-plot", timeout=TIMEOUT)
    until(lambda: dash_duo.driver.execute_script(_WIDTHS, page.ids.SHARES), timeout=TIMEOUT)
    # Click the group's line: bold in every group chart.
    assert dash_duo.driver.execute_script(_CLICK_GROUP, page.ids.SHARES, "group 1") >= 0
    dash_duo.wait_for_contains_text(f"#{page.ids.GROUP_MSG}", "Highlighted: group 1", timeout=TIMEOUT)
    for graph in (page.ids.SHARES, page.ids.ISOLATION, page.ids.WAITS):
        until(lambda graph=graph: {width for group, width in dash_duo.driver.execute_script(_WIDTHS, graph)
                                   if group == "group 1"} == {3}, timeout=TIMEOUT)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    save_screenshot(dash_duo.driver, "site-summary.png")
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.SHARES}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-charts.png")
    # A second site: its workload beside this one, then the same policies on both.
    second = write_second_site(tmp_path / "other-site.swf")
    dash_duo.wait_for_element(f"#{page.ids.SECOND_UPLOAD} input[type=file]", timeout=TIMEOUT).send_keys(str(second))
    dash_duo.wait_for_contains_text(f"#{page.ids.SECOND_MSG}", "other-site.swf: 300 jobs", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.WORKLOAD_TABLE}", "jobs per day", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.WORKLOAD_TABLE}", "◆", timeout=TIMEOUT)
    until(lambda: len(dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.WORKLOADS} .js-plotly-plot').data") or []) == 10, timeout=TIMEOUT)
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "4 run(s): 2 simulated", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.RESULTS_TABLE}", "site B", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.RESULTS_TABLE}", "Mean wait", timeout=TIMEOUT)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.WORKLOAD_TABLE}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-compare.png")
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.RESULTS_TABLE}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-compare-results.png")


def test_the_site_and_its_organisation_stay_across_a_reload_and_a_visit(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from hpc2n-excerpt.swf", timeout=TIMEOUT)
    upload = dash_duo.wait_for_element(f"#{page.ids.UPLOAD} input[type=file]", timeout=TIMEOUT)
    upload.send_keys(str(write_second_site(tmp_path / "mine.swf")))
    # An own trace runs whole: 300 jobs, 9 users in 3 groups.
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from mine.swf, 300 jobs", timeout=TIMEOUT)
    origin = dash_duo.find_element(f"#{page.ids.ORG_ORIGIN}").text
    for visit in ("reload", "navigation"):
        if visit == "reload":
            dash_duo.driver.refresh()
        else:
            dash_duo.find_element(".app-header nav a[href='/batch']").click()
            dash_duo.wait_for_element(f"#{batch_ids.PANEL.run}", timeout=TIMEOUT)
            dash_duo.find_element(".app-header nav a[href='/site']").click()
        dash_duo.wait_for_contains_text(f"#{page.ids.TRACE}", "mine.swf", timeout=TIMEOUT)
        dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from mine.swf", timeout=TIMEOUT)
        assert dash_duo.find_element(f"#{page.ids.ORG_ORIGIN}").text == origin, visit
        assert dash_duo.find_element(f"#{page.ids.MAX_JOBS}").get_attribute("value") == "", visit
    # Run runs the kept site, and the results on top name the inputs they came from.
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.STAKEHOLDERS}", "Results of mine.swf, the whole trace.",
                                    timeout=TIMEOUT)
    assert dash_duo.get_logs() == []
