"""CPU time the server spends on one page load, in process: what bench/load.py's readers ask for, while runs go.

A page load is what bench/load.py's readers do (and the browser's renderer):
the page's HTML, ``/_dash-layout``, ``/_dash-dependencies`` and the shell's
routing callback that builds the page. Each request is made with Flask's
test client in this thread, so ``time.thread_time()`` around it is the CPU
time the server spent on it alone: a figure that other work on the machine
does not change (wall-clock figures on a shared machine do). The data
directory holds what it holds after load.py's sessions (``--runs`` finished
runs, ``--scenarios`` saved scenarios), and ``--flood`` long runs are started
through the scenario page's Run button before measuring, as load.py's flooder
does, so the run manager's files are as busy as under the flood.

Prints the median CPU milliseconds per page load and per request, for each
page; the CPU time of the Workspace page's lists (the callback its browser
fires as it opens: every store listed, and with a login every item's sharing
record read); the CPU priority of the flood's run processes beside this
server's; then (``--profile``) the functions that took the most CPU time
over all page loads (cProfile, cumulative). ``--login`` measures with a
login on (``SCHEDSCOPE_USER_HEADER``, each request naming its user).

    .venv/bin/python bench/page_cpu.py [--loads 30] [--runs 10] [--scenarios 150] [--flood 4] [--login] [--profile]
    .venv/bin/python bench/page_cpu.py --root <another checkout>   # the same on another build of the app
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

PAGES = ("/", "/batch", "/fairshare", "/workspace", "/compare")
CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)
HTML = {"Accept": "text/html"}


def small_scenario(seed: int) -> dict:
    """load.py's session scenario: EASY on the first 300 jobs of the HPC2N excerpt, synthetic failures."""
    return {"name": f"load seed {seed}", "engine": "batch", "policy": "easy", "seed": seed,
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 300},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines",
                      "failures": {"kind": "synthetic", "afc": 0.002}, "requirements": False, "estimates": "perfect"}}


def long_scenario(seed: int) -> dict:
    """load.py's flood scenario: local search on 1,500 jobs, several seconds each."""
    return {"engine": "batch", "policy": "ls", "seed": seed, "name": f"flood {seed}",
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 1500},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


class Browser:
    """One renderer over Flask's test client: the dependencies of the last page, and its ``end_id``."""

    def __init__(self, server, headers: dict | None = None):
        self.client = server.test_client()
        self.headers = dict(headers or {})
        self.end_id = None
        self.dependencies: list[dict] = []

    def get(self, path: str, headers: dict | None = None):
        answer = self.client.get(path, headers={**self.headers, **(headers or {})})
        assert answer.status_code == 200, f"GET {path}: {answer.status_code}"
        return answer

    def post(self, dependency: dict, values: dict, changed: tuple[str, str]):
        def filled(items):
            return [{**i, "value": values.get((i["id"], i["property"]))} for i in items]
        output = dependency["output"]
        outputs = [{"id": part.rpartition(".")[0], "property": part.rpartition(".")[2]}
                   for part in (output[2:-2].split("...") if output.startswith("..") else [output])]
        body = {"output": output, "outputs": outputs if output.startswith("..") else outputs[0],
                "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
                "changedPropIds": [f"{changed[0]}.{changed[1]}"]}
        answer = self.client.post(f"/_dash-update-component?endId={self.end_id or ''}", data=json.dumps(body),
                                  content_type="application/json", headers=self.headers)
        assert answer.status_code in (200, 204), f"callback {output}: {answer.status_code} {answer.data[:300]!r}"
        return answer

    def callback(self, component_id: str, prop: str) -> dict:
        [found] = [d for d in self.dependencies if {"id": component_id, "property": prop} in d["inputs"]
                   and not d.get("clientside_function")]
        return found


def page_load(browser: Browser, path: str, location: str) -> dict[str, float]:
    """CPU seconds the server spent on each request of one page load (made in this thread; the client's own
    parsing of the answers is not counted)."""
    spent = {}
    started = time.thread_time()
    html = browser.get(path, headers=HTML).data
    spent["html"] = time.thread_time() - started
    browser.end_id = json.loads(CONFIG.search(html.decode()).group(1)).get("end_id")
    started = time.thread_time()
    browser.get("/_dash-layout")
    spent["layout"] = time.thread_time() - started
    started = time.thread_time()
    dependencies = browser.get("/_dash-dependencies").data
    spent["dependencies"] = time.thread_time() - started
    browser.dependencies = json.loads(dependencies)
    route = browser.callback(location, "pathname")
    started = time.thread_time()
    browser.post(route, {(location, "pathname"): path, (location, "search"): ""}, (location, "pathname"))
    spent["route"] = time.thread_time() - started
    return spent


def fill(data: Path, runs: int, scenarios: int) -> None:
    """The data directory after load.py's sessions: finished runs and saved scenarios."""
    from components.services.runs import ResultCache
    from components.services.workspace import ScenarioStore

    store = ScenarioStore(data / "scenarios")
    results = ResultCache(data / "results")
    for seed in range(1, runs + 1):
        results.run(store.save(small_scenario(seed), f"load seed {seed}")["scenario"])
    for seed in range(runs + 1, scenarios + 1):
        store.save(long_scenario(10_000 + seed), f"flood {seed}")


def workspace_lists(browser: Browser) -> float:
    """CPU seconds the server spent on the Workspace page's lists (its Refresh callback, as the page opens)."""
    from components.pages.workspace import ids

    refresh = browser.callback(ids.REFRESH, "n_clicks")
    started = time.thread_time()
    browser.post(refresh, {}, (ids.REFRESH, "n_clicks"))
    return time.thread_time() - started


def start_flood(server, data: Path, count: int, headers: dict) -> int:
    """Press Run on ``count`` long scenarios, as load.py's flooder does; returns how many started."""
    from components.services.workspace import ScenarioStore
    try:
        from components.pages.scenario import ids
    except ImportError:   # an older build: the scenario page was one module
        from components import scenario_page as ids

    browser = Browser(server, headers)
    store = ScenarioStore(data / "scenarios")
    first = store.save(long_scenario(20_000), "flood")["hash"]
    html = browser.get(f"/scenario/{first}", headers=HTML).data.decode()
    browser.end_id = json.loads(CONFIG.search(html).group(1)).get("end_id")
    browser.dependencies = json.loads(browser.get("/_dash-dependencies").data)
    run = browser.callback(ids.RUN, "n_clicks")
    started = 0
    for seed in range(20_001, 20_001 + count):
        scenario_hash = store.save(long_scenario(seed), f"flood {seed}")["hash"]
        answer = browser.post(run, {(ids.RUN, "n_clicks"): 1, (ids.HASH, "data"): scenario_hash,
                                    (ids.VERSION, "data"): 0}, (ids.RUN, "n_clicks"))
        started += "cacheKey" in json.loads(answer.data or b"{}")
    return started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the checkout whose app is measured (default: this one)")
    parser.add_argument("--loads", type=int, default=30, help="page loads per page")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--scenarios", type=int, default=150)
    parser.add_argument("--flood", type=int, default=4, help="long runs started before measuring (0: none)")
    parser.add_argument("--login", action="store_true", help="a login on (a proxy's user header)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)   # scenarios name sample traces relative to the checkout
    headers = {}
    if args.login:
        os.environ["SCHEDSCOPE_USER_HEADER"] = "X-Forwarded-User"
        headers = {"X-Forwarded-User": "ada"}
    from app import create_app
    from components import shell

    with tempfile.TemporaryDirectory(prefix="schedscope-page-cpu-") as directory:
        data = Path(directory) / "data"
        fill(data, args.runs, args.scenarios)
        app = create_app(data)
        browser = Browser(app.server, headers)
        for path in PAGES:   # warm: imports, first-request set-up, caches a running server has
            page_load(browser, path, shell.LOCATION)
        flooding = start_flood(app.server, data, args.flood, headers) if args.flood else 0
        profile = cProfile.Profile() if args.profile else None
        spent: dict[str, list[dict]] = {path: [] for path in PAGES}
        for _ in range(args.loads):
            for path in PAGES:
                if profile:
                    profile.enable()
                spent[path].append(page_load(browser, path, shell.LOCATION))
                if profile:
                    profile.disable()
        print(f"{root.name}: CPU time per page load, median of {args.loads} (Flask test client, this thread; "
              f"{args.runs} runs and {args.scenarios} scenarios stored, {flooding} long runs started)")
        parts = ("html", "layout", "dependencies", "route")
        print(f"  {'page':<12} {'total ms':>9} " + " ".join(f"{p:>13}" for p in parts))
        totals = []
        for path, loads in spent.items():
            total = statistics.median(sum(load.values()) for load in loads)
            totals.append(total)
            print(f"  {path:<12} {total * 1e3:9.1f} "
                  + " ".join(f"{statistics.median(load[p] for load in loads) * 1e3:13.1f}" for p in parts))
        print(f"  mean over the pages: {statistics.mean(totals) * 1e3:.1f} ms CPU per page load")
        browser.get("/workspace", headers=HTML)
        browser.dependencies = json.loads(browser.get("/_dash-dependencies").data)
        lists = statistics.median(workspace_lists(browser) for _ in range(max(3, args.loads // 3)))
        print(f"  the Workspace page's lists: {lists * 1e3:.1f} ms CPU"
              f"{' (login on: sharing records read)' if args.login else ''}")
        runs = psutil.Process().children(recursive=True)   # the job processes the run manager forked
        if runs:
            print(f"  CPU priority (nice): this server {os.nice(0)}, its {len(runs)} run processes "
                  f"{sorted({run.nice() for run in runs})}")
        if profile:
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(args.top)
            print(text.getvalue())
        for run in psutil.Process().children(recursive=True):   # the flood's runs: stopped before their directory goes
            run.kill()
        psutil.wait_procs(psutil.Process().children(recursive=True), timeout=10)


if __name__ == "__main__":
    main()
