"""Capacity planning on a full log, probes one after another against probes side by side, in one run.

    .venv/bin/python bench/sizing_side_by_side.py [--trace RICC] [--policy easy] [--target "mean_wait_s<=3600"]
                                                 [--workers 2] [--max-jobs N]

Runs the ``size`` search (pool mode) twice on the same parsed log, in fresh
processes of the command line: ``--workers 1`` (plain bisection) and
``--workers N`` (each step probes N sizes at once on local processes;
:mod:`sched_engine.analysis.sizing`). Prints each one's wall time, probes
and answer, and the ratio of the two (the issue's goal: the full RICC log in
at most 2 minutes, probes side by side). Both answers lie within the
search's 1% tolerance of the smallest size meeting the target; they need
not be the same size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def search(trace: Path, policy: str, target: str, workers: int, max_jobs: int | None, out: Path) -> dict:
    command = [sys.executable, "-m", "sched_engine", "size", "--trace", str(trace), "--policy", policy,
               "--target", target, "--mode", "pool", "--workers", str(workers), "--out", str(out)]
    if max_jobs:
        command += ["--max-jobs", str(max_jobs)]
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    summary = pd.read_csv(out / "summary.csv").set_index("metric")["value"]
    return {"wall": wall, "probes": int(summary["probes"]), "answer": summary["smallest_cpus"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_RICC)
    parser.add_argument("--policy", default="easy")
    parser.add_argument("--target", default="mean_wait_s<=3600")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-jobs", type=int)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sizing-bench-") as scratch:
        rows = {}
        for workers in (1, args.workers):
            rows[workers] = search(args.trace, args.policy, args.target, workers, args.max_jobs,
                                   Path(scratch) / f"w{workers}")
            row = rows[workers]
            print(f"workers {workers}: {row['wall']:7.1f} s wall, {row['probes']:3d} probes, "
                  f"answer {row['answer']:,.0f} CPUs", flush=True)
    print(f"side by side / one after another: {rows[args.workers]['wall'] / rows[1]['wall']:.2f} "
          f"(goal: the full log in <= 120 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
