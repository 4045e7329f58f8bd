"""Elasticity engine speed: YARN, YARN-ME and Meganode at 100/100 and 3000/3000.

    .venv/bin/python bench/elastic_speed.py            # 100 jobs/100 nodes and 3000/3000
    .venv/bin/python bench/elastic_speed.py --quick    # 100/100 and 1000/1000

Traces: Table 2's uniform distribution at mid-sweep (tasks per job in
[1, 300], memory per task in [1, 6] GB, task duration in [1, 350] s),
arrivals uniform in [0, 1000] s, reducer (spill) penalty 1.5x -- the same
trace for every policy. Nodes: 16 cores and 10 GB (the paper's simulation),
and 32 cores and 128 GB. Prints the simulation's CPU time (trace generation
excluded), tasks, timeline-generator runs and the average job runtime.
Goal on a 2-core machine: <= 30 s for YARN and YARN-ME at 3000/3000 (the
reference Python simulator took 749 CPU-s for YARN at 3000/3000).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.elastic import simulate_jobs  # noqa: E402
from sched_engine.elastic.policies import YARN, YARNME, Meganode  # noqa: E402
from sched_engine.elastic.traces import generate_trace  # noqa: E402

NODE_SHAPES = ((16, 10_000), (32, 128_000))
PENALTY = {"kind": "spill", "factor": 1.5}
GOAL_S = 30.0


def trace_spec(jobs: int) -> dict:
    return {"distribution": "uniform", "jobs": jobs, "tasks_per_job": [1, 300], "memory_gb": [1.0, 6.0],
            "duration_s": [1.0, 350.0], "arrival_s": [0.0, 1000.0]}


def measure(size: int, cores: int, memory_mb: int, seed: int = 1) -> list[tuple]:
    jobs = generate_trace(trace_spec(size), np.random.default_rng(seed))
    rows = []
    for policy in (YARN(), YARNME(), Meganode()):
        sim = simulate_jobs([cores] * size, [memory_mb] * size, 100, PENALTY, jobs, policy)
        runtime = np.mean([s.end - s.job.arrival for s in sim.jobs])
        rows.append((type(policy).__name__, sim.scheduler_seconds, len(sim.t_job), sim.estimates, runtime))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1000/1000 instead of 3000/3000")
    args = parser.parse_args()
    sizes = (100, 1000) if args.quick else (100, 3000)
    print(f"{'jobs/nodes':>10} {'node':>14} {'policy':>9} {'cpu_s':>8} {'tasks':>8} {'estimates':>9} {'avg_jrt_s':>9}")
    for size in sizes:
        for cores, memory in NODE_SHAPES:
            for name, seconds, tasks, estimates, runtime in measure(size, cores, memory):
                note = ""
                if size == 3000 and name != "Meganode":
                    note = "  ok (goal <= 30 s)" if seconds <= GOAL_S else "  OVER the 30 s goal"
                print(f"{size:>10} {f'{cores}c/{memory // 1000}GB':>14} {name:>9} {seconds:8.2f} {tasks:8d} "
                      f"{estimates:9d} {runtime:9.1f}{note}", flush=True)


if __name__ == "__main__":
    main()
