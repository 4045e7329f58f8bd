"""The batch page's trust panels and sizing on a real trace: what the browser is sent, and how long it takes.

On the RICC trace (447,794 jobs, or its first ``--jobs``), EASY with the
trace header's machine, run once into a scratch result cache, this prints:

* the log-vs-simulation and "why jobs waited" callback's response: the JSON
  bytes of its six outputs (headline, baseline, log vs simulation, error
  breakdown, why jobs waited over time and per group) and its time;
* ``pending.csv`` through the download route (streamed in chunks, as the
  page's link gets it): rows, bytes, time, and the largest chunk;
* a "How much hardware do I need?" search (mean wait ≤ ``--bound`` s, a pool of
  CPUs) on the first ``--size-jobs`` jobs, through the page's own background
  function: the answer, probes, wall time, and the largest progress report
  and final record in JSON bytes.

Goal: no callback response over 3 MB (the download is a file, not a callback).

    .venv/bin/python bench/trust_page_scale.py [--jobs N] [--size-jobs N] [--bound S] [--ricc PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from plotly.utils import PlotlyJSONEncoder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.pages.batch import sizing, trust  # noqa: E402
from components.services.runs import ResultCache  # noqa: E402

DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
GOAL_BYTES = 3 * 2**20


def size_of(value) -> int:
    return len(json.dumps(value, cls=PlotlyJSONEncoder).encode())


def scenario(path: str, jobs: int | None) -> dict:
    trace = {"path": path, **({"max_jobs": jobs} if jobs else {})}
    return {"engine": "batch", "policy": "easy", "model": {"trace": trace, "estimates": "trace"}}


def record_of(result) -> list[dict]:
    return [{"scenario": "BASIC", "policy": "easy", "label": "EASY", "seed": 1, "hash": result.scenario_hash}]


def panels(cache: ResultCache, result) -> None:
    started = time.perf_counter()
    outputs = trust.log_panel(cache, record_of(result), "BASIC", "EASY", None)
    seconds = time.perf_counter() - started
    sizes = [size_of(value) for value in outputs]
    names = ("headline", "baseline", "log vs simulation", "error breakdown", "why waited", "why waited per group")
    print(f"  trust panel callback: {seconds:.1f} s, {sum(sizes) / 2**20:.3f} MB "
          f"({sum(sizes) / GOAL_BYTES:.3f} of the 3 MB goal)")
    for name, size in zip(names, sizes):
        print(f"    {name:<22} {size / 1024:8.1f} KB")


def pending_download(cache: ResultCache, result) -> None:
    from flask import Flask

    from components.pages.batch import charts
    from components.services import downloads

    server = Flask(__name__)
    downloads.register(server, cache)
    href = charts.frame_links(record_of(result), "BASIC", "EASY")["pending"][0]
    started = time.perf_counter()
    response = server.test_client().get(href)
    chunks = [len(chunk) for chunk in response.response]
    seconds = time.perf_counter() - started
    rows = len(result.extra("pending"))
    print(f"  pending.csv via the route: {rows:,} rows, {sum(chunks) / 2**20:.1f} MB in {len(chunks)} chunks "
          f"(largest {max(chunks) / 2**20:.1f} MB), {seconds:.1f} s, streamed={response.is_streamed}")


def size_search(cache: ResultCache, path: str, jobs: int, bound: float) -> None:
    result, _ = cache.run(scenario(path, jobs))
    reports = []
    started = time.perf_counter()
    finished, message = sizing.search(cache, reports.append, 1, "mean_wait_s", bound, "pool", record_of(result),
                                      "BASIC", "EASY")
    seconds = time.perf_counter() - started
    largest = max((size_of(list(report)) for report in reports), default=0)
    print(f"  sizing, first {jobs:,} jobs, mean wait <= {bound:g} s: {message.children}")
    print(f"    {sizing.figures.sentence(finished)}")
    print(f"    {len(finished['probes'])} probes in {seconds:.0f} s; largest progress report {largest / 1024:.1f} KB, "
          f"final record {size_of(finished) / 1024:.1f} KB, probes figure "
          f"{size_of(sizing.figures.probes_figure(finished)) / 1024:.1f} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", default=str(DEFAULT_RICC))
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs (default: all)")
    parser.add_argument("--size-jobs", type=int, default=20_000)
    parser.add_argument("--bound", type=float, default=600.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trust-bench-") as scratch:
        cache = ResultCache(Path(scratch) / "results")
        started = time.perf_counter()
        result, _ = cache.run(scenario(args.ricc, args.jobs))
        print(f"RICC EASY, {len(result.jobs):,} jobs: run {time.perf_counter() - started:.0f} s")
        panels(cache, result)
        pending_download(cache, result)
        if args.size_jobs:
            size_search(cache, args.ricc, args.size_jobs, args.bound)


if __name__ == "__main__":
    main()
