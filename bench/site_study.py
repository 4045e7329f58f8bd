"""Site study cost: a site's whole trace under H-DRF + EASY against plain batch EASY, and MCH against H-DRF.

    .venv/bin/python bench/site_study.py [--jobs N | --full] [--ricc PATH] [--depth 1000] [--runs ...]
                                 [--rounds 1]

The RICC log (447,794 jobs; ``../shared/traces/RICC-2010-2.swf.gz`` or
``--ricc``) on its own header cluster (1,024 machines x 8 CPUs; the header
gives no memory, so 2,048 MB per CPU are assumed), the organisation derived
from the log: root -> groups (RICC's group ids) -> users, equal weights. RICC
records each job's memory (SWF field 10, most jobs 1,172 MB per CPU), so the
site engine holds memory per machine where the batch engine counts CPUs only.
Runs (``--runs`` picks some), each a whole ``run_scenario`` in this process
(trace read from its cache after the first run, simulation, result frames):

* ``batch easy``: the batch engine's EASY;
* ``site fcfs + easy``: the site engine in arrival order (EASY's schedule
  where memory does not bind);
* ``site hdrf + easy`` and ``site mch + easy``: the organisation's queue order
  with ``backfill_depth`` jobs after the head examined per pass;
* ``site hdrf + cons``: H-DRF's order with conservative backfilling.

Goal (issue "Site study"): H-DRF + EASY in at most 2x the time of plain EASY.
Prints each run's wall time and CPU time (the machine is shared: CPU time is
the steadier figure), mean wait, CPU utilisation, mean minimum isolation and
the sizes of its result frames (rows, MB in memory), then the ratios
(H-DRF / EASY, MCH / H-DRF) on both clocks. The machine's speed drifts by
tens of percent over minutes, so a ratio of two runs made minutes apart moves
with it: ``--rounds N`` makes the runs N times in turn and prints the median
of the rounds' ratios. ``--full`` is the whole log (the default); the first
run reads the trace, so the batch run goes first twice and only its second
time counts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine import run_scenario  # noqa: E402

RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
RUNS = {
    "batch easy": ("batch", "easy", {}),
    "site fcfs + easy": ("site", "fcfs", {"backfill": "easy"}),
    "site hdrf + easy": ("site", "hdrf", {"backfill": "easy"}),
    "site mch + easy": ("site", "mch", {"backfill": "easy"}),
    "site hdrf + cons": ("site", "hdrf", {"backfill": "cons"}),
}


def timed(engine: str, policy: str, model: dict, params: dict) -> tuple[float, float, dict, dict]:
    """Wall and CPU seconds of one run, its summary, and its frames' sizes (rows, MB)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_scenario({"engine": engine, "policy": policy, "seed": 1, "model": model, "policy_params": params})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sizes = {name: (len(frame), frame.memory_usage(deep=True).sum() / 1e6)
             for name, frame in (("jobs", result.jobs), ("timeline", result.timeline), ("summary", result.summary))}
    return wall, cpu, dict(zip(result.summary["metric"], result.summary["value"])), sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--jobs", type=int, default=None, help="first N jobs only")
    size.add_argument("--full", action="store_true", help="the whole log (the default)")
    parser.add_argument("--ricc", default=str(RICC), help="the RICC log (SWF, .gz)")
    parser.add_argument("--depth", type=int, default=1000, help="backfill_depth of the fair-share orders")
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS)[:4], help="runs to make")
    parser.add_argument("--rounds", type=int, default=1,
                        help="make the runs this many times, one after the other; ratios are the rounds' medians")
    args = parser.parse_args()
    model = {"trace": {"path": args.ricc, "max_jobs": None if args.full else args.jobs}}
    print(f"trace: {Path(args.ricc).name}, jobs: {model['trace']['max_jobs'] or 'all'}, "
          f"backfill_depth of the fair orders: {args.depth}")
    run_scenario({"engine": "batch", "policy": "fcfs", "seed": 1, "model": model})  # reads the trace into its cache
    print(f"{'run':<18} {'wall s':>8} {'cpu s':>8} {'mean wait s':>12} {'utilisation':>11} {'min isol.':>9}  frames")
    wall: dict[str, list[float]] = {label: [] for label in args.runs}
    cpu: dict[str, list[float]] = {label: [] for label in args.runs}
    for _ in range(args.rounds):
        for label in args.runs:
            engine, policy, params = RUNS[label]
            if engine == "site" and policy != "fcfs":
                params = {**params, "backfill_depth": args.depth}
            run_wall, run_cpu, summary, sizes = timed(engine, policy, model, params)
            wall[label].append(run_wall)
            cpu[label].append(run_cpu)
            isolation = summary.get("mean_min_isolation", float("nan"))
            frames = ", ".join(f"{name} {rows:,} rows {mb:.1f} MB" for name, (rows, mb) in sizes.items())
            print(f"{label:<18} {run_wall:>8.1f} {run_cpu:>8.1f} {summary['mean_wait_s']:>12.0f} "
                  f"{summary['utilisation']:>11.3f} {isolation:>9.3f}  {frames}", flush=True)

    def ratio(a: str, b: str, goal: float | None = None) -> None:
        """The median over rounds of a's time over b's in the same round (the machine's speed drifts between
        rounds more than between two runs of one round)."""
        if a in wall and b in wall:
            on_wall = statistics.median(x / y for x, y in zip(wall[a], wall[b]))
            on_cpu = statistics.median(x / y for x, y in zip(cpu[a], cpu[b]))
            verdict = "" if goal is None else f" (goal <= {goal:g}x: {'PASS' if on_cpu <= goal else 'FAIL'})"
            rounds = f", median of {args.rounds} rounds" if args.rounds > 1 else ""
            print(f"{a} / {b}: {on_wall:.2f}x wall, {on_cpu:.2f}x cpu{rounds}{verdict}")

    ratio("site hdrf + easy", "batch easy", 2.0)
    ratio("site fcfs + easy", "batch easy")
    ratio("site mch + easy", "site hdrf + easy")
    ratio("site hdrf + cons", "site hdrf + easy")


if __name__ == "__main__":
    main()
