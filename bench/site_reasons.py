"""The cost of recording why site jobs waited: a site run with and without its reasons, side by side in one process.

    .venv/bin/python bench/site_reasons.py                       # HPC2N and RICC's first 50,000 jobs
    .venv/bin/python bench/site_reasons.py --traces hpc2n --policy drf --backfill none --repeats 3

Goal: a site run that records its ``pending`` reasons
(``sched_engine/site/reasons.py``) takes at most 1.1 times the CPU time of
the same run without them. Each case runs alternately with and without
reasons, ``--repeats`` times each, from the parsed trace (served from the
in-process parse cache) to the finished frames, the pending frame included;
the ratio of the best CPU times and the median of each round's ratio are
printed (the machine is shared: either alone swings by tens of percent),
and whether the schedules are equal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from time import process_time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.registry import REGISTRY  # noqa: E402
from sched_engine.site import jobs_frame, normalize_model, simulate, summarise, timeline  # noqa: E402

TRACES = {
    "hpc2n": {"path": str(ROOT.parent / "shared" / "traces" / "alea_hpc2n.swf")},
    "ricc50k": {"path": str(ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"), "max_jobs": 50_000},
}
GOAL = 1.1


def measure(model: dict, policy: str, backfill: str, reasons: bool):
    """CPU seconds of one site run to its frames, and its jobs frame and reasons."""
    order = REGISTRY.create("site", policy, {"backfill": backfill})
    started = process_time()
    sim = simulate(model, order, np.random.default_rng(1), reasons=reasons)
    jobs = jobs_frame(sim)
    summarise(sim, jobs, timeline(sim, jobs))
    pending = sim.reasons.frame(jobs["job_id"]) if reasons else None
    return process_time() - started, jobs, pending


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", default=list(TRACES), choices=list(TRACES))
    parser.add_argument("--policy", default="hdrf")
    parser.add_argument("--backfill", default="easy", choices=["none", "easy", "cons"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for name in args.traces:
        model = normalize_model({"trace": TRACES[name]})
        measure(model, "fcfs", "none", False)   # parse once, into the cache
        times: dict[bool, list[float]] = {True: [], False: []}
        frames = {}
        for repeat in range(args.repeats):
            for reasons in ((False, True) if repeat % 2 == 0 else (True, False)):
                seconds, jobs, pending = measure(model, args.policy, args.backfill, reasons)
                times[reasons].append(seconds)
                frames[reasons] = (jobs, pending)
        same = frames[True][0].equals(frames[False][0])
        pairs = sorted(with_ / without for with_, without in zip(times[True], times[False]))
        pending = frames[True][1]
        print(f"{name} ({len(frames[True][0])} jobs), site {args.policy} + {args.backfill}: without reasons "
              f"{min(times[False]):.2f} s CPU (best), with {min(times[True]):.2f} s; ratio of the bests "
              f"{min(times[True]) / min(times[False]):.3f}, median of the rounds' ratios "
              f"{statistics.median(pairs):.3f} ({', '.join(f'{r:.2f}' for r in pairs)}; goal <= {GOAL}); "
              f"{len(pending)} intervals {pending['reason'].value_counts().to_dict()}; schedules equal: {same}",
              flush=True)


if __name__ == "__main__":
    main()
