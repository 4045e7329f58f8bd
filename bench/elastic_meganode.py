"""Paper Fig. 6c: on what share of traces does YARN-ME beat the Meganode bound? With 95% intervals.

    .venv/bin/python bench/elastic_meganode.py                        # 27 configurations x 8 traces per distribution
    .venv/bin/python bench/elastic_meganode.py --traces 75 --distributions exponential   # 2,025 traces
    .venv/bin/python bench/elastic_meganode.py --original             # also the engine before issue 20
    .venv/bin/python bench/elastic_meganode.py --quick                # 8 configurations x 2 traces

The traces are the ``elastic-fig6`` sweep's (Table 2 configurations, trace
``t`` of configuration ``c`` drawn with seed ``seed + 1000 c + t``): 100 jobs
with arrivals uniform in [0, 1000] s on 100 nodes of 16 cores and 10 GB
(§6.1), reducer (spill) penalty at 1.5x and 3x. Each trace runs under
Meganode in both readings of a job that does not fit (``skip``: the next job
in SRJF order that fits goes first, the paper's bound; ``wait``: nothing
starts until it fits) and under YARN-ME with the disk-contention limit given
here (none by default, as in §6.1). ``--original`` adds YARN-ME as it ran
before issue 20: at most 4 elastic tasks per node and reserved nodes serving
only their job.

For each distribution and penalty it prints the number of traces N, the
share on which YARN-ME's average job runtime is below Meganode's with its
95% Wilson interval, per reading, beside the paper's "40%-60% of the cases
for the uniform trace and ... 20% of the exponential trace for 1.5x penalty"
(§6.2, on 20,000 traces; the paper gives no 3x figure). Progress goes to
stderr, the wall time to the last line.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.elastic import simulate_jobs  # noqa: E402
from sched_engine.elastic.metrics import share_interval  # noqa: E402
from sched_engine.elastic.policies import YARNME, Meganode, NodeReservations  # noqa: E402
from sched_engine.elastic.traces import MB_PER_GB, generate_trace  # noqa: E402
from sched_engine.sweeps import ELASTIC_AXES, expand  # noqa: E402

PAPER = {("uniform", 1.5): "40-60%", ("exponential", 1.5): "~20%"}
PENALTIES = (1.5, 3.0)


class OriginalYARNME(YARNME):
    """YARN-ME before issue 20: reserved nodes serve only their job (and the former cap of 4 elastic tasks)."""

    when_blocked = NodeReservations(backfill_gaps=False)


def _average(point: dict, policy, factor: float, jobs) -> float:
    cores = [point["cores"]] * point["nodes"]
    memory = [int(round(point["node_memory_gb"] * MB_PER_GB))] * point["nodes"]
    sim = simulate_jobs(cores, memory, 100, {"kind": "spill", "factor": factor}, jobs, policy)
    return float(np.mean([s.end - s.job.arrival for s in sim.jobs]))


def run_trace(task: tuple[dict, dict]) -> dict:
    """Average job runtimes of one trace: ``mega_skip``, ``mega_wait``, ``me_<F>`` (and ``orig_<F>``)."""
    point, options = task
    trace = {"distribution": point["distribution"], "jobs": point["jobs"], "arrival_s": point["arrival_s"],
             **{name: point[name] for name in ELASTIC_AXES}}
    jobs = generate_trace(trace, np.random.default_rng(point["seed"]))
    out = {"distribution": point["distribution"], "maxima": {name: point[name][1] for name in ELASTIC_AXES},
           "mega_skip": _average(point, Meganode("skip"), 1.0, jobs),
           "mega_wait": _average(point, Meganode("wait"), 1.0, jobs)}
    for factor in PENALTIES:
        policy = YARNME(disk_bandwidth_mb_s=options["disk_bandwidth_mb_s"],
                        elastic_spill_mb_s=options["elastic_spill_mb_s"])
        out[f"me_{factor:g}"] = _average(point, policy, factor, jobs)
        if options["original"]:
            out[f"orig_{factor:g}"] = _average(point, OriginalYARNME(max_elastic_per_node=4), factor, jobs)
    return out


def _cell(wins: int, n: int) -> str:
    low, high = share_interval(wins, n)
    return f"{wins / n:5.1%} [{low:5.1%}, {high:5.1%}]"


def _print_by_axis(part: list[dict]) -> None:
    """The share vs the skip Meganode split by each Table 2 maximum (the other two pooled)."""
    for name in ELASTIC_AXES:
        for value in sorted({r["maxima"][name] for r in part}):
            rows = [r for r in part if r["maxima"][name] == value]
            cells = "  ".join(f"{factor:g}x {_cell(sum(r[f'me_{factor:g}'] < r['mega_skip'] for r in rows), len(rows))}"
                              for factor in PENALTIES)
            print(f"{'':>12} {name} max {value:g} (N {len(rows)}): {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maxima", type=int, default=3, help="maxima per Table 2 interval (configurations: cube)")
    parser.add_argument("--traces", type=int, default=8, help="traces per configuration")
    parser.add_argument("--distributions", nargs="+", default=["uniform", "exponential"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--disk-bandwidth", type=float, default=None,
                        help="YARN-ME's disk bandwidth for elastic spills, MB/s (default: no limit, as in §6.1)")
    parser.add_argument("--spill", type=float, default=30.0, help="MB/s one elastic task spills at")
    parser.add_argument("--original", action="store_true", help="also YARN-ME as before issue 20")
    parser.add_argument("--by-axis", action="store_true",
                        help="also the share vs the skip Meganode per value of each Table 2 maximum")
    parser.add_argument("--quick", action="store_true", help="2 maxima, 2 traces")
    parser.add_argument("--workers", type=int, default=2, help="local processes (default 2)")
    args = parser.parse_args()
    maxima, traces = (2, 2) if args.quick else (args.maxima, args.traces)
    points = expand({"kind": "elastic-fig6", "distributions": args.distributions, "maxima": maxima,
                     "traces": traces, "seed": args.seed})
    options = {"disk_bandwidth_mb_s": args.disk_bandwidth, "elastic_spill_mb_s": args.spill,
               "original": args.original}
    started = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for i, row in enumerate(pool.map(run_trace, [(p, options) for p in points], chunksize=4), 1):
            rows.append(row)
            if i % 25 == 0 or i == len(points):
                print(f"\r{i}/{len(points)} traces", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if args.disk_bandwidth is None:
        limit = "none"
    else:
        policy = YARNME(disk_bandwidth_mb_s=args.disk_bandwidth, elastic_spill_mb_s=args.spill)
        limit = f"{policy.elastic_task_limit()} per node"
    print(f"YARN-ME beats Meganode: share of traces [95% Wilson interval]; disk-contention limit: {limit}")
    header = f"{'distribution':>12} {'penalty':>7} {'N':>5}  {'vs Meganode skip':>24}  {'vs Meganode wait':>24}"
    if args.original:
        header += f"  {'original vs wait':>24}"
    print(header + "  paper (1.5x, 20,000 traces)")
    for distribution in args.distributions:
        part = [r for r in rows if r["distribution"] == distribution]
        n = len(part)
        for factor in PENALTIES:
            me = np.array([r[f"me_{factor:g}"] for r in part])
            skip = int(np.sum(me < np.array([r["mega_skip"] for r in part])))
            wait = int(np.sum(me < np.array([r["mega_wait"] for r in part])))
            line = f"{distribution:>12} {factor:>6g}x {n:>5}  {_cell(skip, n):>24}  {_cell(wait, n):>24}"
            if args.original:
                orig = np.array([r[f"orig_{factor:g}"] for r in part])
                line += f"  {_cell(int(np.sum(orig < np.array([r['mega_wait'] for r in part]))), n):>24}"
            print(line + f"  {PAPER.get((distribution, factor), '-')}")
        if args.by_axis:
            _print_by_axis(part)
        skip_s = np.array([r["mega_skip"] for r in part])
        wait_s = np.array([r["mega_wait"] for r in part])
        print(f"{'':>12} Meganode skip / wait average job runtime: median {np.median(skip_s / wait_s):.3f}, "
              f"mean {np.mean(skip_s / wait_s):.3f}")
    print(f"{len(points)} traces in {time.perf_counter() - started:.1f} s ({args.workers} worker(s))")


if __name__ == "__main__":
    main()
