"""The batch kernel's compiled loops against its Python loop, side by side in one process: same frames, how fast.

    .venv/bin/python bench/compiled_kernel.py [--ricc PATH] [--jobs 50000] [--policies easy cons]

For each policy, runs RICC's first ``--jobs`` jobs (0: all of them) through
:func:`sched_engine.run_scenario` on the Python loop and on the compiled one
(``SCHEDSCOPE_KERNEL``), and prints the CPU seconds of each (the whole run:
parse, simulate, reasons, frames), their ratio, and whether every frame
(jobs, timeline, pending reasons) is equal. The compiled loop's first call
in a process loads (or compiles) its machine code: a warm-up run on a few
jobs comes first, as a server does before it forks runs.
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


def scenario(trace: Path, jobs: int, policy: str) -> dict:
    model = {"trace": {"path": str(trace), **({"max_jobs": jobs} if jobs else {})}, "estimates": "trace"}
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
    args = parser.parse_args()
    started = time.process_time()
    compiled.warm()
    print(f"loading the compiled loops: {time.process_time() - started:.2f} CPU-s")
    print(f"RICC, {'all' if not args.jobs else f'first {args.jobs:,}'} jobs, the users' estimates")
    print(f"{'policy':<7} {'python s':>9} {'compiled s':>11} {'ratio':>6}  frames equal  reason rows")
    for policy in args.policies:
        spec = scenario(args.ricc, args.jobs, policy)
        python, python_s = timed(spec, "python")
        fast, fast_s = timed(spec, "compiled")
        equal = True
        for name in ("jobs", "timeline", "pending"):
            left = python.extra(name) if name == "pending" else getattr(python, name)
            right = fast.extra(name) if name == "pending" else getattr(fast, name)
            try:
                pd.testing.assert_frame_equal(left, right)
            except AssertionError:
                equal = False
        rows = len(fast.extra("pending"))
        print(f"{policy:<7} {python_s:>9.2f} {fast_s:>11.2f} {fast_s / python_s:>6.2f}  {str(equal):<12}  {rows:,}")


if __name__ == "__main__":
    main()
