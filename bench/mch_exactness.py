"""Where MCH's flattened weights give H-DRF's allocation exactly, and where only approximately.

    .venv/bin/python bench/mch_exactness.py [--trees 200] [--seed 1]

MCH (You et al., §III-A) replaces H-DRF's recursive rescaling by one weight
per leaf. The paper shows the weights reproduce H-DRF's guarantee for
full-type jobs (every job asks for every resource) and derives the
partial-type rules (§III-A.3) on minimal cases. This benchmark draws random
organisation trees (2-3 levels, 2-4 children per node, two resources, every
job with endless tasks) in three classes and compares the static allocation
(progressive filling) of MCH with H-DRF's, leaf by leaf:

* ``full-type``: every job asks for both resources;
* ``one partial``: some jobs ask for CPU only, the others for both;
* ``mixed``: a department may hold full-type jobs together with jobs that ask
  for CPU only and jobs that ask for memory only.

Prints per class: trees where MCH equals H-DRF up to the granularity of
whole tasks (every leaf's dominant share within :data:`EQUAL_SHARE`, about
three tasks of the largest demand), the largest per-leaf difference in
dominant share and in tasks, and the allocations of the largest difference.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from sched_engine.fairshare.model import Tree, normalize_model  # noqa: E402
from sched_engine.fairshare.policies import HDRF, MCH  # noqa: E402
from sched_engine.fairshare.state import progressive_filling  # noqa: E402

CLASSES = ("full-type", "one partial", "mixed")
CAPACITY = {"cpu": 2400, "mem": 2400}
# Tasks are whole: a leaf's share moves in steps of up to 4/2400; gaps this small are rounding.
EQUAL_SHARE = 0.005


def demand(kind: str, rng: np.random.Generator) -> dict:
    cpu, mem = (int(v) for v in rng.integers(1, 5, size=2))
    return {"cpu": {"cpu": cpu}, "mem": {"mem": mem}, "both": {"cpu": cpu, "mem": mem}}[kind]


def leaf_kinds(cls: str, count: int, rng: np.random.Generator) -> list[str]:
    if cls == "full-type":
        return ["both"] * count
    if cls == "one partial":
        return [str(k) for k in rng.choice(["both", "cpu"], size=count)]
    return [str(k) for k in rng.choice(["both", "cpu", "mem"], size=count)]


def random_tree(cls: str, rng: np.random.Generator) -> dict:
    names = iter(range(10_000))

    def node(depth: int) -> dict:
        if depth == 0:
            return {"leaf": True}
        children = [node(depth - 1) if rng.random() < 0.7 else {"leaf": True}
                    for _ in range(int(rng.integers(2, 5)))]
        return {"children": children}

    def build(spec: dict, kinds: list[str]) -> dict:
        name = f"n{next(names)}"
        weight = float(rng.choice([1.0, 1.0, 2.0]))
        if spec.get("leaf"):
            return {"name": name, "weight": weight, "demand": demand(kinds.pop(), rng), "tasks": 100_000,
                    "duration": 1.0, "arrival": 0.0, "departure": None}
        return {"name": name, "weight": weight, "children": [build(child, kinds) for child in spec["children"]]}

    shape = node(int(rng.integers(2, 4)))
    count = _leaves(shape)
    root = build(shape, leaf_kinds(cls, count, rng))
    root["name"] = "root"
    return {"resources": [{"name": n, "capacity": c} for n, c in CAPACITY.items()], "tree": root}


def _leaves(spec: dict) -> int:
    return 1 if spec.get("leaf") else sum(_leaves(child) for child in spec["children"])


def compare(model: dict) -> tuple[float, int, list[int], list[int]]:
    """Largest per-leaf dominant-share gap, largest task gap, and both allocations."""
    tree = Tree.from_model(normalize_model(model))
    mch, hdrf = progressive_filling(tree, MCH()), progressive_filling(tree, HDRF())
    share_gap = max(abs(mch.dominant_share(i) - hdrf.dominant_share(i)) for i in range(tree.leaf_count))
    task_gap = max(abs(a - b) for a, b in zip(mch.running, hdrf.running))
    return share_gap, task_gap, mch.running, hdrf.running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=200, help="trees per class")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.trees} random trees per class, capacity {CAPACITY}, seed {args.seed}\n")
    print(f"{'class':<12} {f'equal (gap <= {EQUAL_SHARE})':>20} {'max share gap':>14} {'max task gap':>13}")
    examples = {}
    for cls in CLASSES:
        equal, worst = 0, (-1.0, 0, None, None, None)
        for _ in range(args.trees):
            model = random_tree(cls, rng)
            share_gap, task_gap, mch, hdrf = compare(model)
            equal += share_gap <= EQUAL_SHARE
            if share_gap > worst[0]:
                worst = (share_gap, task_gap, model, mch, hdrf)
        examples[cls] = worst
        print(f"{cls:<12} {equal:>13}/{args.trees:<6} {worst[0]:>14.3f} {worst[1]:>13}")
    for cls, (share_gap, task_gap, model, mch, hdrf) in examples.items():
        if share_gap > EQUAL_SHARE:
            print(f"\nlargest gap, {cls}: MCH {mch} vs H-DRF {hdrf} running tasks per leaf")


if __name__ == "__main__":
    main()
