"""A Slurm site brings its own files to the Site study page (headless Chromium): an sacct log, its slurm.conf and
its sshare output, then runs two policies on them."""

from pathlib import Path

import pytest

from app import create_app
from clicks import click_when_clear
from components.pages import site as page
from screenshots import save_screenshot
from tests.test_logs_on_the_pages import SSHARE

pytestmark = pytest.mark.browser
TIMEOUT = 240
EDITOR = page.ids.EDITOR
USERS = {"alice": "phys", "carol": "phys", "bob": "chem"}

SLURM_CONF = """\
ClusterName=tiny
NodeName=DEFAULT RealMemory=64000
NodeName=n[1-3] CPUs=8
PartitionName=batch Nodes=n[1-3] Default=YES MaxTime=INFINITE
"""

def write_sacct(path: Path, jobs: int = 120, last_partition: str = "batch") -> Path:
    """``sacct -a -X --parsable2`` of a busy morning: a job a minute, 1 to 8 CPUs, each with a step row; every job
    in partition ``batch`` but the last, in ``last_partition``."""
    lines = ["JobID|User|Group|Account|Partition|Submit|Start|End|NCPUS|State|Timelimit|ReqMem"]
    users = list(USERS)
    for i in range(jobs):
        user = users[i % 3]
        submit = 60 * i
        start, end = submit + 30 * (i % 4), submit + 30 * (i % 4) + 600 + 45 * (i % 7)
        stamp = [f"2024-03-01T{8 + t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}" for t in (submit, start, end)]
        partition = last_partition if i == jobs - 1 else "batch"
        lines.append(f"{1000 + i}|{user}|staff|{USERS[user]}|{partition}|{stamp[0]}|{stamp[1]}|{stamp[2]}|{1 + i % 8}|"
                     f"COMPLETED|01:00:00|2000Mc")
        lines.append(f"{1000 + i}.batch||||||{stamp[1]}|{stamp[2]}|{1 + i % 8}|COMPLETED||")
    path.write_text("\n".join(lines) + "\n")
    return path


def _upload(dash_duo, component_id: str, path: Path) -> None:
    dash_duo.wait_for_element(f"#{component_id} input[type=file]", timeout=TIMEOUT).send_keys(str(path))


def test_an_sacct_log_with_its_slurm_conf_and_sshare_runs_on_the_site_page(dash_duo, tmp_path):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from hpc2n-excerpt.swf", timeout=TIMEOUT)
    # The log: read as sacct, its step rows dropped and said so; the organisation derived from it first.
    _upload(dash_duo, page.ids.UPLOAD, write_sacct(tmp_path / "jobs.sacct", last_partition="gpu"))
    dash_duo.wait_for_contains_text(f"#{page.ids.UPLOAD_MSG}", "jobs.sacct: sacct, 120 jobs from 240 records",
                                    timeout=TIMEOUT)
    assert "120 job step record(s)" in dash_duo.find_element(f"#{page.ids.UPLOAD_MSG}").text
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from jobs.sacct", timeout=TIMEOUT)
    # The hardware: slurm.conf's partition, 3 nodes of 8 CPUs and 64,000 MB.
    conf = tmp_path / "slurm.conf"
    conf.write_text(SLURM_CONF)
    _upload(dash_duo, page.ids.HW_UPLOAD, conf)
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "24 CPUs", timeout=TIMEOUT)
    # Its partitions hold the jobs: the last job's partition, gpu, has no machine, so it will be cancelled.
    dash_duo.wait_for_contains_text(f"#{page.ids.HARDWARE}", "1 job will be cancelled: partition gpu has no machine",
                                    timeout=TIMEOUT)
    # The organisation: sshare's accounts and shares.
    shares = tmp_path / "shares.txt"
    shares.write_text(SSHARE)
    dash_duo.driver.execute_script(
        f"document.getElementById('{EDITOR.upload}').closest('details').open = true")   # the Workspace box
    _upload(dash_duo, EDITOR.upload, shares)
    dash_duo.wait_for_contains_text(f"#{EDITOR.item_message}", "Loaded shares.txt", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.ORGANISATION}", "chem", timeout=TIMEOUT)
    # Two policies (FCFS and H-DRF are checked by default), on the whole log.
    click_when_clear(dash_duo, f"#{page.ids.PANEL.run}")
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "2 run(s)", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.summary}", "H-DRF", timeout=TIMEOUT)
    dash_duo.wait_for_contains_text(f"#{page.ids.STAKEHOLDERS}", "phys", timeout=TIMEOUT)
    assert "chem" in dash_duo.find_element(f"#{page.ids.STAKEHOLDERS}").text
    dash_duo.driver.set_window_size(1440, 1800)
    dash_duo.driver.execute_script(f"document.getElementById('{page.ids.UPLOAD_MSG}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "site-slurm-files.png")
    assert dash_duo.get_logs() == []


def test_an_sacct_log_uploaded_on_the_batch_page_says_what_was_read(dash_duo, tmp_path):
    from components.pages import batch as batch_page

    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    _upload(dash_duo, batch_page.ids.TRACE_UPLOAD, write_sacct(tmp_path / "jobs.sacct"))
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "jobs.sacct (sacct)", timeout=TIMEOUT)
    info = dash_duo.find_element(f"#{batch_page.ids.TRACE_INFO}").text
    assert "120 job step record(s)" in info and "batch (120 jobs)" in info and "phys (80 jobs)" in info
    # Its hardware: slurm.conf in the clusters' upload box.
    conf = tmp_path / "slurm.conf"
    conf.write_text(SLURM_CONF)
    _upload(dash_duo, batch_page.ids.MACHINES_UPLOAD, conf)
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.HARDWARE}", "24 CPUs", timeout=TIMEOUT)
    dash_duo.driver.set_window_size(1440, 1200)
    dash_duo.driver.execute_script(f"document.getElementById('{batch_page.ids.TRACE_UPLOAD}').scrollIntoView()")
    save_screenshot(dash_duo.driver, "batch-sacct-upload.png")
    assert dash_duo.get_logs() == []
