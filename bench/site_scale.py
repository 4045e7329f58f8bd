"""A site's trace end to end in a real browser: upload, run, re-open from the cache.

Starts ``python app.py`` on a free loopback port with an empty data
directory, drives the batch page in headless Chromium (Debian's chromium and
chromedriver, through Selenium) as a new user would, and prints per trace:

* upload → the workload summary shown (s)
* Run (EASY, BASIC, all jobs, the trace header's machine) → charts drawn, cold (s),
  beside the engine's own wall time for that run (from the runs table)
* re-opening the run: after another trace's run is on the page, the trace is
  chosen again (uploaded again: uploads are stored by content) and Run
  answers from the cache → every chart redrawn (s)
* page reloaded → charts drawn from the cache (s): the same plus the browser
  loading and parsing plotly.js and the page's scripts again
* the largest callback response (bytes on the wire, from Chromium's network log)
* the browser's JavaScript heap after the charts are drawn
* the server's peak resident memory (the web process and its run processes)

Traces: the HPC2N sample, the first 50,000 jobs of RICC (with its header)
and the full RICC trace (447,794 jobs) from ``../shared/traces`` (or
``--ricc PATH``). Goals (issue "Site scale"): RICC upload summary ≤ 3 s,
cached re-render ≤ 1 s, cold run to charts ≤ engine time + 2 s, largest
response ≤ 3 MB.

    .venv/bin/python bench/site_scale.py [--quick] [--ricc PATH]

``--quick`` stops after the 50,000-job trace.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.pages import batch as page  # noqa: E402

DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
TIMEOUT_S = 900
CHARTS = (page.ids.UTILISATION, page.ids.QUEUE, page.ids.WAITS, page.ids.GANTT)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``python app.py`` in its own data directory; samples the resident memory of its process tree."""

    def __init__(self, data: Path):
        data.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        env = {**os.environ, "SCHEDSCOPE_DATA": str(data), "SCHEDSCOPE_PORT": str(self.port),
               "SCHEDSCOPE_HOST": "127.0.0.1"}
        env.pop("REDIS_URL", None)
        self.process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                                        stdout=subprocess.DEVNULL, stderr=open(data / "server.log", "wb"))
        self.url = f"http://127.0.0.1:{self.port}"
        self.peak_rss = 0
        self._stop = threading.Event()
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.url + "/batch", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        root = psutil.Process(self.process.pid)
        while not self._stop.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                rss = sum(p.memory_info().rss for p in tree if p.is_running())
                self.peak_rss = max(self.peak_rss, rss)
            except psutil.Error:
                pass
            time.sleep(0.2)

    def reset_peak(self) -> None:
        self.peak_rss = 0

    def stop(self) -> None:
        self._stop.set()
        self.process.terminate()
        self.process.wait(timeout=20)


def browser() -> webdriver.Chrome:
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-quic", "--no-first-run", "--window-size=1400,1100", "--enable-precise-memory-info",
                f"--user-data-dir={tempfile.mkdtemp(prefix='chrome-bench-')}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(TIMEOUT_S)   # a page busy drawing answers late, not never
    return driver


def largest_response(driver) -> int:
    """The largest response body to a Dash callback since the last call (bytes on the wire)."""
    urls, sizes = {}, []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.responseReceived":
            urls[params["requestId"]] = params["response"]["url"]
        elif message["method"] == "Network.loadingFinished" and "_dash-update-component" in urls.get(
                params["requestId"], ""):
            sizes.append(params["encodedDataLength"])
    return max(sizes, default=0)


def wait_until(driver, script: str, timeout: float = TIMEOUT_S) -> float:
    """Seconds until ``script`` (JavaScript returning a boolean) holds."""
    started = time.perf_counter()
    while not driver.execute_script(script):
        if time.perf_counter() - started > timeout:
            raise TimeoutError(script)
        time.sleep(0.05)
    return time.perf_counter() - started


def charts_drawn(since_marker: str) -> str:
    """JavaScript: every detail chart holds data, and the page is not the one marked ``since_marker``."""
    checks = " && ".join(
        f"(document.querySelector('#{chart} .js-plotly-plot') || {{}}).data?.length > 0" for chart in CHARTS)
    return f"return window.__marker !== '{since_marker}' && {checks};"


def arm_redraw(driver) -> None:
    """From now on, note each detail chart that Plotly draws again (its ``plotly_afterplot`` event)."""
    driver.execute_script("window.__redrawn = {};" + "".join(
        f"document.querySelector('#{chart} .js-plotly-plot').on('plotly_afterplot', "
        f"() => {{ window.__redrawn['{chart}'] = true; }});" for chart in CHARTS))


def charts_redrawn() -> str:
    return "return " + " && ".join(f"window.__redrawn['{chart}'] === true" for chart in CHARTS) + ";"


def text_of(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def choose_easy_basic_all_jobs(driver) -> None:
    for box in driver.find_elements(By.CSS_SELECTOR, f"#{page.ids.POLICIES} input"):
        if box.is_selected() != (box.get_attribute("value") == "easy"):
            box.click()
    for box in driver.find_elements(By.CSS_SELECTOR, f"#{page.ids.SCENARIOS} input"):
        if box.is_selected() != (box.get_attribute("value") == "BASIC"):
            box.click()
    field = driver.find_element(By.ID, page.ids.MAX_JOBS)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.BACKSPACE)   # empty: every job


def upload(driver, trace: Path) -> float:
    """Seconds from choosing ``trace`` in the upload field to its workload summary on the page."""
    field = driver.find_element(By.CSS_SELECTOR, f"#{page.ids.TRACE_UPLOAD} input[type=file]")
    started = time.perf_counter()
    field.send_keys(str(trace))
    wait_until(driver, f"return document.getElementById('{page.ids.TRACE_INFO}').innerText.includes('{trace.name}')")
    return time.perf_counter() - started


def run_and_wait(driver, expected_message: str) -> None:
    driver.find_element(By.ID, page.ids.PANEL.run).click()
    wait_until(driver, f"return document.getElementById('{page.ids.PANEL.message}').innerText.includes('{expected_message}')")


def measure(driver, server: Server, trace: Path, other: Path, label: str) -> dict:
    driver.get(server.url + "/batch")
    driver.execute_script("window.localStorage.clear()")
    driver.get(server.url + "/batch")
    wait_until(driver, f"return document.getElementById('{page.ids.TRACE_INFO}')?.innerText.includes('hpc2n')", 60)
    choose_easy_basic_all_jobs(driver)
    driver.get_log("performance")
    server.reset_peak()
    upload_s = upload(driver, trace)
    hardware = text_of(driver, page.ids.HARDWARE)
    driver.execute_script("window.__marker = 'before-run'")
    started = time.perf_counter()
    driver.find_element(By.ID, page.ids.PANEL.run).click()
    wait_until(driver, f"return document.getElementById('{page.ids.PANEL.message}').innerText.includes('run(s)')")
    wait_until(driver, charts_drawn("none"))
    cold_s = time.perf_counter() - started
    engine_s = float(driver.execute_script(
        f"const t = document.getElementById('{page.ids.PANEL.summary}'); const cells = [...t.querySelectorAll('th')]"
        ".map(c => c.innerText.trim()); const i = cells.indexOf('wall (s)');"
        " return t.querySelector('tbody tr:last-child').children[i].innerText;"))
    largest_cold = largest_response(driver)
    upload(driver, other)
    run_and_wait(driver, "1 run(s)")
    wait_until(driver, charts_drawn("none"))
    upload(driver, trace)
    time.sleep(1)   # the page settles (summary, hardware statement) before the clock starts
    arm_redraw(driver)
    started = time.perf_counter()
    run_and_wait(driver, "1 from the cache")
    wait_until(driver, charts_redrawn())
    again_s = time.perf_counter() - started
    started = time.perf_counter()
    driver.refresh()
    wait_until(driver, charts_drawn("before-run"))
    cached_s = time.perf_counter() - started
    heap = driver.execute_script("return performance.memory.usedJSHeapSize")
    largest = max(largest_cold, largest_response(driver))
    return {"trace": label, "upload_s": upload_s, "cold_s": cold_s, "engine_s": engine_s, "again_s": again_s, "cached_s": cached_s,
            "largest_mb": largest / 2**20, "heap_mb": heap / 2**20, "rss_mb": server.peak_rss / 2**20,
            "hardware": hardware.splitlines()[0] if hardware else ""}


def first_jobs_of(source: Path, count: int, target: Path) -> Path:
    """The header and first ``count`` jobs of an SWF trace, gzipped."""
    with gzip.open(source, "rt") as lines, gzip.open(target, "wt") as out:
        jobs = 0
        for line in lines:
            if not line.startswith(";"):
                jobs += 1
                if jobs > count:
                    break
            out.write(line)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the sample and 50,000 jobs only")
    parser.add_argument("--ricc", type=Path, default=DEFAULT_RICC)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="site-scale-"))
    other = work / "other-trace.swf"   # the run on the page before a result is re-opened
    lines = (ROOT / "sample_traces" / "hpc2n-excerpt.swf").read_text().splitlines(keepends=True)
    other.write_text("".join(line for number, line in enumerate(lines) if line.startswith(";") or number < 400))
    sample = work / "hpc2n-upload.swf"
    shutil.copy(ROOT / "sample_traces" / "hpc2n-excerpt.swf", sample)
    traces = [(sample, "HPC2N sample (3,000 jobs)"),
              (first_jobs_of(args.ricc, 50_000, work / "ricc-first-50000.swf.gz"), "RICC, first 50,000 jobs")]
    if not args.quick:
        traces.append((args.ricc, "RICC, all 447,794 jobs"))
    server = Server(work / "data")
    driver = browser()
    rows = []
    try:
        for trace, label in traces:
            rows.append(measure(driver, server, trace, other, label))
            print(f"  {label}: done", file=sys.stderr)
    finally:
        driver.quit()
        server.stop()
    print(f"{'trace':<28} {'upload→summary':>14} {'Run→charts':>11} {'engine':>7} {'margin':>7} "
          f"{'reopen→charts':>13} {'reload→charts':>13} {'largest resp.':>13} {'JS heap':>8} {'server RSS':>10}")
    for row in rows:
        print(f"{row['trace']:<28} {row['upload_s']:>13.2f}s {row['cold_s']:>10.2f}s {row['engine_s']:>6.1f}s "
              f"{row['cold_s'] - row['engine_s']:>+6.1f}s {row['again_s']:>12.2f}s {row['cached_s']:>12.2f}s {row['largest_mb']:>10.2f} MB "
              f"{row['heap_mb']:>5.0f} MB {row['rss_mb']:>7.0f} MB")
    for row in rows:
        print(f"  {row['trace']}: {row['hardware']}")
    print("goals: RICC upload ≤ 3 s; cached re-render (re-open, reload) ≤ 1 s; Run→charts ≤ engine + 2 s; largest response ≤ 3 MB")


if __name__ == "__main__":
    main()
