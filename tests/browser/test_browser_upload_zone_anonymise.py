"""The upload panels' time zone and anonymising, and a slurm.conf's partitions in the Site page's hardware table
(headless Chromium)."""

import re
from pathlib import Path

import pytest
from test_site_logs import SLURM_CONF, write_sacct

from app import create_app
from components.pages import batch as batch_page
from components.pages import site as page
from screenshots import save_screenshot
from tests.test_logs_on_the_pages import SSHARE

pytestmark = pytest.mark.browser
TIMEOUT = 240


def _upload(dash_duo, component_id: str, path: Path) -> None:
    dash_duo.wait_for_element(f"#{component_id} input[type=file]", timeout=TIMEOUT).send_keys(str(path))


def _type(dash_duo, component_id: str, text: str) -> None:
    field = dash_duo.wait_for_element(f"#{component_id}", timeout=TIMEOUT)
    field.clear()
    field.send_keys(text + "\n")   # the input is debounced: Enter sends it


def test_the_site_page_reads_a_log_in_its_zone_anonymises_one_and_lists_slurm_partitions(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from hpc2n-excerpt.swf", timeout=TIMEOUT)
    # A log read in Prague's time: said beside what was read, and the organisation is the log's own users.
    _type(dash_duo, page.ids.TIMEZONE, "Europe/Prague")
    _upload(dash_duo, page.ids.UPLOAD, write_sacct(tmp_path / "jobs.sacct"))
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "(times read in Europe/Prague)", timeout=TIMEOUT)
    assert "jobs.sacct: sacct, 120 jobs" in dash_duo.find_element(f"#{page.ids.UPLOAD_MSG}").text
    dash_duo.wait_for_contains_text(f"#{page.ids.ORGANISATION}", "alice", timeout=TIMEOUT)
    # The hardware from slurm.conf: its partition shown beside each cluster, and that it holds the jobs to it.
    conf = tmp_path / "slurm.conf"
    conf.write_text(SLURM_CONF.replace("NodeName=n[1-3] CPUs=8", "NodeName=n[1-3] CPUs=8\nNodeName=g1 CPUs=16")
                    + "PartitionName=gpu Nodes=g1\n")
    _upload(dash_duo, page.ids.HW_UPLOAD, conf)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "40 CPUs", timeout=TIMEOUT)
    table = dash_duo.find_element(f"#{page.ids.HW_TABLE}").text
    assert "partitions (from the file)" in table and "gpu" in table
    assert "A job runs only on the clusters of its partition" in dash_duo.find_element(f"#{page.ids.HARDWARE}").text
    dash_duo.driver.set_window_size(1440, 1800)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.HW_TABLE}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-hardware-partitions.png")
    # The same log anonymised: kept as SWF, no user's name on the page.
    dash_duo.find_element(f"#{page.ids.ANONYMISE} input[type=checkbox]").click()
    _upload(dash_duo, page.ids.UPLOAD, write_sacct(tmp_path / "again.sacct", jobs=60))
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "again.sacct (anonymised): 60 jobs", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "again.sacct (anonymised)", timeout=TIMEOUT)
    organisation = dash_duo.find_element(f"#{page.ids.ORGANISATION}").text
    assert not any(name in organisation for name in ("alice", "bob", "carol"))
    derived = set(re.findall(r"u_[0-9a-f]{12}", organisation))   # the log's users' stand-ins
    # Its sshare file, uploaded with the box still ticked: the same stand-ins, so every job finds its user's leaf.
    shares = tmp_path / "shares.txt"
    shares.write_text(SSHARE)
    dash_duo.driver.execute_script(
        f"document.getElementById('{page.ids.EDITOR.upload}').closest('details').open = true")   # the Workspace box
    _upload(dash_duo, page.ids.EDITOR.upload, shares)
    dash_duo.wait_for_contains_text(f"#{page.ids.EDITOR.item_message}", "Loaded shares.txt", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORGANISATION}", "a_", timeout=TIMEOUT)
    organisation = dash_duo.find_element(f"#{page.ids.ORGANISATION}").text
    assert set(re.findall(r"u_[0-9a-f]{12}", organisation)) == derived and len(derived) == 3
    assert not any(name in organisation for name in ("alice", "phys"))
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.UPLOAD}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-upload-zone-anonymise.png")
    assert dash_duo.get_logs() == []


def test_the_batch_page_reads_an_upload_in_its_zone_and_anonymises_on_request(dash_duo, tmp_path):
    ids = batch_page.ids
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    _type(dash_duo, ids.TIMEZONE, "America/New_York")
    _upload(dash_duo, ids.TRACE_UPLOAD, write_sacct(tmp_path / "jobs.sacct"))
    dash_duo.wait_for_contains_text(f"#{ids.TRACE_MSG}", "Loaded jobs.sacct: 120 jobs (times read in America/New_York)",
                                    timeout=TIMEOUT)
    dash_duo.find_element(f"#{ids.ANONYMISE} input[type=checkbox]").click()
    _upload(dash_duo, ids.TRACE_UPLOAD, write_sacct(tmp_path / "other.sacct", jobs=90))
    dash_duo.wait_for_contains_text(f"#{ids.TRACE_MSG}", "Loaded other.sacct (anonymised): 90 jobs.", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1440, 1400)
    dash_duo.driver.execute_script(f"document.getElementById('{ids.TRACE_MSG}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "batch-upload-anonymise.png")
    assert dash_duo.get_logs() == []
