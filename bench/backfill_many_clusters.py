"""EASY's backfill search on many clusters: the explained baseline's steps for the sample's first 1,500 jobs on
MetaCentrum's 14 clusters, each step's CPU seconds (the Python kernel: user limits and down-time jobs that may
use one cluster each).

    .venv/bin/python bench/backfill_many_clusters.py [--policy easy|easy-alea] [--jobs 1500]

The down-time step adds jobs that hold one cluster each, so most waiting jobs
that fit somewhere do not fit in the clusters they may use. Measured on the
2-core machine (CPU s, the down-time and estimates steps), before EASY's
buckets were keyed by the clusters a job may use and a pass remembered how far
each bucket was read: 11.1 and 14.5 (EASY), 14.0 and 12.3 (Alea's EASY);
after: 2.2 and 2.8, 3.7 and 3.2 (with a suite running beside it), the same
schedules and reasons.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine import run_scenario  # noqa: E402
from sched_engine.analysis.baseline_steps import explain  # noqa: E402

SAMPLE = ROOT / "sample_traces" / "hpc2n-excerpt.swf"
MACHINES = ROOT / "sample_traces" / "metacentrum-2009.machines"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="easy")
    parser.add_argument("--jobs", type=int, default=1500)
    args = parser.parse_args()
    lines = SAMPLE.read_text().splitlines(keepends=True)
    header = [line for line in lines if line.startswith(";")]
    body = [line for line in lines if not line.startswith(";")][: args.jobs]
    seconds: list[float] = []

    def timed(scenario, inputs=None):
        started = time.process_time()
        result = run_scenario(scenario, inputs=inputs)
        seconds.append(time.process_time() - started)
        return result

    with tempfile.TemporaryDirectory(prefix="backfill-many-") as scratch:
        trace = Path(scratch) / f"hpc2n-{args.jobs}.swf"
        trace.write_text("".join(header + body))
        steps = explain({"engine": "batch", "policy": args.policy, "seed": 1,
                         "model": {"trace": {"path": str(trace)}, "machines_path": str(MACHINES)}}, run=timed)
    ran = steps.table[steps.table["ran"]]
    print(f"{args.policy}, the sample's first {args.jobs} jobs on 14 clusters: CPU s per step run")
    for (_, row), cpu in zip(ran.iterrows(), seconds):
        print(f"  {row['step']:<12} {cpu:7.2f} s  mean wait {row['simulated_mean_wait_s']:>10,.0f} s")
    print(f"  {'total':<12} {sum(seconds):7.2f} s")


if __name__ == "__main__":
    main()
