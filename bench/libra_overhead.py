"""Libra's placement time per arriving application (the paper's Table II).

    .venv/bin/python bench/libra_overhead.py [--quick] [--repeats N]

512 machines with 1 Gbps links and 32 cores each, already carrying a random
load (U^k, D^k uniform in [0, 0.8]); an application of width 32/64/128
with pairwise many-to-many traffic and 1 Gbps per container arrives, and
Libra places it on 5.86/10/15 % of the machines as candidates, i.e. 30 / 51 /
77 machines whatever the width (candidate selection, LP relaxation of
problem (4) with HiGHS, rounding, tabu search). The application's identical
containers are one group of the LP, so its size is set by the candidates.
Prints the median wall time per placement beside the paper's CPLEX times;
the goal is at most 25 ms at width 128 / 5.86 %.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from time import perf_counter

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sched_engine.network.model import make_application  # noqa: E402
from sched_engine.network.placement import ClusterState, LibraPlacer  # noqa: E402

MACHINES = 512
WIDTHS = (32, 64, 128)
FRACTIONS = (0.0586, 0.10, 0.15)
PAPER_MS = {  # Table II, CPLEX 12.6.3
    0.0586: (3.08, 5.06, 5.64),
    0.10: (3.56, 5.19, 8.22),
    0.15: (6.43, 9.57, 16.83),
}
GOAL_MS = 25.0


def cluster_state(rng: np.random.Generator) -> ClusterState:
    return ClusterState(
        cpu_free=np.full(MACHINES, 32.0), ram_free=np.full(MACHINES, 64.0),
        uplink=np.ones(MACHINES), downlink=np.ones(MACHINES),
        up_load=rng.uniform(0, 0.8, MACHINES), down_load=rng.uniform(0, 0.8, MACHINES),
    )


def time_placement(width: int, fraction: float, repeats: int, rng: np.random.Generator) -> tuple[float, float]:
    """Median and worst wall time (ms) of one placement; the first call warms up."""
    app = make_application("new", 0.0, 1.0, "many-to-many", 0.03,
                           [{"count": width, "cpu": 1.0, "ram": 1.0, "uplink": 1.0, "downlink": 1.0}])
    placer = LibraPlacer(fraction, tabu_iterations=40)
    placer.place(app, cluster_state(rng))
    times = []
    for _ in range(repeats):
        state = cluster_state(rng)
        started = perf_counter()
        machines = placer.place(app, state)
        times.append((perf_counter() - started) * 1000)
        assert machines is not None and len(machines) == width
    return float(np.median(times)), float(np.max(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 placements per cell instead of 30")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    repeats = args.repeats or (5 if args.quick else 30)
    rng = np.random.default_rng(args.seed)
    print(f"Libra placement per arriving application, {MACHINES} machines, median of {repeats} (worst) ms")
    print(f"{'candidates':>10} | " + " | ".join(f"{'width=' + str(w):>22}" for w in WIDTHS))  # share, machines
    print(f"{'':>10} | " + " | ".join(f"{'ours':>12} {'paper':>9}" for _ in WIDTHS))
    verdict = None
    for fraction in FRACTIONS:
        cells = []
        for width, paper in zip(WIDTHS, PAPER_MS[fraction]):
            median, worst = time_placement(width, fraction, repeats, rng)
            cells.append(f"{median:5.1f} ({worst:4.1f}) {paper:9.2f}")
            if width == 128 and fraction == 0.0586:
                verdict = median
        count = LibraPlacer(fraction, 0).candidate_count(MACHINES)
        print(f"{fraction * 100:5.2f}% {count:>3} | " + " | ".join(cells))
    status = "met" if verdict <= GOAL_MS else "MISSED"
    print(f"goal: width 128 / 5.86 % within {GOAL_MS:g} ms -> {verdict:.1f} ms ({status})")


if __name__ == "__main__":
    main()
