"""Decision cost of hierarchical fair sharing: the MCH paper's Fig. 5.

    .venv/bin/python bench/fairshare_cost.py [--quick] [--seed N]

You et al. (§IV-B) schedule jobs sampled from the Google cluster trace on
full binary hierarchies of 2 to 5 levels and compare the total scheduler run
time of MCH, H-DRF, C-CH and M-CH as the number of jobs grows; they report
H-DRF's time as "almost the square" of MCH's on 3-5 levels and about twice
MCH's on 2 levels, with C-CH / M-CH cheapest.

Our reading of the set-up:
* a *L-level* hierarchy is a full binary tree of departments with ``2**L``
  departments on its bottom level (the paper's 2-level tree has 4 leaves);
  jobs are spread round-robin over the bottom departments;
* jobs look like Google cluster jobs (Reiss et al. 2011): per-task CPU and
  memory requests normalised to one machine, small and heavy-tailed (CPU from
  a few discrete sizes, memory log-normal, weakly correlated), a
  heavy-tailed number of tasks, exponential task durations, Poisson arrivals;
  10% of jobs ask for one resource only (partial-type);
* the cluster is 500 machines (capacity 500 CPU, 500 memory units), small
  enough that jobs queue.

Decision cost = ``scheduler_cpu_s`` of the run (CPU time inside the policy
and its bookkeeping, recorded by the simulator), decisions = tasks started.
Timings are CPU time on a shared machine: compare ratios measured in the
same run, not absolute numbers across machines.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sched_engine.fairshare.model import Tree, normalize_model  # noqa: E402
from sched_engine.fairshare.simulate import simulate  # noqa: E402
from sched_engine.registry import REGISTRY  # noqa: E402

POLICIES = ("mch", "hdrf", "c-ch", "m-ch", "drf")
MACHINES = 500.0
TARGET_DECISIONS_PER_SECOND = 100_000


def google_like_job(rng: np.random.Generator, name: str, horizon: float) -> dict:
    """One job with a Google-trace-like task shape (machine-normalised units)."""
    cpu = float(rng.choice([0.0625, 0.125, 0.25, 0.5, 1.0], p=[0.25, 0.3, 0.25, 0.15, 0.05]))
    memory = float(min(1.0, max(0.01, cpu * rng.lognormal(0.0, 0.7))))
    demand = {"cpu": cpu, "mem": memory}
    if rng.random() < 0.1:
        del demand["cpu" if rng.random() < 0.5 else "mem"]
    return {
        "name": name,
        "demand": demand,
        "tasks": int(min(2000, 1 + rng.pareto(1.2) * 40)),
        "duration": float(1.0 + rng.exponential(60.0)),
        "arrival": float(rng.uniform(0.0, horizon)),
    }


def hierarchy_model(rng: np.random.Generator, levels: int, jobs: int) -> dict:
    """A fair-sharing model: a full binary tree of ``levels`` department levels with ``jobs`` jobs below."""
    bottom: list[dict] = []

    def department(name: str, level: int) -> dict:
        node = {"name": name, "children": []}
        if level == levels:
            bottom.append(node)
        else:
            node["children"] = [department(f"{name}.{i}", level + 1) for i in (0, 1)]
        return node

    root = {"name": "root", "children": [department(f"d{i}", 1) for i in (0, 1)]}
    for j in range(jobs):
        bottom[j % len(bottom)]["children"].append(google_like_job(rng, f"job{j}", horizon=20.0 * jobs))
    return {"resources": [{"name": "cpu", "capacity": MACHINES}, {"name": "mem", "capacity": MACHINES}],
            "tree": root}


def hierarchy(rng: np.random.Generator, levels: int, jobs: int) -> Tree:
    """:func:`hierarchy_model` as the engine's tree."""
    return Tree.from_model(normalize_model(hierarchy_model(rng, levels, jobs)))


def measure(tree: Tree, policy: str) -> tuple[float, int]:
    """``(scheduler seconds, decisions)`` of one run without timeline recording."""
    _, _, summary = simulate(tree, REGISTRY.create("fairshare", policy), record=False)
    values = summary.set_index("metric")["value"]
    return float(values["scheduler_cpu_s"]), int(values["decisions"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer job counts (about 20 s)")
    parser.add_argument("--seed", type=int, default=2019)
    args = parser.parse_args()
    job_counts = (16, 64) if args.quick else (16, 32, 64, 128, 256)

    header = f"{'levels':>6} {'jobs':>5} {'decisions':>9} " + " ".join(f"{p + ' ms':>10}" for p in POLICIES)
    print("Total scheduler time per policy (MCH paper Fig. 5)")
    print(header + f" {'H-DRF/MCH':>9} {'log ratio':>9}")
    per_depth: dict[int, list[tuple[float, float, int]]] = {}
    for levels in (2, 3, 4, 5):
        for jobs in job_counts:
            tree = hierarchy(np.random.default_rng(args.seed + 1000 * levels + jobs), levels, jobs)
            seconds, decisions = {}, 0
            for policy in POLICIES:
                seconds[policy], decisions = measure(tree, policy)
            ratio = seconds["hdrf"] / seconds["mch"]
            # "H-DRF is almost the square of MCH": log(H-DRF) / log(MCH) in ms units.
            log_ratio = math.log(seconds["hdrf"] * 1e3) / math.log(seconds["mch"] * 1e3) if seconds["mch"] > 1e-3 else float("nan")
            per_depth.setdefault(levels, []).append((seconds["mch"], seconds["hdrf"], decisions))
            cells = " ".join(f"{seconds[p] * 1e3:>10.1f}" for p in POLICIES)
            print(f"{levels:>6} {jobs:>5} {decisions:>9} {cells} {ratio:>9.2f} {log_ratio:>9.2f}")

    print("\nPer depth (all job counts together)")
    print(f"{'levels':>6} {'H-DRF/MCH':>10} {'MCH decisions/s':>16}")
    total_mch, total_decisions = 0.0, 0
    for levels, rows in per_depth.items():
        mch = sum(r[0] for r in rows)
        hdrf = sum(r[1] for r in rows)
        decisions = sum(r[2] for r in rows)
        total_mch += mch
        total_decisions += decisions
        print(f"{levels:>6} {hdrf / mch:>10.2f} {decisions / mch:>16,.0f}")
    overall = total_decisions / total_mch
    verdict = "met" if overall >= TARGET_DECISIONS_PER_SECOND else "NOT met"
    print(f"\nMCH overall: {overall:,.0f} decisions/s (goal >= {TARGET_DECISIONS_PER_SECOND:,}: {verdict})")
    ratios = [sum(r[1] for r in rows) / sum(r[0] for r in rows) for rows in per_depth.values()]
    growing = all(b >= a for a, b in zip(ratios, ratios[1:]))
    print(f"H-DRF/MCH ratio by depth {' -> '.join(f'{r:.1f}' for r in ratios)}: "
          f"{'grows with depth' if growing else 'does not grow monotonically'} "
          "(paper: about 2x at 2 levels, H-DRF ~ MCH squared at 3-5 levels)")


if __name__ == "__main__":
    main()
