"""The batch kernel's compiled loops against its Python loop, side by side in one process: same frames, how fast.

    .venv/bin/python bench/compiled_kernel.py [--ricc PATH] [--jobs 50000] [--policies easy cons]
        [--estimates perfect|trace] [--compiled-only]

For each policy, runs RICC's first ``--jobs`` jobs (0: all of them) through
:func:`sched_engine.run_scenario` on the Python loop and on the compiled one
(``SCHEDSCOPE_KERNEL``), and prints the CPU seconds of each (the whole run:
parse, simulate, reasons, frames), their ratio, and whether every frame
(jobs, timeline, pending reasons) is equal. ``--compiled-only`` skips the
Python loop (Conservative with the users' estimates re-plans a cluster at
every early end: the Python loop takes tens of minutes on 50,000 jobs). The compiled loop's first call
in a process loads (or compiles) its machine code: a warm-up run on a few
jobs comes first, as a server does before it forks runs, and one untimed run
per policy parses the log (a process keeps it parsed), so neither timed run
pays for it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from sched_engine import run_scenario  # noqa: E402
from sched_engine.batch import compiled  # noqa: E402

DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def scenario(trace: Path, jobs: int, policy: str, estimates: str) -> dict:
    model = {"trace": {"path": str(trace), **({"max_jobs": jobs} if jobs else {})}, "estimates": estimates}
    return {"engine": "batch", "policy": policy, "model": model}


def timed(spec: dict, kernel: str):
    os.environ["SCHEDSCOPE_KERNEL"] = kernel
    started = time.process_time()
    result = run_scenario(spec)
    return result, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", type=Path, default=DEFAULT_RICC)
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--policies", nargs="+", default=["easy", "cons"])
    parser.add_argument("--estimates", choices=["perfect", "trace"], default="perfect")
    parser.add_argument("--compiled-only", action="store_true")
    args = parser.parse_args()
    started = time.process_time()
    compiled.warm()
    print(f"loading the compiled loops: {time.process_time() - started:.2f} CPU-s")
    print(f"RICC, {'all' if not args.jobs else f'first {args.jobs:,}'} jobs, {args.estimates} estimates", flush=True)
    print(f"{'policy':<7} {'python s':>9} {'compiled s':>11} {'ratio':>6}  frames equal  reason rows")
    for policy in args.policies:
        spec = scenario(args.ricc, args.jobs, policy, args.estimates)
        timed(spec, "compiled")   # untimed: the log parsed once (a process keeps it), as for the runs below
        fast, fast_s = timed(spec, "compiled")
        if args.compiled_only:
            print(f"{policy:<7} {'-':>9} {fast_s:>11.2f} {'-':>6}  {'-':<12}  {len(fast.extra('pending')):,}", flush=True)
            continue
        python, python_s = timed(spec, "python")
        equal = True
        for name in ("jobs", "timeline", "pending"):
            left = python.extra(name) if name == "pending" else getattr(python, name)
            right = fast.extra(name) if name == "pending" else getattr(fast, name)
            try:
                pd.testing.assert_frame_equal(left, right)
            except AssertionError:
                equal = False
        rows = len(fast.extra("pending"))
        print(f"{policy:<7} {python_s:>9.2f} {fast_s:>11.2f} {fast_s / python_s:>6.2f}  {str(equal):<12}  {rows:,}",
              flush=True)


if __name__ == "__main__":
    main()
