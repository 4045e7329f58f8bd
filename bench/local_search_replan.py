"""Local Search re-planning from saved states against re-planning from scratch, side by side in one process.

    .venv/bin/python bench/local_search_replan.py [--repeat 3]

A Local Search move re-plans the touched clusters from the last state saved
before the order changes (``sched_engine.batch.policies.local_search.SAVED_STATES``
along each plan); with none saved every plan starts from the running jobs
alone, as it did before the states were kept. Runs the
sample scenarios under ``ls`` both ways, alternately, prints the best wall
time of each, the ratio, and whether the schedules are the same (they must be).
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
from sched_engine.batch.policies import local_search  # noqa: E402

COLUMNS = ["job_id", "start_time", "end_time", "status", "cluster"]


def timed(scenario: dict, states: int):
    local_search.SAVED_STATES = states
    started = time.perf_counter()
    jobs = run_scenario(scenario).jobs[COLUMNS]
    return time.perf_counter() - started, jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    saved_states = local_search.SAVED_STATES
    print(f"{'scenario':<28} {'scratch s':>10} {'saved s':>10} {'ratio':>7}  same schedule")
    for path in sorted((ROOT / "sample_traces").glob("batch-*.scenario.json")):
        scenario = {**json.loads(path.read_text()), "policy": "ls"}
        best = {"scratch": float("inf"), "saved": float("inf")}
        frames = {}
        for _ in range(args.repeat):
            for name, states in (("scratch", 0), ("saved", saved_states)):
                seconds, frames[name] = timed(scenario, states)
                best[name] = min(best[name], seconds)
        same = frames["scratch"].equals(frames["saved"])
        print(f"{path.name.split('.')[0]:<28} {best['scratch']:>10.2f} {best['saved']:>10.2f} "
              f"{best['saved'] / best['scratch']:>7.2f}  {'yes' if same else 'NO'}", flush=True)
    local_search.SAVED_STATES = saved_states
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
