"""The cost of a per-user limit on running jobs: RICC's first 50,000 jobs with and without ``running_jobs: 4``.

    .venv/bin/python bench/user_limits.py                   # first 50,000 RICC jobs, FCFS and EASY
    .venv/bin/python bench/user_limits.py --jobs 20000 --policies easy --repeats 3
    .venv/bin/python bench/user_limits.py --pending         # with pending reasons recorded too

RICC's users keep long backlogs (a few of them thousands of waiting jobs),
so under a limit most of the queue is held by its users' limits at any time.
Goal: a run with the limit costs about what the same run without one does
(the pass skips users at their limit through a per-user index of the waiting
jobs, ``sched_engine/batch/queues.py``, instead of walking past their jobs).
Each run is on the trace's own hardware (the header's cluster, user
estimates), alternately with and without the limit, ``--repeats`` times
each; the best CPU time of each is kept (the machine is shared; the run is
single-threaded, so CPU time is what it costs). The simulation is timed from
the parsed trace (served from the in-process parse cache) to the finished
``jobs`` frame. The mean wait of each run is printed as a check that the
limit binds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from time import perf_counter, process_time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.batch import jobs_frame, normalize_model, simulate  # noqa: E402
from sched_engine.registry import REGISTRY  # noqa: E402

RICC = Path("/work/shared/traces/RICC-2010-2.swf.gz")
POLICIES = ("fcfs", "fcfs-lb", "easy")
LIMIT = 4


def measure(model: dict, policy: str, pending: bool) -> tuple[float, float, float]:
    """Wall and CPU seconds of one run, and its mean wait."""
    started, cpu = perf_counter(), process_time()
    sim = simulate(model, REGISTRY.create("batch", policy), np.random.default_rng(0), record_pending=pending)
    jobs = jobs_frame(sim)
    return perf_counter() - started, process_time() - cpu, float((jobs["start_time"] - jobs["submit_time"]).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", type=Path, default=RICC, help="path of RICC-2010-2.swf.gz")
    parser.add_argument("--jobs", type=int, default=50_000, help="first N jobs of the trace")
    parser.add_argument("--limit", type=int, default=LIMIT, help="running jobs per user")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--policies", nargs="+", default=["fcfs", "easy"], choices=POLICIES)
    parser.add_argument("--pending", action="store_true", help="record pending reasons in every run")
    args = parser.parse_args()
    if not args.ricc.exists():
        sys.exit(f"{args.ricc} not found")
    plain = normalize_model({"trace": {"path": str(args.ricc), "max_jobs": args.jobs}, "estimates": "trace"})
    limited = normalize_model({"trace": {"path": str(args.ricc), "max_jobs": args.jobs}, "estimates": "trace",
                               "user_limits": {"running_jobs": args.limit}})
    simulate({**plain, "trace": {**plain["trace"], "max_jobs": 1000}}, REGISTRY.create("batch", "fcfs"),
             np.random.default_rng(0))  # read the trace once
    print(f"RICC first {args.jobs:,} jobs, at most {args.limit} running jobs per user"
          f"{', pending reasons recorded' if args.pending else ''}; best of {args.repeats}")
    print(f"{'policy':<8} {'CPU no limit s':>14} {'CPU limit s':>11} {'ratio':>6} {'wall limit s':>12} "
          f"{'mean wait no limit s':>20} {'mean wait limit s':>17}")
    for policy in args.policies:
        without, with_limit = [], []
        for _ in range(args.repeats):
            without.append(measure(plain, policy, args.pending))
            with_limit.append(measure(limited, policy, args.pending))
        cpu_without, cpu_with = min(r[1] for r in without), min(r[1] for r in with_limit)
        print(f"{policy:<8} {cpu_without:>14.2f} {cpu_with:>11.2f} {cpu_with / cpu_without:>6.2f} "
              f"{min(r[0] for r in with_limit):>12.2f} {without[0][2]:>20,.0f} {with_limit[0][2]:>17,.0f}",
              flush=True)


if __name__ == "__main__":
    main()
