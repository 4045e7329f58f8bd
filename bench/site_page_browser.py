"""The Site study page at full size in a real browser: the whole RICC trace uploaded, run, a group clicked, compared.

Starts ``python app.py`` with an empty data directory (as
``bench/site_scale.py`` does, whose server, browser and network-log readers
this script shares), drives the Site study page in headless Chromium as a
site would, and prints each step's time:

* upload → the page names the trace and its job count;
* all jobs (the "first jobs only" field emptied) → the organisation derived
  from them drawn in the tree editor (one node per group and user);
* Run with the page's default orders (FCFS and H-DRF, EASY) → the stakeholder
  summary and the linked charts drawn;
* a click on a group's line → every group chart highlights it;
* a second site uploaded (the HPC2N log of the Alea traces, else the shipped
  sample) → its workload beside this one; Run → the four runs' results table;

then the largest callback response (bytes on the wire, from Chromium's
network log), the browser's JavaScript heap and the server's peak resident
memory, and saves screenshots of the summary and the charts in the output
folder (``--shots``, default ``out/screenshots``).

    .venv/bin/python bench/site_page_browser.py [--ricc PATH] [--max-jobs N] [--shots DIR]

Goal (issue "Site study" at real size): every callback response ≤ 3 MB.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from site_scale import DEFAULT_RICC, Server, browser, largest_response, wait_until  # noqa: E402

from components.pages.site import ids  # noqa: E402

ALEA_HPC2N = ROOT.parent / "shared" / "traces" / "alea_hpc2n.swf"
BUDGET_MB = 3.0

# The line of a group (its customdata) in a chart, clicked as Plotly reports a click.
CLICK_GROUP = """
const gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');
const index = gd.data.findIndex(trace => Array.isArray(trace.customdata) && !trace.name.endsWith('entitled'));
const trace = gd.data[index];
gd.emit('plotly_click', {points: [{curveNumber: index, pointNumber: 0, pointIndex: 0, data: trace,
                                   x: trace.x[0], y: trace.y[0], customdata: trace.customdata[0]}]});
return trace.customdata[0];
"""


def contains(element_id: str, text: str) -> str:
    return f"return (document.getElementById('{element_id}')?.innerText || '').includes({text!r});"


def drawn(graph: str) -> str:
    return f"return (document.querySelector('#{graph} .js-plotly-plot') || {{}}).data?.length > 0;"


def step(steps: list, label: str, started: float) -> None:
    steps.append((label, time.perf_counter() - started))
    print(f"  {label}: {steps[-1][1]:.1f} s", file=sys.stderr)


def upload(driver, box: str, trace: Path) -> None:
    driver.find_element(By.CSS_SELECTOR, f"#{box} input[type=file]").send_keys(str(trace))


def session(driver, server: Server, trace: Path, second: Path, max_jobs: int | None, shots: Path) -> dict:
    steps: list[tuple[str, float]] = []
    driver.get(server.url + "/site")
    driver.execute_script("window.localStorage.clear()")
    driver.get(server.url + "/site")
    wait_until(driver, contains(ids.ORG_ORIGIN, "derived"), 120)
    driver.get_log("performance")
    server.reset_peak()
    started = time.perf_counter()
    upload(driver, ids.UPLOAD, trace)
    wait_until(driver, contains(ids.UPLOAD_MSG, f"{trace.name}: "))
    step(steps, "upload → trace named", started)
    wait_until(driver, contains(ids.ORG_ORIGIN, f"derived from {trace.name}"), 300)
    step(steps, "upload → organisation of its first jobs", started)
    jobs = re.search(r"([\d,]+) jobs", driver.find_element(By.ID, ids.UPLOAD_MSG).text).group(1)
    started = time.perf_counter()
    field = driver.find_element(By.ID, ids.MAX_JOBS)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.BACKSPACE)
    if max_jobs:
        field.send_keys(str(max_jobs))
    field.send_keys(Keys.ENTER)
    expected = f"first {max_jobs:,} jobs" if max_jobs else f", {jobs} jobs"
    wait_until(driver, contains(ids.ORG_ORIGIN, expected), 300)
    origin = driver.find_element(By.ID, ids.ORG_ORIGIN).text
    # The same callback draws the tree (a large one with its users folded into their groups' labels).
    wait_until(driver, f"return document.getElementById('{ids.EDITOR.tree}')?._cyreg?.cy.nodes().length > 1", 300)
    step(steps, "all jobs → organisation drawn", started)
    started = time.perf_counter()
    driver.find_element(By.ID, ids.PANEL.run).click()
    wait_until(driver, contains(ids.PANEL.message, "2 run(s)"))
    for graph in (ids.SHARES, ids.ISOLATION, ids.UTILISATION, ids.WAITS):   # killed jobs: none without failures
        wait_until(driver, drawn(graph))
    wait_until(driver, contains(ids.STAKEHOLDERS, "% of CPU time"))
    step(steps, "Run (FCFS, H-DRF; EASY) → summary and charts", started)
    run_message = driver.find_element(By.ID, ids.PANEL.message).text
    started = time.perf_counter()
    group = driver.execute_script(CLICK_GROUP, ids.SHARES)
    wait_until(driver, contains(ids.GROUP_MSG, f"Highlighted: {group}"))
    step(steps, f"click {group} → highlighted", started)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(shots / "site-full-summary.png"))
    driver.execute_script(f"document.getElementById('{ids.SHARES}').scrollIntoView()")
    driver.save_screenshot(str(shots / "site-full-charts.png"))
    started = time.perf_counter()
    upload(driver, ids.SECOND_UPLOAD, second)
    wait_until(driver, contains(ids.SECOND_MSG, f"{second.name}: "))
    wait_until(driver, contains(ids.WORKLOAD_TABLE, "jobs per day"))
    step(steps, "second site → workloads compared", started)
    started = time.perf_counter()
    driver.find_element(By.ID, ids.PANEL.run).click()
    wait_until(driver, contains(ids.PANEL.message, "4 run(s)"))
    wait_until(driver, contains(ids.RESULTS_TABLE, "site B"))
    step(steps, "Run → both sites' results", started)
    driver.execute_script(f"document.getElementById('{ids.RESULTS_TABLE}').scrollIntoView()")
    driver.save_screenshot(str(shots / "site-full-compare.png"))
    return {"steps": steps, "origin": origin, "run_message": run_message, "largest_mb": largest_response(driver) / 2**20,
            "heap_mb": driver.execute_script("return performance.memory.usedJSHeapSize") / 2**20,
            "rss_mb": server.peak_rss / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", type=Path, default=DEFAULT_RICC, help="the site's trace (default: the RICC log)")
    parser.add_argument("--max-jobs", type=int, default=None, help="the first N jobs only (default: all)")
    parser.add_argument("--shots", type=Path, default=ROOT / "out" / "screenshots", help="where screenshots go")
    args = parser.parse_args()
    args.shots.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="site-page-browser-"))
    trace = work / args.ricc.name
    shutil.copy(args.ricc, trace)
    second = work / "hpc2n.swf"
    shutil.copy(ALEA_HPC2N if ALEA_HPC2N.exists() else ROOT / "sample_traces" / "hpc2n-excerpt.swf", second)
    server = Server(work / "data")
    driver = browser()
    try:
        row = session(driver, server, trace, second, args.max_jobs, args.shots)
    except Exception:
        driver.save_screenshot(str(args.shots / "site-full-failed.png"))
        print(f"failed; the page as it stood: {args.shots / 'site-full-failed.png'}", file=sys.stderr)
        raise
    finally:
        driver.quit()
        server.stop()
    print(f"trace: {trace.name}; {row['origin']}")
    for label, seconds in row["steps"]:
        print(f"  {label:<48} {seconds:>7.1f} s")
    print(f"the run panel said: {row['run_message']}")
    print(f"largest callback response: {row['largest_mb']:.2f} MB (goal ≤ {BUDGET_MB:g} MB); "
          f"JS heap {row['heap_mb']:.0f} MB; server peak RSS {row['rss_mb']:.0f} MB")
    print(f"screenshots: {', '.join(str(args.shots / name) for name in ('site-full-summary.png', 'site-full-charts.png', 'site-full-compare.png'))}")


if __name__ == "__main__":
    main()
