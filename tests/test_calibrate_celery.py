"""Calibration runs its grid on the Celery workers when REDIS_URL is set: a real redis-server
(tests/support/processes.py) and a real ``celery worker`` process, from the command line and from the Sweeps page."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from components.pages import sweeps as page
from components.scaleout import sweep_executor as scaleout
from sched_engine import sweeps
from sched_engine.__main__ import main
from tests.support.processes import redis_server
from tests.support.sweeps_form import calibrate_form
from tests.test_calibration_grid import LOG

pytestmark = pytest.mark.system   # redis-server and a Celery worker as processes
ROOT = Path(__file__).resolve().parents[1]
READY_S = 120


@contextmanager
def celery_worker(url: str, data: Path, log: Path):
    """One ``celery -A app:celery_app worker`` (one process, its own process group) on ``url``, ready; stopped after."""
    env = {**os.environ, "REDIS_URL": url, "SCHEDSCOPE_DATA": str(data), "PYTHONPATH": str(ROOT)}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "app:celery_app", "worker", "--pool=solo", "--loglevel=INFO",
             "--hostname=calibrate@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + READY_S
        while " ready." not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"no worker within {READY_S} s"
            time.sleep(0.1)
        yield lambda: log.read_text(errors="replace")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


def test_the_calibrate_grid_runs_on_the_celery_workers(tmp_path, monkeypatch, capsys):
    trace, machines = tmp_path / "log.csv", tmp_path / "two.machines"
    trace.write_text(LOG)
    machines.write_text("0\tc\t2\t1\t1\t1048576\n")
    # From the log: 7 per-user limits x 3 capacities (the hardware, the log's p99.9 and peak) = 21 points.
    spec = {"kind": "calibrate", "trace": str(trace), "machines": str(machines), "estimates": ["perfect"],
            "allocation": ["cpus"], "priorities": [False]}
    with redis_server(tmp_path / "redis") as url, celery_worker(url, tmp_path / "data", tmp_path / "w.log") as log:
        monkeypatch.setenv("REDIS_URL", url)
        remote = scaleout.run_sweep(spec, timeout=READY_S)
        assert remote.executor == "celery" and len(remote.table) == 21
        pd.testing.assert_frame_equal(remote.table, sweeps.run_sweep(spec, executor="serial").table)
        assert log().count("schedscope.sweep_point") >= 21 and "succeeded" in log()

        # The command line's calibrate, by default from the log, on the same workers.
        before = log().count("succeeded")
        assert main(["calibrate", "--trace", str(trace), "--machines", str(machines), "--estimates", "perfect",
                     "--allocation", "cpus", "--priorities", "off", "--out", str(tmp_path / "cli")]) == 0
        printed = capsys.readouterr().out
        assert "calibration.csv (21 settings in" in printed and "s on Celery workers)" in printed
        assert log().count("succeeded") - before == 21
        assert len(pd.read_csv(tmp_path / "cli" / "calibration.csv")) == 21

        # The Sweeps page's Calibrate: the HPC2N sample's first 200 jobs, limits from the log.
        store = page.store.SweepStore(tmp_path / "sweeps")
        ids, values = calibrate_form(jobs=200, estimates=["trace"], priorities=[False])
        key, message, cached = page.store.run_form(store, "calibrate", ids, values, lambda done, total: None)
        record = store.get(key)
        assert not cached and record["executor"] == "celery" and "on Celery workers" in message
        assert len(record["table"]) == len(record["spec"]["running_jobs_limits"]) > 1
        gc.collect()   # the results' handles let go while their Redis still answers (they unsubscribe when freed)
