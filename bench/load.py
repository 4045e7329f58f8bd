"""Load on the production server: concurrent sessions each running a simulation, then one client flooding runs.

Serves the app as ``make run`` does (gunicorn, ``app:create_server()``,
``--workers 2 --threads 8`` unless told otherwise) on a free loopback port,
with a fresh data directory and the embedded run manager, and drives it over
HTTP as the browser's renderer does (``tests/support/load.py``'s sessions):

1. ``--sessions`` (50) concurrent sessions, each opening a scenario's
   permalink, pressing Run (a small batch simulation: EASY on 300 HPC2N jobs),
   polling until the result arrives and showing it. Prints errors, and the
   run and whole-session latencies (p50/p95).
2. A mixed load for ``--flood-seconds`` (30): one client presses Run on a new
   long scenario every ``--flood-every`` seconds (local search on 1,500 jobs,
   several seconds each), while ``--readers`` (8) other clients keep loading
   pages (HTML, layout, callback list, and the page's content callback).
   Prints the readers' page-load p50/p95 (goal: p95 under 1 s) and how many
   of the flooder's runs were started and how many refused by the
   per-client cap (``SCHEDSCOPE_MAX_RUNS_PER_CLIENT``).

    .venv/bin/python bench/load.py [--sessions 50] [--workers 2] [--threads 8]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from components import shell  # noqa: E402
from components.pages import scenario as scenario_page  # noqa: E402
from components.services.workspace import ScenarioStore  # noqa: E402
from tests.support.dash_client import DashClient  # noqa: E402
from tests.support.load import concurrent_sessions, percentile  # noqa: E402
from tests.support.processes import free_port  # noqa: E402

PAGES = ("/", "/batch", "/fairshare", "/workspace", "/compare")


def long_scenario(seed: int) -> dict:
    return {"engine": "batch", "policy": "ls", "seed": seed, "name": f"flood {seed}",
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 1500},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


def serve(data: Path, workers: int, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "SCHEDSCOPE_DATA": str(data), "SCHEDSCOPE_HOST": "127.0.0.1"}
    env.pop("REDIS_URL", None)
    command = [str(ROOT / ".venv" / "bin" / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
               "--threads", str(threads), "--timeout", "300", "--graceful-timeout", "30", "--error-logfile", "-",
               "app:create_server()"]
    with open(log, "wb") as out:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=5).read()
            return server, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start:\n{log.read_text(errors='replace')[-3000:]}") from None
            time.sleep(0.3)


def report_sessions(url: str, data: Path, count: int) -> None:
    _, outcomes, wall = concurrent_sessions(url, data, count, time.monotonic() + 600)
    errors = [o for o in outcomes if isinstance(o, Exception)]
    done = [o for o in outcomes if not isinstance(o, Exception)]
    print(f"{count} concurrent sessions: {len(errors)} errors, wall {wall:.1f} s")
    for error in errors[:5]:
        print(f"  error: {type(error).__name__}: {str(error)[:300]}")
    if done:
        runs = [o["run_s"] for o in done]
        sessions = [o["session_s"] for o in done]
        print(f"  run (Run pressed -> result shown): p50 {percentile(runs, 50):.2f} s, "
              f"p95 {percentile(runs, 95):.2f} s, max {max(runs):.2f} s")
        print(f"  whole session (open page .. result shown): p50 {percentile(sessions, 50):.2f} s, "
              f"p95 {percentile(sessions, 95):.2f} s")


def load_page(url: str, path: str) -> float:
    """Seconds to load ``path`` as the renderer does: HTML, layout, callback list, the page's content."""
    started = time.monotonic()
    client = DashClient(url, time.monotonic() + 60)
    client.open_page(path)
    content = client.call(client.callback(shell.LOCATION, "pathname"),
                          {(shell.LOCATION, "pathname"): path, (shell.LOCATION, "search"): ""})
    assert content[shell.CONTENT]["children"], f"{path} rendered nothing"
    return time.monotonic() - started


def mixed(url: str, data: Path, seconds: float, every: float, readers: int) -> None:
    store = ScenarioStore(data / "scenarios")
    stop = threading.Event()
    flood = {"started": 0, "refused": 0, "other": 0}

    def flooder():
        client = DashClient(url, time.monotonic() + seconds + 120)
        client.open_page("/scenario/" + store.save(long_scenario(10_000), "flood")["hash"])
        run = client.callback(scenario_page.ids.RUN, "n_clicks")
        seed = 10_000
        while not stop.is_set():
            seed += 1
            scenario_hash = store.save(long_scenario(seed), f"flood {seed}")["hash"]
            values = {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
                      (scenario_page.ids.VERSION, "data"): 0}
            try:
                _, body = client.request("/_dash-update-component",
                                         client.payload(run, values, (scenario_page.ids.RUN, "n_clicks")),
                                         [("endId", client.end_id)])
                answer = json.loads(body)
                flood["started" if "cacheKey" in answer else "refused" if "Not started" in body.decode() else "other"] += 1
            except Exception:  # noqa: BLE001 -- counted
                flood["other"] += 1
            stop.wait(every)

    latencies, errors = [], []

    def reader(index: int):
        n = index
        while not stop.is_set():
            try:
                latencies.append(load_page(url, PAGES[n % len(PAGES)]))
            except Exception as exc:  # noqa: BLE001 -- counted and shown
                errors.append(exc)
            n += 1

    threads = [threading.Thread(target=flooder)] + [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(120)
    print(f"mixed load, {seconds:.0f} s: one client pressing Run every {every:g} s "
          f"({flood['started']} runs started, {flood['refused']} refused by the per-client cap, "
          f"{flood['other']} other answers), {readers} clients loading pages")
    if latencies:
        print(f"  others' page loads: {len(latencies)}, {len(errors)} errors; p50 {percentile(latencies, 50):.3f} s, "
              f"p95 {percentile(latencies, 95):.3f} s, max {max(latencies):.3f} s (goal: p95 < 1 s)")
    for error in errors[:5]:
        print(f"  error: {type(error).__name__}: {str(error)[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--flood-seconds", type=float, default=30.0)
    parser.add_argument("--flood-every", type=float, default=0.25)
    parser.add_argument("--readers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="schedscope-load-") as directory:
        data = Path(directory) / "data"
        server, url = serve(data, args.workers, args.threads, Path(directory) / "server.log")
        try:
            print(f"gunicorn app:create_server(), {args.workers} workers x {args.threads} threads, {os.cpu_count()} CPUs")
            report_sessions(url, data, args.sessions)
            mixed(url, data, args.flood_seconds, args.flood_every, args.readers)
        finally:
            # The server's group: gunicorn and the runs its workers forked (a run ignores the workers'
            # graceful SIGTERM and would finish its simulation first), all stopped.
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(server.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if server.poll() is None:
                server.wait(30)


if __name__ == "__main__":
    main()
