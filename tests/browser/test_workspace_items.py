"""Workspace items reused across pages, in headless Chromium: cluster definitions and hierarchies survive a restart."""

import pytest

from app import create_app
from components.pages import batch as batch_page
from components.pages import fairshare as fairshare_page
from components.pages import workspace as workspace_page
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 90


def _type(dash_duo, selector, text):
    box = dash_duo.find_element(selector)
    box.clear()
    box.send_keys(text)


def test_saved_clusters_and_hierarchy_reopen_after_a_restart(dash_duo, tmp_path):
    data = tmp_path / "data"
    dash_duo.start_server(create_app(data))

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "Jobs", timeout=TIMEOUT)
    dash_duo.find_element(f"#{batch_page.ids.SAVE_CLUSTERS}").click()
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.CLUSTERS_MSG}", "give the item a name", timeout=TIMEOUT)
    _type(dash_duo, f"#{batch_page.ids.CLUSTERS_NAME}", "MetaCentrum copy")
    dash_duo.find_element(f"#{batch_page.ids.SAVE_CLUSTERS}").click()
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.CLUSTERS_MSG}", "Saved the clusters as 'MetaCentrum copy'",
                                    timeout=TIMEOUT)

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/fairshare")
    dash_duo.wait_for_element(f"#{fairshare_page.ids.TREE}", timeout=TIMEOUT)
    dash_duo.find_element(f"#{fairshare_page.ids.HIER_NAME}").find_element("xpath", "./ancestor::details/summary").click()
    _type(dash_duo, f"#{fairshare_page.ids.HIER_NAME}", "two departments")
    dash_duo.find_element(f"#{fairshare_page.ids.SAVE_HIER}").click()
    dash_duo.wait_for_contains_text(f"#{fairshare_page.ids.HIER_MSG}", "Saved the hierarchy as 'two departments'",
                                    timeout=TIMEOUT)

    # Restart on the same data directory: the items are listed and open on their pages.
    dash_duo.server.stop()
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/workspace")
    dash_duo.wait_for_contains_text(f"#{workspace_page.ids.UPLOADS}", "MetaCentrum copy", timeout=TIMEOUT)
    assert "two departments" in dash_duo.find_element(f"#{workspace_page.ids.UPLOADS}").text

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "Jobs", timeout=TIMEOUT)
    dash_duo.select_dcc_dropdown(f"#{batch_page.ids.CLUSTER_CHOICE}", index=0)   # hpc2n-excerpt.machines: one cluster
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.CLUSTERS_MSG}", "Loaded 1 clusters", timeout=TIMEOUT)
    dash_duo.select_dcc_dropdown(f"#{batch_page.ids.CLUSTER_CHOICE}", index=3)   # the saved definition
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.CLUSTERS_MSG}", "Loaded 14 clusters from MetaCentrum copy",
                                    timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.CLUSTERS}", "cluster_0", timeout=TIMEOUT)

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/fairshare")
    dash_duo.wait_for_element(f"#{fairshare_page.ids.TREE}", timeout=TIMEOUT)
    dash_duo.find_element(f"#{fairshare_page.ids.PRESET}").click()      # a different hierarchy on screen
    dash_duo.find_element(f"#{fairshare_page.ids.HIER_NAME}").find_element("xpath", "./ancestor::details/summary").click()
    dash_duo.select_dcc_dropdown(f"#{fairshare_page.ids.HIER_CHOICE}", index=0)
    dash_duo.wait_for_contains_text(f"#{fairshare_page.ids.HIER_MSG}", "Opened two departments", timeout=TIMEOUT)
    bad = tmp_path / "broken.json"
    bad.write_text('{"resources": [\n')
    dash_duo.find_element(f"#{fairshare_page.ids.HIER_UPLOAD} input[type=file]").send_keys(str(bad))
    dash_duo.wait_for_contains_text(f"#{fairshare_page.ids.HIER_MSG}", "broken.json, line 2", timeout=TIMEOUT)
    assert "unchanged" in dash_duo.find_element(f"#{fairshare_page.ids.HIER_MSG}").text
    dash_duo.driver.set_window_size(1400, 1100)
    save_screenshot(dash_duo.driver, "screenshot-hierarchy-items.png")
    assert dash_duo.get_logs() == []
