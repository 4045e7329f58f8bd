"""``make run``'s server: gunicorn with two worker processes, one browser across both.

The browser's requests (page, callbacks, a background run's polls, an
upload) land on either worker; the run, its progress and its result work
because everything they share lives in the data directory.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from components.pages import batch as batch_page
from components.pages import fairshare as fairshare_page

pytestmark = [pytest.mark.browser, pytest.mark.system]   # gunicorn with two workers
ROOT = Path(__file__).resolve().parents[2]
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
TIMEOUT = 120


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def production_server(tmp_path):
    """``(url, access log)`` of gunicorn serving ``app:create_server()`` with two workers; stopped at the end."""
    port, log = _free_port(), tmp_path / "access.log"
    env = {**os.environ, "SCHEDSCOPE_DATA": str(tmp_path / "data")}
    env.pop("REDIS_URL", None)
    with open(tmp_path / "server.log", "wb") as errors:
        server = subprocess.Popen(
            [str(GUNICORN), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
             "--access-logfile", str(log), "--access-logformat", "%(p)s %(r)s %(s)s", "app:create_server()"],
            cwd=ROOT, env=env, stdout=errors, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise AssertionError((tmp_path / "server.log").read_text(errors="replace")[-3000:])
            time.sleep(0.3)
    yield url, log
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(30)


def test_two_worker_processes_serve_one_browser(dash_br, production_server, tmp_path):
    url, log = production_server
    dash_br.server_url = url
    dash_br.driver.get(url + "/fairshare")
    dash_br.wait_for_element(f"#{fairshare_page.ids.PRESET}", timeout=TIMEOUT)
    dash_br.find_element(f"#{fairshare_page.ids.PRESET}").click()
    dash_br.find_element(f"#{fairshare_page.ids.PANEL.run}").click()
    dash_br.wait_for_contains_text(f"#{fairshare_page.ids.PANEL.message}", "4 run(s): 4 simulated", timeout=TIMEOUT)
    dash_br.wait_for_contains_text(f"#{fairshare_page.ids.PAPER}", "n31", timeout=TIMEOUT)
    # An upload is stored by one worker and read by whichever answers next.
    dash_br.driver.get(url + "/batch")
    dash_br.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    trace = tmp_path / "mine.swf"
    trace.write_text("; MaxProcs: 64\n" + "".join(
        f"{i} {10 * i} -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n" for i in range(1, 41)))
    dash_br.find_element(f"#{batch_page.ids.TRACE_UPLOAD} input[type=file]").send_keys(str(trace))
    dash_br.wait_for_contains_text(f"#{batch_page.ids.HARDWARE}", "1 cluster, 64 CPUs", timeout=TIMEOUT)
    callbacks = [line.split()[0] for line in log.read_text().splitlines() if "_dash-update-component" in line]
    assert len(set(callbacks)) == 2, f"callbacks answered by workers {sorted(set(callbacks))}"
    assert not [line for line in log.read_text().splitlines() if re.search(r" 5\d\d$", line)]
    assert dash_br.get_logs() == []
