"""Engine speed, one line per run: each engine's presets and samples, and RICC under FCFS, EASY and CONS.

    .venv/bin/python bench/kernel_speed.py [--ricc PATH] [--ricc-jobs 50000] [--repeat 3] [--save DIR]

Prints the fastest of ``--repeat`` runs of :func:`run_scenario` per scenario
(wall seconds, the scheduler's CPU seconds where the engine reports them).
``--save DIR`` writes each run's jobs and timeline frames as CSV, so the schedules of two
versions of the engine can be compared file by file (``diff -r``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine import run_scenario  # noqa: E402
from sched_engine.elastic import presets as elastic_presets  # noqa: E402
from sched_engine.fairshare import presets as fairshare_presets  # noqa: E402
from sched_engine.network import presets as network_presets  # noqa: E402

DEFAULT_RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def scenarios(ricc: Path, ricc_jobs: int) -> dict[str, dict]:
    runs: dict[str, dict] = {}
    for policy in ("drf", "hdrf", "mch"):
        runs[f"fairshare fig4 {policy}"] = {"engine": "fairshare", "policy": policy,
                                            "model": fairshare_presets.fig4_model()}
        runs[f"fairshare starter {policy}"] = {"engine": "fairshare", "policy": policy,
                                               "model": fairshare_presets.starter_model()}
    for name, preset in network_presets.PRESETS.items():
        runs[f"network {name}"] = {"engine": "network", "policy": preset["policy"],
                                   "policy_params": preset["policy_params"], "seed": preset["seed"],
                                   "model": preset["model"]()}
    for policy in ("yarn", "yarn-me", "meganode"):
        runs[f"elastic paper {policy}"] = {"engine": "elastic", "policy": policy, "seed": 1,
                                           "model": elastic_presets.paper_model()}
    for sample in sorted((ROOT / "sample_traces").glob("batch-*.scenario.json")):
        spec = json.loads(sample.read_text())
        for policy in ("fcfs", "easy", "cons", "ls"):
            runs[f"batch {sample.name.split('.')[0]} {policy}"] = {**spec, "policy": policy}
    if ricc.exists():
        for policy in ("fcfs", "easy", "cons"):
            runs[f"batch RICC {ricc_jobs} {policy}"] = {
                "engine": "batch", "policy": policy, "seed": 1,
                "model": {"trace": {"path": str(ricc), "max_jobs": ricc_jobs}}}
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", type=Path, default=DEFAULT_RICC)
    parser.add_argument("--ricc-jobs", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run only scenarios whose name contains this text")
    parser.add_argument("--save", type=Path, default=None)
    args = parser.parse_args()
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    for name, spec in scenarios(args.ricc, args.ricc_jobs).items():
        if args.only not in name:
            continue
        best = float("inf")
        result = None
        for _ in range(args.repeat if "RICC" not in name else 1):
            started = time.perf_counter()
            result = run_scenario(spec)
            best = min(best, time.perf_counter() - started)
        print(f"{name:45s} {best:8.3f} s  jobs={len(result.jobs)}", flush=True)
        if args.save:
            stem = name.replace(" ", "_").replace(",", "")
            result.jobs.to_csv(args.save / f"{stem}.jobs.csv", index=False)
            result.timeline.to_csv(args.save / f"{stem}.timeline.csv", index=False)


if __name__ == "__main__":
    main()
