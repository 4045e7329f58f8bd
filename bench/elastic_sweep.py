"""Paper Fig. 6: YARN-ME / YARN average job runtime over the Table 2 sweep, and vs Meganode.

    .venv/bin/python bench/elastic_sweep.py            # 3 maxima per parameter, 5 traces per configuration
    .venv/bin/python bench/elastic_sweep.py --quick    # 2 maxima per parameter, 2 traces per configuration

100 nodes (16 cores, 10 GB), 100-job traces with arrivals uniform in
[0, 1000] s (§6.1). Table 2 keeps each parameter's min and sweeps its max
over an interval; we take evenly spaced maxima in each interval and every
combination of them (a configuration), several traces per configuration.
Penalties: the reducer (spill) model at 1.5x and 3x. For each distribution
and penalty the script prints, over configurations, the median of the
per-configuration median ratio, the worst ratio seen, the share of
configurations whose median ratio is <= 0.7, and the share of traces on which
YARN-ME beats Meganode -- beside the paper's figures.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.elastic import simulate_jobs  # noqa: E402
from sched_engine.elastic.policies import YARN, YARNME, Meganode  # noqa: E402
from sched_engine.elastic.traces import TABLE2, generate_trace  # noqa: E402

NODES, CORES, MEMORY_MB = 100, 16, 10_000
PENALTIES = (1.5, 3.0)
PAPER = {
    ("uniform", 3.0): "median <= 1; ~40% of configurations <= 0.7",
    ("uniform", 1.5): "median <= 1; larger gains than 3x; beats Meganode on 40-60% of traces",
    ("exponential", 3.0): "median <= 1; smaller gains than uniform",
    ("exponential", 1.5): "median <= 1; beats Meganode on ~20% of traces",
}


def average_runtime(sim) -> float:
    return float(np.mean([s.end - s.job.arrival for s in sim.jobs]))


def configurations(distribution: str, points: int):
    ranges = TABLE2[distribution]
    axes = []
    for name in ("tasks_per_job", "memory_gb", "duration_s"):
        low, (first, last) = ranges[name]
        maxima = np.linspace(first, last, points)
        axes.append([(low, int(m) if name == "tasks_per_job" else float(m)) for m in maxima])
    for tasks, memory, duration in itertools.product(*axes):
        yield {"distribution": distribution, "jobs": 100, "tasks_per_job": list(tasks), "memory_gb": list(memory),
               "duration_s": list(duration), "arrival_s": [0.0, 1000.0]}


def run_trace(spec: dict, seed: int) -> dict:
    jobs = generate_trace(spec, np.random.default_rng(seed))
    cores, memory = [CORES] * NODES, [MEMORY_MB] * NODES
    out = {"yarn": average_runtime(simulate_jobs(cores, memory, 100, {"kind": "spill", "factor": 1.0}, jobs, YARN())),
           "meganode": average_runtime(simulate_jobs(cores, memory, 100, {"kind": "spill", "factor": 1.0}, jobs, Meganode()))}
    for factor in PENALTIES:
        sim = simulate_jobs(cores, memory, 100, {"kind": "spill", "factor": factor}, jobs, YARNME())
        out[factor] = average_runtime(sim)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 maxima per parameter, 2 traces each")
    args = parser.parse_args()
    points, runs = (2, 2) if args.quick else (3, 5)
    print(f"{'distribution':>12} {'penalty':>7} {'configs':>7} {'median':>7} {'worst':>6} {'<=0.7':>6} "
          f"{'beats_mega':>10} {'ME/mega':>8}  paper")
    for distribution in ("uniform", "exponential"):
        per_config = {f: [] for f in PENALTIES}
        worst = {f: 0.0 for f in PENALTIES}
        beats = {f: [] for f in PENALTIES}
        vs_mega = {f: [] for f in PENALTIES}
        for index, spec in enumerate(configurations(distribution, points)):
            results = [run_trace(spec, 1000 * index + seed) for seed in range(runs)]
            for factor in PENALTIES:
                ratios = [r[factor] / r["yarn"] for r in results]
                per_config[factor].append(float(np.median(ratios)))
                worst[factor] = max(worst[factor], max(ratios))
                beats[factor] += [r[factor] < r["meganode"] for r in results]
                vs_mega[factor] += [r[factor] / r["meganode"] for r in results]
        for factor in PENALTIES:
            medians = np.array(per_config[factor])
            print(f"{distribution:>12} {factor:>6.1f}x {len(medians):>7d} {np.median(medians):7.3f} {worst[factor]:6.3f} "
                  f"{np.mean(medians <= 0.7):6.0%} {np.mean(beats[factor]):10.0%} {np.median(vs_mega[factor]):8.3f}  "
                  f"{PAPER[(distribution, factor)]}", flush=True)


if __name__ == "__main__":
    main()
