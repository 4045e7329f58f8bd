"""Peer check against AccaSim 1.1.3: its FIFO dispatcher and our FCFS on the same cleaned real trace.

    .venv/bin/python bench/peer_accasim.py [--trace sample_traces/hpc2n-excerpt.swf] [--jobs N] [--quick]

AccaSim is installed from the package index into a throw-away virtual
environment (deleted afterwards unless ``--keep-venv DIR`` names one to
reuse). On Python >= 3.10 it needs ``collections.Mapping`` and friends, which
moved to ``collections.abc``; the runner script puts them back before the
import. AccaSim's FIFO dispatcher (``FirstInFirstOut`` + ``FirstFit``) stops
at the first job that does not fit, i.e. strict FCFS, so per-job start times
must agree with ours exactly. (Its EASY-named dispatcher lets backfilled jobs
delay the head job, so it is not a peer for our EASY.)

The system is one cluster of ``MaxProcs`` single-CPU nodes (AccaSim maps one
SWF processor to one node). Cleaning: jobs with run time > 0 and
1 <= processors <= MaxProcs, requested time raised to at least the run time,
the same processor count written to SWF fields 5 and 8 (AccaSim reads field
8, the request). Prints both throughputs (jobs per wall-clock second of the
simulation run) and their ratio; exits 1 if any start time differs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from sched_engine import run_scenario  # noqa: E402
from sched_engine.batch.traces import read_workload  # noqa: E402

ACCASIM = "accasim==1.1.3"
RUNNER = '''
import collections, collections.abc, json, sys, time
for name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    if not hasattr(collections, name):
        setattr(collections, name, getattr(collections.abc, name))
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import FirstInFirstOut
from accasim.base.allocator_class import FirstFit
workload, config, results = sys.argv[1:4]
schedule = {"format": "{job_id};{queue_time};{start_time};{end_time}",
            "attributes": {"job_id": ("id", "str"), "queue_time": ("queued_time", "int"),
                           "start_time": ("start_time", "int"), "end_time": ("end_time", "int")}}
simulator = Simulator(workload, config, FirstInFirstOut(FirstFit()), RESULTS_FOLDER_PATH=results,
                      SCHEDULE_OUTPUT=schedule, show_statistics=False, statistics_output=False)
wall = time.perf_counter()
simulator.start_simulation()
print(json.dumps({"wall_s": time.perf_counter() - wall}))
'''


def install(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", ACCASIM], check=True)
    return python


def cleaned_trace(trace: Path, jobs: int | None, target: Path) -> tuple[int, int]:
    """Write the cleaned SWF; returns ``(jobs written, MaxProcs)``."""
    workload = read_workload(trace)
    max_procs = int(workload.header.get("MaxProcs") or workload.jobs["procs"].max())
    frame = workload.jobs.sort_values("submit_time", kind="stable")
    frame = frame[(frame["run_time"] > 0) & (frame["procs"] >= 1) & (frame["procs"] <= max_procs)]
    if jobs:
        frame = frame.iloc[:jobs]
    origin = int(frame["submit_time"].iloc[0])
    lines = [f"; MaxNodes: {max_procs}", f"; MaxProcs: {max_procs}"]
    for job in frame.itertuples():
        run = int(job.run_time)
        asked = job.requested_time if job.requested_time == job.requested_time else -1
        requested = max(run, int(asked))
        lines.append(f"{job.job_id} {int(job.submit_time) - origin} -1 {run} {job.procs} -1 -1 {job.procs} "
                     f"{requested} -1 1 1 1 -1 1 -1 -1 -1")
    target.write_text("\n".join(lines) + "\n")
    return len(frame), max_procs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", type=Path, default=ROOT / "sample_traces" / "hpc2n-excerpt.swf")
    parser.add_argument("--jobs", type=int, default=None, help="first N cleaned jobs (default: all)")
    parser.add_argument("--quick", action="store_true", help="the first 500 jobs")
    parser.add_argument("--keep-venv", type=Path, default=None, help="reuse/keep AccaSim's venv here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="peer-accasim-"))
    venv = args.keep_venv or work / "venv"
    try:
        print(f"installing {ACCASIM} into {venv} ...", flush=True)
        python = install(venv)
        trace = work / "cleaned.swf"
        count, max_procs = cleaned_trace(args.trace, 500 if args.quick else args.jobs, trace)
        config = work / "system.json"
        config.write_text(json.dumps({"groups": {"g0": {"core": 1}}, "resources": {"g0": max_procs},
                                      "equivalence": {"processor": {"core": 1}}, "start_time": 0}))
        (work / "runner.py").write_text(RUNNER)
        done = subprocess.run([str(python), str(work / "runner.py"), str(trace), str(config), str(work / "out")],
                              check=True, capture_output=True, text=True)
        peer_wall = json.loads(done.stdout.strip().splitlines()[-1])["wall_s"]
        peer = pd.read_csv(work / "out" / "sched-cleaned.swf", sep=";", header=None,
                           names=["job_id", "submit", "start", "end"], dtype={"job_id": str}).set_index("job_id")

        started = time.perf_counter()
        result = run_scenario({"engine": "batch", "policy": "fcfs", "model": {"trace": {"path": str(trace)}}})
        ours_wall = time.perf_counter() - started
        ours = result.jobs.set_index("job_id")

        both = peer.join(ours, how="inner")
        agree = int((both["start"] - both["submit"] == both["start_time"] - both["submit_time"]).sum())
        print(f"trace {args.trace.name}: {count} cleaned jobs, one cluster of {max_procs} single-CPU nodes")
        print(f"{'simulator':<22}{'jobs':>8}{'wall s':>10}{'jobs/s':>12}")
        print(f"{'AccaSim 1.1.3 FIFO':<22}{len(peer):>8}{peer_wall:>10.3f}{len(peer) / peer_wall:>12,.0f}")
        print(f"{'schedscope FCFS':<22}{len(ours):>8}{ours_wall:>10.3f}{len(ours) / ours_wall:>12,.0f}")
        print(f"throughput ratio (schedscope / AccaSim): {(len(ours) / ours_wall) / (len(peer) / peer_wall):,.1f}x")
        print(f"per-job wait times agreeing: {agree} of {len(both)} jobs present in both "
              f"(AccaSim {len(peer)}, schedscope {len(ours)})")
        return 0 if agree == len(both) == len(ours) == len(peer) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
