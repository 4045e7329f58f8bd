"""Batch engine throughput: jobs simulated per second under FCFS, EASY and Conservative.

    .venv/bin/python bench/batch_throughput.py            # full RICC trace + HPC2N excerpt
    .venv/bin/python bench/batch_throughput.py --quick    # first 50,000 RICC jobs

Prints, per trace and policy, the wall time of the simulation (parsing
excluded: the trace is read once first and served from the in-process
cache), jobs per second, and the scheduler's CPU time. Local Search's cost
is reported per simulated day on the HPC2N excerpt. Goals on a 2-core
machine: the whole RICC trace (447,794 jobs) under EASY in <= 30 s and under
Conservative backfilling in <= 120 s.
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
HPC2N = ROOT / "sample_traces" / "hpc2n-excerpt.swf"


def scenario(path: Path, policy: str, max_jobs: int | None, **model) -> dict:
    return {"engine": "batch", "policy": policy,
            "model": {"trace": {"path": str(path), "max_jobs": max_jobs}, **model}}


def measure(path: Path, policy: str, max_jobs: int | None, **model):
    started = perf_counter()
    result = run_scenario(scenario(path, policy, max_jobs, **model))
    wall = perf_counter() - started
    jobs = len(result.jobs)
    return wall, jobs, result.summary_value("scheduler_cpu_s"), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 50,000 RICC jobs only")
    parser.add_argument("--ricc", type=Path, default=RICC, help="path of RICC-2010-2.swf.gz")
    args = parser.parse_args()
    ricc_jobs = 50_000 if args.quick else None
    traces = [("HPC2N excerpt", HPC2N, None, {"machines_path": str(ROOT / "sample_traces" / "hpc2n-excerpt.machines")})]
    if args.ricc.exists():
        traces.append(("RICC 2010" + (" (50k)" if args.quick else ""), args.ricc, ricc_jobs, {}))
    else:
        print(f"note: {args.ricc} not found; RICC rows skipped")

    print(f"{'trace':<18} {'policy':<6} {'jobs':>8} {'wall s':>8} {'jobs/s':>9} {'sched CPU s':>11}")
    for label, path, max_jobs, model in traces:
        measure(path, "fcfs", 1000, **model)  # read the trace once; later runs hit the parse cache
        for policy in ("fcfs", "easy", "cons"):
            wall, jobs, scheduler, _ = measure(path, policy, max_jobs, **model)
            print(f"{label:<18} {policy:<6} {jobs:>8} {wall:>8.2f} {jobs / wall:>9.0f} {scheduler:>11.2f}")

    wall, jobs, scheduler, result = measure(HPC2N, "ls", None, **traces[0][3])
    days = result.summary_value("makespan_s") / 86400
    print(f"\nLocal Search on the HPC2N excerpt: {jobs} jobs over {days:.1f} simulated days, "
          f"{wall:.2f} s wall, scheduler {scheduler:.2f} CPU s = {scheduler / days:.3f} CPU s per simulated day")


if __name__ == "__main__":
    main()
