"""Site study cost: a site's whole trace under H-DRF + EASY against plain batch EASY, and MCH against H-DRF.

    .venv/bin/python bench/site_study.py [--jobs N] [--ricc PATH] [--depth 1000]

The RICC log (447,794 jobs; ``../shared/traces/RICC-2010-2.swf.gz`` or
``--ricc``) on its own header cluster (1,024 machines x 8 CPUs; the header
gives no memory, so 2,048 MB per CPU are assumed), the organisation derived
from the log: root -> groups (RICC's group ids) -> users, equal weights. RICC
records each job's memory (SWF field 10, most jobs 1,172 MB per CPU), so the
site engine holds memory per machine where the batch engine counts CPUs only.
Runs, each timed on the wall clock in this process:

* ``batch easy``: the batch engine's EASY;
* ``site fcfs + easy``: the site engine in arrival order (EASY's schedule
  where memory does not bind);
* ``site hdrf + easy`` and ``site mch + easy``: the organisation's queue order
  with ``backfill_depth`` jobs after the head examined per pass.

Goal (issue "Site study"): H-DRF + EASY in at most 2x the time of plain EASY.
Prints each run's time, mean wait, CPU utilisation and mean minimum isolation,
then the ratios (H-DRF / EASY, MCH / H-DRF).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine import run_scenario  # noqa: E402

RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def timed(engine: str, policy: str, model: dict, params: dict | None = None) -> tuple[float, dict]:
    started = time.perf_counter()
    result = run_scenario({"engine": engine, "policy": policy, "seed": 1, "model": model,
                           "policy_params": params or {}})
    seconds = time.perf_counter() - started
    return seconds, dict(zip(result.summary["metric"], result.summary["value"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs only (default: the whole log)")
    parser.add_argument("--ricc", default=str(RICC), help="the RICC log (SWF, .gz)")
    parser.add_argument("--depth", type=int, default=1000, help="backfill_depth of the fair-share orders")
    args = parser.parse_args()
    trace = {"path": args.ricc, "max_jobs": args.jobs}
    model = {"trace": trace}
    runs = [
        ("batch easy", "batch", "easy", model, {}),
        ("site fcfs + easy", "site", "fcfs", model, {"backfill": "easy"}),
        ("site hdrf + easy", "site", "hdrf", model, {"backfill": "easy", "backfill_depth": args.depth}),
        ("site mch + easy", "site", "mch", model, {"backfill": "easy", "backfill_depth": args.depth}),
    ]
    print(f"trace: {Path(args.ricc).name}, jobs: {args.jobs or 'all'}, backfill_depth of the fair orders: "
          f"{args.depth}")
    print(f"{'run':<20} {'wall s':>9} {'mean wait s':>12} {'utilisation':>12} {'min isolation':>14}")
    seconds = {}
    for label, engine, policy, scenario_model, params in runs:
        wall, summary = timed(engine, policy, scenario_model, params)
        seconds[label] = wall
        isolation = summary.get("mean_min_isolation", float("nan"))
        print(f"{label:<20} {wall:>9.1f} {summary['mean_wait_s']:>12.0f} {summary['utilisation']:>12.3f} "
              f"{isolation:>14.3f}", flush=True)
    ratio = seconds["site hdrf + easy"] / seconds["batch easy"]
    print(f"H-DRF + EASY / batch EASY: {ratio:.2f}x (goal <= 2x: {'PASS' if ratio <= 2 else 'FAIL'})")
    print(f"site FCFS + EASY / batch EASY: {seconds['site fcfs + easy'] / seconds['batch easy']:.2f}x")
    print(f"MCH / H-DRF: {seconds['site mch + easy'] / seconds['site hdrf + easy']:.2f}x")


if __name__ == "__main__":
    main()
