"""A small run's fixed cost on the production server: CPU seconds per run beyond the simulation itself.

Serves the app as ``make run`` does (gunicorn, ``app:create_server()``, the
embedded run manager; :func:`bench/load.py`'s ``serve``), then runs
``--runs`` sessions one after the other, each as a browser's renderer does
(``tests/support/load.py``'s ``session``: open a scenario's permalink,
press Run on EASY over 300 HPC2N jobs, poll until the result is shown). The
server's CPU time is read before and after from its process tree (gunicorn,
its workers and, once reaped, the run processes they forked). Prints the
CPU seconds per run, the simulation's own CPU seconds (the same scenario run
in this process, warm) and their difference, the fixed cost (issue 37's goal:
at most 0.3 CPU-s), with each session's wall time.

    .venv/bin/python bench/run_fixed_cost.py [--runs 12] [--workers 2] [--threads 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from components.services.workspace import ScenarioStore  # noqa: E402
from sched_engine import run_scenario  # noqa: E402
from tests.support.dash_client import load_scenario  # noqa: E402
from tests.support.load import session  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
bench_load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_load)


def tree_cpu(root: psutil.Process) -> float:
    """CPU seconds of a process and its descendants, with their reaped children's."""
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def simulation_cpu(scenario: dict, repeat: int = 5) -> float:
    """The scenario's own CPU seconds in this process, warm (fastest of ``repeat``)."""
    run_scenario(scenario)
    best = float("inf")
    for seed in range(repeat):
        started = time.process_time()
        run_scenario({**scenario, "seed": 1000 + seed})
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    os.chdir(ROOT)
    own = simulation_cpu(load_scenario(1))
    with tempfile.TemporaryDirectory(prefix="schedscope-fixed-") as directory:
        data = Path(directory) / "data"
        server, url = bench_load.serve(data, args.workers, args.threads, Path(directory) / "server.log")
        try:
            root = psutil.Process(server.pid)
            store = ScenarioStore(data / "scenarios")
            hashes = [store.save(load_scenario(seed), f"fixed {seed}")["hash"] for seed in range(1, args.runs + 2)]
            session(url, hashes[0], time.monotonic() + 300)   # the workers' first page and run: not counted
            time.sleep(1.0)
            before = tree_cpu(root)
            walls = []
            for scenario_hash in hashes[1:]:
                walls.append(session(url, scenario_hash, time.monotonic() + 300)["run_s"])
            time.sleep(1.0)   # the last run process is reaped
            per_run = (tree_cpu(root) - before) / args.runs
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
    print(f"gunicorn {args.workers} workers x {args.threads} threads; {args.runs} sessions one after the other "
          f"(EASY on 300 HPC2N jobs)")
    print(f"  server CPU per session: {per_run:.3f} s (page, Run, polls, result shown)")
    print(f"  the simulation itself, warm in one process: {own:.3f} s")
    print(f"  fixed cost per run: {per_run - own:.3f} CPU-s (goal: at most 0.3)")
    print(f"  Run pressed -> result shown: median {statistics.median(walls):.2f} s, max {max(walls):.2f} s")


if __name__ == "__main__":
    main()
