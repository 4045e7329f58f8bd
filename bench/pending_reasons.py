"""The cost of recording why jobs waited, and their exactness: the full RICC trace with and without pending reasons.

    .venv/bin/python bench/pending_reasons.py            # full RICC trace (447,794 jobs)
    .venv/bin/python bench/pending_reasons.py --quick    # first 60,000 RICC jobs
    .venv/bin/python bench/pending_reasons.py --policies easy --repeats 3

Goal: a run that records its ``pending`` reasons (``sched_engine/batch/pending.py``,
made exact by ``pending_exact.py``) takes at most 1.1 times as long as the same
run without them, and every reason holds at every instant of its interval
(checked, after the timed runs, by the test suite's checker against the free
CPUs derived from the jobs' start and end times). Each policy
runs on the trace's own hardware (the header's cluster, user estimates),
alternately with and without reasons, ``--repeats`` times each; the best
time of each is kept (the machine is shared). Both wall time and the
process's CPU time are reported; the ratio is taken on CPU time, which
other processes on a shared machine disturb far less than wall time (the
run is single-threaded, so the two agree on an idle machine). The
simulation is timed from the parsed trace (served from the in-process parse
cache) to the finished frames, pending frame included.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from time import perf_counter, process_time
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.batch import jobs_frame, normalize_model, simulate, timeline  # noqa: E402
from sched_engine.batch.pending import exact_table, pending_frame  # noqa: E402
from sched_engine.registry import REGISTRY  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from test_batch_pending_exact import check_exact  # noqa: E402  (asserts every interval)

RICC = Path("/work/shared/traces/RICC-2010-2.swf.gz")
POLICIES = ("fcfs", "easy", "cons")
GOAL = 1.1


def measure(model: dict, policy: str, record: bool):
    """Wall and CPU seconds of one run, its pending intervals, and what the checker reads of it."""
    started, cpu = perf_counter(), process_time()
    sim = simulate(model, REGISTRY.create("batch", policy), np.random.default_rng(0), record_pending=record)
    jobs = jobs_frame(sim)
    pending = pending_frame(exact_table(sim), jobs["job_id"]) if record else None
    wall, cpu = perf_counter() - started, process_time() - cpu
    result = SimpleNamespace(jobs=jobs, timeline=timeline(sim), extra=lambda name: pending)
    return wall, cpu, 0 if pending is None else len(pending), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 60,000 RICC jobs only")
    parser.add_argument("--ricc", type=Path, default=RICC, help="path of RICC-2010-2.swf.gz")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    args = parser.parse_args()
    if not args.ricc.exists():
        sys.exit(f"{args.ricc} not found")
    model = normalize_model({"trace": {"path": str(args.ricc), "max_jobs": 60_000 if args.quick else None},
                             "estimates": "trace"})
    simulate({**model, "trace": {**model["trace"], "max_jobs": 1000}}, REGISTRY.create("batch", "fcfs"),
             np.random.default_rng(0))  # read the trace once
    print(f"{'policy':<6} {'wall without s':>14} {'wall with s':>11} {'CPU without s':>13} {'CPU with s':>10} "
          f"{'ratio (CPU)':>11} {'intervals':>10}  goal <= {GOAL}", flush=True)
    for policy in args.policies:
        without, with_reasons, rows = [], [], 0
        for _ in range(args.repeats):
            without.append(measure(model, policy, False)[:2])
            wall, cpu, rows, result = measure(model, policy, True)
            with_reasons.append((wall, cpu))
        checked = check_exact(result)
        cpu_without, cpu_with = min(c for _, c in without), min(c for _, c in with_reasons)
        ratio = cpu_with / cpu_without
        print(f"{policy:<6} {min(w for w, _ in without):>14.1f} {min(w for w, _ in with_reasons):>11.1f} "
              f"{cpu_without:>13.1f} {cpu_with:>10.1f} {ratio:>11.2f} {rows:>10,}  {'ok' if ratio <= GOAL else 'over'}; "
              f"{checked:,} intervals exact", flush=True)


if __name__ == "__main__":
    main()
