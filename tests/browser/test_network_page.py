"""The network page in headless Chromium (dash_duo): Fig. 1 preset, a generated run, errors that keep results."""

import pytest
from dash.testing.wait import until

from app import create_app
from clicks import show_inputs
from components.pages import network as page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120


def _start(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/network")
    dash_duo.wait_for_element(f"#{page.ids.PRESET_FIG1}", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.APPS}", "A2", timeout=TIMEOUT)


def _summary_cells(dash_duo):
    """``{scheme: {column: text}}`` of the summary table."""
    header = [c.text for c in dash_duo.find_elements(f"#{page.ids.PANEL.summary} th")]
    rows = {}
    for row in dash_duo.find_elements(f"#{page.ids.PANEL.summary} tr")[1:]:
        cells = [c.text for c in row.find_elements("css selector", "td")]
        rows[cells[0]] = dict(zip(header, cells))
    return rows


def _choose(dash_duo, radio_id, value):
    dash_duo.find_element(f"#{radio_id} input[value='{value}']").click()


def test_fig1_preset_shows_the_papers_isolation_and_clicks_select_an_application(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_FIG1}").click()
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "4 scheme(s)", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "Libra", timeout=TIMEOUT)
    rows = _summary_cells(dash_duo)
    # Round-robin's placement (a) gives 0.5 under DRF and HUG; Libra's placement (b) gives 0.625.
    assert rows["DRF"]["Worst-off isolation"] == "0.5" and rows["HUG"]["Worst-off isolation"] == "0.5"
    assert rows["Libra"]["Worst-off isolation"] == "0.625"
    dash_duo.wait_for_element(f"#{page.ids.PLACEMENT_VIEW} .bars", timeout=TIMEOUT)
    # Selecting an application (as a chart click does) highlights it in the placement view.
    dash_duo.select_dcc_dropdown(f"#{page.ids.APP}", value="A2")
    dash_duo.wait_for_element(f"#{page.ids.ISOLATION} .js-plotly-plot", timeout=TIMEOUT)
    until(lambda: dash_duo.driver.execute_script(
        f"const d = document.querySelector('#{page.ids.PLACEMENT_VIEW} .js-plotly-plot').data;"
        "return d.filter(t => t.opacity === 1).map(t => t.name).join();") == "A2", timeout=TIMEOUT)
    # Zooming the isolation chart sets the heatmap's window.
    dash_duo.driver.execute_script(
        f"Plotly.relayout(document.querySelector('#{page.ids.ISOLATION} .js-plotly-plot'), "
        "{'xaxis.range[0]': 1, 'xaxis.range[1]': 3});")
    dash_duo.wait_for_contains_text(f"#{page.ids.WINDOW_MSG}", "window 1.000–3.000 s", timeout=TIMEOUT)
    heat_range = dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.HEATMAP} .js-plotly-plot').layout.xaxis.range;")
    assert heat_range == [1, 3]
    assert dash_duo.get_logs() == []


def test_a_generated_setup_runs_and_the_screenshot_is_saved(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_FIG6}").click()
    until(lambda: dash_duo.find_element(
        f"#{page.ids.MACHINE_GEN_BOX} input").get_attribute("value") == "512", timeout=TIMEOUT)
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "4 scheme(s)", timeout=TIMEOUT)
    rows = _summary_cells(dash_duo)
    assert {r["Applications"] for r in rows.values()} == {str(page.setups.FIG6_PAGE_APPS)}
    assert float(rows["Libra"]["Mean isolation"]) > float(rows["DRF"]["Mean isolation"])
    dash_duo.wait_for_element(f"#{page.ids.HEATMAP} .heatmaplayer image", timeout=TIMEOUT)
    dash_duo.select_dcc_dropdown(f"#{page.ids.APP}", value="app-05")
    until(lambda: dash_duo.driver.execute_script(
        f"return document.querySelector('#{page.ids.HEATMAP} .js-plotly-plot').data"
        ".some(t => t.type === 'scatter' && t.name === 'app-05');"), timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1600, 3600)
    dash_duo.driver.execute_script("window.scrollTo(0, 0)")
    dash_duo.wait_for_element(f"#{page.ids.PLACEMENT_VIEW} .bars", timeout=TIMEOUT)
    save_screenshot(dash_duo.driver, "screenshot-network.png")
    assert dash_duo.get_logs() == []


def test_bad_input_says_where_and_keeps_earlier_results(dash_duo, tmp_path):
    _start(dash_duo, tmp_path)
    dash_duo.find_element(f"#{page.ids.PRESET_FIG1}").click()
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "Libra", timeout=TIMEOUT)
    show_inputs(dash_duo, page.ids.PANEL)   # folded away after the run
    # A negative uplink in the generator.
    _choose(dash_duo, page.ids.MACHINE_MODE, "generate")
    uplink = dash_duo.find_element(f"#{page.ids.MACHINE_GEN_BOX} label:nth-child(4) input")
    uplink.clear()
    uplink.send_keys("-1")
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "Not run", timeout=TIMEOUT)
    message = dash_duo.find_element(f"#{page.ids.PANEL.message}").text
    assert "machine generator, uplink" in message and "negative" in message
    assert "Libra" in dash_duo.find_element(f"#{page.ids.PANEL.summary}").text
    # An upload with an unknown pattern names file, line and field; the table stays.
    _choose(dash_duo, page.ids.APP_MODE, "upload")
    bad = tmp_path / "apps.csv"
    bad.write_text("name,pattern,count,cpu,ram,downlink,uplink\nX,all-to-all,2,1,1,0.5,0.5\nY,ring,2,1,1,0.5,0.5\n")
    dash_duo.find_element(f"#{page.ids.APPS_UPLOAD} input[type=file]").send_keys(str(bad))
    dash_duo.wait_for_contains_text(f"#{page.ids.APPS_MSG}", "apps.csv", timeout=TIMEOUT)
    message = dash_duo.find_element(f"#{page.ids.APPS_MSG}").text
    assert "line 3, pattern" in message and "unknown pattern 'ring'" in message
    _choose(dash_duo, page.ids.APP_MODE, "table")
    dash_duo.wait_for_contains_text(f"#{page.ids.APPS}", "A2", timeout=TIMEOUT)   # shown once the mode switches
    assert "Libra" in dash_duo.find_element(f"#{page.ids.PANEL.summary}").text
    assert dash_duo.get_logs() == []
