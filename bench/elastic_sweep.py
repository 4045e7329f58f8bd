"""Paper Fig. 6: YARN-ME / YARN average job runtime over the Table 2 sweep, and vs Meganode.

    .venv/bin/python bench/elastic_sweep.py            # 3 maxima per parameter, 5 traces per configuration
    .venv/bin/python bench/elastic_sweep.py --quick    # 2 maxima per parameter, 2 traces per configuration
    .venv/bin/python bench/elastic_sweep.py --workers 1

100 nodes (16 cores, 10 GB), 100-job traces with arrivals uniform in
[0, 1000] s (§6.1). Table 2 keeps each parameter's min and sweeps its max
over an interval; we take evenly spaced maxima in each interval and every
combination of them (a configuration), several traces per configuration.
Penalties: the reducer (spill) model at 1.5x and 3x. For each distribution
and penalty the script prints, over configurations, the median of the
per-configuration median ratio, the worst ratio seen, the share of
configurations whose median ratio is <= 0.7, and the share of traces on which
YARN-ME beats Meganode with its 95% Wilson interval -- beside the paper's
figures. YARN-ME runs without a disk-contention limit (§6.1 models none) and
Meganode skips to the next job that fits (docs/readings.md);
``bench/elastic_meganode.py`` compares the Meganode readings.

The sweep is ``sched_engine.sweeps``' ``elastic-fig6`` kind (the same runs as
``python -m sched_engine sweep elastic-fig6``), fanned out over local
processes, or Celery workers when ``REDIS_URL`` is set; runs done/total go to
stderr, the wall time to the last line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.scaleout.sweep_executor import run_sweep  # noqa: E402
from sched_engine.sweeps import terminal_progress  # noqa: E402

PAPER = {
    ("uniform", 3.0): "median <= 1; ~40% of configurations <= 0.7",
    ("uniform", 1.5): "median <= 1; larger gains than 3x; beats Meganode on 40-60% of traces",
    ("exponential", 3.0): "median <= 1; smaller gains than uniform",
    ("exponential", 1.5): "median <= 1; beats Meganode on ~20% of traces",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 maxima per parameter, 2 traces each")
    parser.add_argument("--workers", type=int, default=None, help="local processes (default: CPU count)")
    args = parser.parse_args()
    points, runs = (2, 2) if args.quick else (3, 5)
    spec = {"kind": "elastic-fig6", "maxima": points, "traces": runs, "penalties": [1.5, 3.0],
            "penalty_model": "spill", "nodes": 100, "cores": 16, "node_memory_gb": 10.0, "jobs": 100}
    sweep = run_sweep(spec, workers=args.workers, progress=terminal_progress())
    print(f"{'distribution':>12} {'penalty':>7} {'configs':>7} {'median':>7} {'worst':>6} {'<=0.7':>6} "
          f"{'beats_mega [95% CI]':>19} {'ME/mega':>8}  paper")
    for row in sweep.summary().itertuples(index=False):
        beats = f"{row.beats_meganode:.0%} [{row.beats_meganode_low:.0%}, {row.beats_meganode_high:.0%}]"
        print(f"{row.distribution:>12} {row.penalty:>6.1f}x {row.configurations:>7d} {row.median_ratio:7.3f} "
              f"{row.worst_ratio:6.3f} {row.share_le_0_7:6.0%} {beats:>19} "
              f"{row.median_vs_meganode:8.3f}  {PAPER[(row.distribution, row.penalty)]}")
    print(f"{len(sweep.points)} traces x {2 + len(spec['penalties'])} simulations in {sweep.wall_seconds:.1f} s "
          f"({sweep.executor}, {sweep.workers} worker(s))")


if __name__ == "__main__":
    main()
