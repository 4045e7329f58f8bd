"""Result store: size on disk and load time of a large result, JSON text (before) vs Parquet bundle (now).

    .venv/bin/python bench/result_store.py                     # the whole RICC trace (447,794 jobs) under FCFS
    .venv/bin/python bench/result_store.py --max-jobs 50000    # a quicker look

Simulates FCFS on the RICC trace with the trace header's cluster (a few
seconds), and stores two results: the one simulated (the engine bins its
timeline to a few thousand rows) and the same with a dense timeline, one row
per job start and end (about 900,000 rows), as an engine recording every
change would give. For each, in one temporary directory and one process:

* before -- the JSON text ``SimulationResult.to_json`` gave the old cache
  (its file held this text behind a 5-byte header), loaded with ``from_json``;
* now -- the bundle ``ResultCache.put`` writes, loaded by ``get`` of a fresh
  ``ResultCache`` (no in-process memo), best of three.

Goal: the whole RICC result, even with the dense timeline, loads in well
under a second.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path
from time import perf_counter

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.services.runs import ResultCache  # noqa: E402
from sched_engine import SimulationResult, run_scenario  # noqa: E402
from sched_engine.core.result import timeline_frame  # noqa: E402

RICC = Path("/work/shared/traces/RICC-2010-2.swf.gz")
LOADS = 3


def ricc_result(path: Path, max_jobs: int | None) -> SimulationResult:
    # No clusters: the trace header's MaxNodes/MaxProcs define the one cluster.
    return run_scenario({"engine": "batch", "policy": "fcfs",
                         "model": {"trace": {"path": str(path), "max_jobs": max_jobs}, "clusters": []}})


def with_dense_timeline(result: SimulationResult) -> SimulationResult:
    """``result`` with a timeline of running jobs that has one row per job start and end."""
    jobs = result.jobs.dropna(subset=["start_time", "end_time"])
    times = np.concatenate([jobs["start_time"].to_numpy(), jobs["end_time"].to_numpy()])
    steps = np.concatenate([np.ones(len(jobs)), -np.ones(len(jobs))])
    order = np.argsort(times, kind="stable")
    timeline = timeline_frame(times[order], ["cluster"] * len(times), ["running_jobs"] * len(times),
                              np.cumsum(steps[order]))
    return SimulationResult(result.scenario, hashlib.sha256(b"dense " + result.scenario_hash.encode()).hexdigest(),
                            result.jobs, timeline, result.summary, result.wall_seconds)


def timed(load):
    started = perf_counter()
    value = load()
    return value, perf_counter() - started


def json_side(result: SimulationResult, directory: Path) -> tuple[int, float]:
    path = directory / "result.json"
    path.write_text(result.to_json())
    loaded, seconds = timed(lambda: SimulationResult.from_json(path.read_text()))
    assert loaded.scenario_hash == result.scenario_hash and len(loaded.timeline) == len(result.timeline)
    return path.stat().st_size, seconds


def bundle_side(result: SimulationResult, directory: Path) -> tuple[int, float]:
    ResultCache(directory).put(result)
    [path] = (directory / "store").glob("*.parquet.zip")
    seconds = []
    for _ in range(LOADS):
        loaded, took = timed(lambda: ResultCache(directory).get(result.scenario_hash))
        seconds.append(took)
    for name in ("jobs", "timeline", "summary"):   # bit for bit, dtypes included
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(result, name), check_exact=True)
    return path.stat().st_size, min(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=RICC, help="an SWF trace (default: RICC-2010-2.swf.gz)")
    parser.add_argument("--max-jobs", type=int, default=None, help="first jobs of the trace only")
    args = parser.parse_args()

    simulated, seconds = timed(lambda: ricc_result(args.trace, args.max_jobs))
    print(f"{args.trace.name}: {len(simulated.jobs):,} jobs under FCFS, simulated in {seconds:.1f} s\n")
    print(f"{'timeline':<20} {'rows':>9} {'JSON MB':>8} {'bundle MB':>10} {'smaller':>8} "
          f"{'JSON load s':>12} {'bundle load s':>14} {'faster':>7}")
    for label, result in (("as simulated", simulated), ("dense", with_dense_timeline(simulated))):
        with tempfile.TemporaryDirectory(prefix="result-store-") as scratch:
            old_size, old_load = json_side(result, Path(scratch))
            new_size, new_load = bundle_side(result, Path(scratch) / "results")
        print(f"{label:<20} {len(result.timeline):>9,} {old_size / 1e6:>8.1f} {new_size / 1e6:>10.1f} "
              f"{old_size / new_size:>7.1f}x {old_load:>12.2f} {new_load:>14.3f} {old_load / new_load:>6.0f}x")


if __name__ == "__main__":
    main()
