"""Backfilling under a long backlog: RICC on its own 8,192 CPUs and on the 14 MetaCentrum clusters.

    .venv/bin/python bench/batch_overload.py            # full RICC trace (447,794 jobs)
    .venv/bin/python bench/batch_overload.py --quick    # first 60,000 RICC jobs

The RICC trace on its own hardware (the header's cluster: a model with no
``clusters``) keeps a short queue; on the MetaCentrum clusters
(``sample_traces/metacentrum-2009.machines``, 806 CPUs) it is overloaded and
the backlog grows to ~150,000 waiting jobs. Goal: EASY and Conservative
backfilling take at most twice as long on the overloaded clusters as on the
trace's own CPUs, i.e. a scheduling pass costs about the same whatever the
length of the queue.

Prints, per policy and hardware, the CPUs, the jobs, the wall time of the
simulation (the trace is parsed once first and served from the in-process
cache) and the ratio overloaded / own hardware.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.runner import run_scenario  # noqa: E402

RICC = Path("/work/shared/traces/RICC-2010-2.swf.gz")
METACENTRUM = ROOT / "sample_traces" / "metacentrum-2009.machines"
HARDWARE = {"own": {}, "MetaCentrum": {"machines_path": str(METACENTRUM)}}
POLICIES = ("easy", "cons")


def scenario(path: Path, policy: str, max_jobs: int | None, hardware: dict) -> dict:
    return {"engine": "batch", "policy": policy,
            "model": {"trace": {"path": str(path), "max_jobs": max_jobs}, **hardware}}


def measure(path: Path, policy: str, max_jobs: int | None, hardware: dict) -> tuple[float, int, int]:
    """Wall seconds of one run, its jobs and its CPUs."""
    started = perf_counter()
    result = run_scenario(scenario(path, policy, max_jobs, hardware))
    return perf_counter() - started, len(result.jobs), int(result.summary_value("cpus"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 60,000 RICC jobs only")
    parser.add_argument("--ricc", type=Path, default=RICC, help="path of RICC-2010-2.swf.gz")
    args = parser.parse_args()
    if not args.ricc.exists():
        sys.exit(f"{args.ricc} not found")
    max_jobs = 60_000 if args.quick else None
    measure(args.ricc, "fcfs", 1000, {})  # read the trace once; later runs hit the parse cache

    print(f"{'policy':<6} {'hardware':<12} {'CPUs':>6} {'jobs':>8} {'wall s':>8} {'ratio':>6}")
    for policy in POLICIES:
        own_wall = None  # HARDWARE lists the trace's own CPUs first
        for label, hardware in HARDWARE.items():
            wall, jobs, cpus = measure(args.ricc, policy, max_jobs, hardware)
            if own_wall is None:
                own_wall, ratio = wall, ""
            else:
                ratio = f"{wall / own_wall:.2f}"
            print(f"{policy:<6} {label:<12} {cpus:>6} {jobs:>8} {wall:>8.2f} {ratio:>6}", flush=True)


if __name__ == "__main__":
    main()
