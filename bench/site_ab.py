"""The site engine of the working tree against another commit's, run alternately in one process.

    .venv/bin/python bench/site_ab.py --base REF [--jobs N | --full] [--policy hdrf] [--backfill easy]
                                      [--rounds 2] [--ricc PATH]

The machine's speed drifts by tens of percent between processes and over an
hour, so two versions timed in separate processes disagree by more than most
changes gain. Here both live in one process: ``sched_engine`` as committed at
``REF`` (``git archive``) and as it is in the working tree are copied under two
package names (every import inside the package is relative) and run one after
the other, the order alternating from round to round. Prints each round's CPU
seconds and the ratio working tree / base, then the median ratio and whether
the two schedules are equal (jobs and timeline frames of the last round). The
trace (RICC by default, ``../shared/traces/RICC-2010-2.swf.gz``) is read once
per version before the rounds.
"""

from __future__ import annotations

import argparse
import importlib
import io
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def copy_versions(base: str, into: Path) -> dict[str, str]:
    """``sched_engine`` at ``base`` and in the working tree, as two packages under ``into``: label -> module."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "sched_engine"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into / "archived", filter="data")
    (into / "archived" / "sched_engine").rename(into / "sched_engine_base")
    shutil.copytree(ROOT / "sched_engine", into / "sched_engine_work",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return {"base": "sched_engine_base", "work": "sched_engine_work"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the commit to compare with (any git revision)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--jobs", type=int, default=150_000, help="first N jobs (default 150,000)")
    size.add_argument("--full", action="store_true", help="the whole log")
    parser.add_argument("--policy", default="hdrf", help="the site engine's queue order (default hdrf)")
    parser.add_argument("--backfill", default="easy", choices=["none", "easy", "cons"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ricc", default=str(RICC), help="the trace (SWF, .gz)")
    args = parser.parse_args()
    model = {"trace": {"path": args.ricc, "max_jobs": None if args.full else args.jobs}}
    scenario = {"engine": "site", "policy": args.policy, "seed": 1, "model": model,
                "policy_params": {"backfill": args.backfill}}
    with tempfile.TemporaryDirectory() as folder:
        names = copy_versions(args.base, Path(folder))
        sys.path.insert(0, folder)
        engines = {label: importlib.import_module(name) for label, name in names.items()}
        for engine in engines.values():   # each version reads the trace into its own cache
            engine.run_scenario({"engine": "batch", "policy": "fcfs", "seed": 1, "model": model})
        print(f"site {args.policy} + {args.backfill}, {Path(args.ricc).name}, jobs: "
              f"{model['trace']['max_jobs'] or 'all'}; base {args.base} against the working tree")
        seconds: dict[str, list[float]] = {label: [] for label in engines}
        results = {}
        for round_number in range(args.rounds):
            labels = list(engines) if round_number % 2 == 0 else list(reversed(engines))
            for label in labels:
                started = time.process_time()
                results[label] = engines[label].run_scenario(scenario)
                seconds[label].append(time.process_time() - started)
            print(f"round {round_number + 1}: base {seconds['base'][-1]:.1f} s, working tree "
                  f"{seconds['work'][-1]:.1f} s, ratio {seconds['work'][-1] / seconds['base'][-1]:.3f}", flush=True)
        ratios = [work / base for base, work in zip(seconds["base"], seconds["work"])]
        same = (results["base"].jobs.equals(results["work"].jobs)
                and results["base"].timeline.equals(results["work"].timeline))
        print(f"median ratio working tree / base: {statistics.median(ratios):.3f}; schedules equal: {same}")


if __name__ == "__main__":
    main()
