"""The command line end to end (parse, simulate, reasons, CSVs) against an earlier commit, side by side.

    .venv/bin/python bench/cli_speed.py [--ref 5a059dc] [--policies easy cons] [--max-jobs N] [--rounds 2]

Checks the reference commit out into a temporary git worktree (the working
tree is left alone), then runs ``python -m sched_engine batch --trace RICC
--policy P --out DIR`` with this tree's code and with the reference's,
alternating, in fresh processes, with the same interpreter. Prints each
run's wall and CPU seconds (the child's user + system time), the ratio of
this tree to the reference per policy (median over rounds; the issue's goal
for EASY and CONS: at most 0.25) and whether the two wrote the same
schedule (``jobs.csv`` start and end times and statuses, by job id).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
SCHEDULE = ["job_id", "start_time", "end_time", "status"]
RENAMED = {"completed": "finished"}   # the status's name in earlier versions


def worktree(ref: str, where: Path) -> Path:
    """A detached checkout of ``ref`` under ``where`` (removed by the caller's temporary directory)."""
    path = where / "reference"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(path), ref],
                   check=True, capture_output=True)
    return path


def run_cli(code: Path, trace: Path, policy: str, max_jobs: int | None, out: Path) -> tuple[float, float]:
    """``(wall s, CPU s)`` of one command-line run of the tree at ``code``."""
    command = [sys.executable, "-m", "sched_engine", "batch", "--trace", str(trace), "--policy", policy,
               "--out", str(out)]
    if max_jobs:
        command += ["--max-jobs", str(max_jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=code, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(code)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def same_schedule(a: Path, b: Path) -> bool:
    left = pd.read_csv(a / "jobs.csv", usecols=SCHEDULE).sort_values("job_id", kind="stable").reset_index(drop=True)
    right = pd.read_csv(b / "jobs.csv", usecols=SCHEDULE).sort_values("job_id", kind="stable").reset_index(drop=True)
    left["status"], right["status"] = left["status"].replace(RENAMED), right["status"].replace(RENAMED)
    for column in ("start_time", "end_time"):   # 222 and 222.0 are one time (writers differ in how they print it)
        left[column], right[column] = left[column].astype(float), right[column].astype(float)
    return left.equals(right)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="5a059dc", help="the commit to compare with")
    parser.add_argument("--trace", type=Path, default=DEFAULT_RICC)
    parser.add_argument("--policies", nargs="+", default=["easy", "cons"])
    parser.add_argument("--max-jobs", type=int, help="the first N jobs only (default: the whole trace)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cli-speed-") as scratch:
        scratch = Path(scratch)
        reference = worktree(args.ref, scratch)
        try:
            print(f"{args.trace.name}, {args.max_jobs or 'all'} jobs; this tree against {args.ref}; "
                  f"{args.rounds} round(s), alternating")
            print(f"{'policy':<8} {'round':>5} {'tree':>10} {'wall s':>8} {'CPU s':>8}")
            for policy in args.policies:
                ratios = []
                for round_ in range(1, args.rounds + 1):
                    cpu = {}
                    for name, code in (("this", ROOT), ("reference", reference)):
                        out = scratch / f"{policy}-{name}-{round_}"
                        wall, cpu[name] = run_cli(code, args.trace, policy, args.max_jobs, out)
                        print(f"{policy:<8} {round_:>5} {name:>10} {wall:>8.1f} {cpu[name]:>8.1f}", flush=True)
                    ratios.append(cpu["this"] / cpu["reference"])
                    if round_ == 1:
                        equal = same_schedule(scratch / f"{policy}-this-1", scratch / f"{policy}-reference-1")
                        print(f"{policy:<8} same schedule as {args.ref}: {'yes' if equal else 'NO'}")
                print(f"{policy:<8} CPU ratio this/{args.ref}: median {statistics.median(ratios):.2f} "
                      f"({', '.join(f'{r:.2f}' for r in ratios)}); goal <= 0.25")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(reference)],
                           capture_output=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
