"""The batch page's charts at any trace size: hand-computed densities and the payload budget at 450,000 jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from components import batch_figures as figures
from sched_engine.core.result import timeline_frame

BUDGET = 3 * 2**20


def test_occupancy_by_hand():
    """Window [0, 10) in five 2-s bins; busy CPU-seconds per (row, bin)."""
    busy = figures.occupancy(rows=np.array([0, 1, 1]), starts=np.array([1.0, 3.0, 9.0]),
                             ends=np.array([5.0, 3.5, 20.0]), cpus=np.array([1.0, 2.0, 1.0]),
                             row_count=2, low=0.0, high=10.0, columns=5)
    assert busy.tolist() == [[1.0, 2.0, 1.0, 0.0, 0.0],    # [1, 5): 1 s, 2 s, 1 s
                             [0.0, 1.0, 0.0, 0.0, 1.0]]    # [3, 3.5) on 2 CPUs; [9, 20) clipped to [9, 10)


def test_held_machines_parses_every_entry():
    machines, counts = figures.held_machines(pd.Series(["0,1,2", "7", "10,12"], dtype="string"))
    assert machines.tolist() == [0, 1, 2, 7, 10, 12] and counts.tolist() == [3, 1, 2]


def synthetic_run(jobs: int, machines: int = 1024, seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run of ``jobs`` jobs on one cluster of one-CPU machines: contiguous machines, back-to-back starts."""
    rng = np.random.default_rng(seed)
    procs = 2 ** rng.integers(0, 5, jobs)
    first = rng.integers(0, machines - 16, jobs)
    start = np.sort(rng.random(jobs) * jobs * 30.0)
    end = start + rng.lognormal(6.0, 1.0, jobs)
    text = [",".join(map(str, range(f, f + p))) for f, p in zip(first.tolist(), procs.tolist())]
    frame = pd.DataFrame({
        "job_id": pd.Series(np.arange(jobs).astype(str), dtype="string"), "submit_time": start,
        "start_time": start, "end_time": end, "status": pd.Series(["completed"] * jobs, dtype="string"),
        "cluster": pd.Series(["cluster"] * jobs, dtype="string"), "procs": procs, "run_time": end - start,
        "estimate": end - start, "wait_time": np.zeros(jobs), "user": pd.Series(["u"] * jobs, dtype="string"),
        "reason": pd.Series([""] * jobs, dtype="string"), "machines": pd.Series(text, dtype="string")})
    changes = np.concatenate([start, end])
    order = np.argsort(changes, kind="stable")
    used = np.cumsum(np.concatenate([procs, -procs])[order]).astype(float)
    queue_t = np.sort(rng.random(2 * jobs) * jobs * 30.0)
    timeline = pd.concat([
        timeline_frame(changes[order], ["cluster"] * len(order), ["used_cpus"] * len(order), used),
        timeline_frame([0.0], ["cluster"], ["up_cpus"], [float(machines)]),
        timeline_frame(queue_t, ["queue"] * len(queue_t), ["queue_length"] * len(queue_t),
                       rng.integers(0, 5000, len(queue_t)).astype(float)),
        timeline_frame([0.0], ["all"], ["killed_jobs"], [0.0]),
    ], ignore_index=True)
    return frame, timeline


@pytest.fixture(scope="module")
def large_run():
    return synthetic_run(450_000)


def detail_figures(jobs, timeline, window):
    return [figures.utilisation_over_time(timeline, window),
            figures.series_by_run([("EASY", timeline)], "queue", "queue_length", "Queue", "jobs", window),
            figures.series_by_run([("EASY", timeline)], "all", "killed_jobs", "Killed", "jobs", window),
            figures.wait_distribution([("EASY", jobs)], window),
            figures.gantt(jobs, timeline, window)]


def test_a_450000_job_run_fits_the_payload_budget(large_run):
    jobs, timeline = large_run
    built = detail_figures(jobs, timeline, None)
    assert sum(len(figure.to_json()) for figure in built) <= BUDGET
    gantt = built[-1]
    assert [trace.type for trace in gantt.data] == ["heatmap"] and "zoom in" in gantt.layout.title.text
    z = np.asarray(gantt.data[0].z, dtype=float)
    assert z.shape == (figures.DENSITY_ROWS, figures.DENSITY_COLUMNS)
    assert np.nanmax(z) <= 1.0 and np.nanmin(z) >= 0.0
    # The queue's peak survives the reduction.
    queue = timeline[timeline["metric"] == "queue_length"]["value"]
    assert max(built[1].data[0].y) == queue.max()


def test_a_zoomed_window_shows_each_job(large_run):
    jobs, timeline = large_run
    window = (6_000_000.0, 6_000_600.0)
    gantt = figures.gantt(jobs, timeline, window)
    bars = [trace for trace in gantt.data if trace.type == "bar" and trace.name == "completed"]
    inside = jobs[(jobs["end_time"] >= window[0]) & (jobs["start_time"] <= window[1])]
    assert bars and len(bars[0].y) == int(inside["procs"].sum())   # a bar per (job, machine)
    assert {str(job) for job in bars[0].customdata[:, 0]} == set(inside["job_id"])


def test_a_fully_busy_machine_reads_100_percent():
    """Four one-CPU machines, each busy all along with back-to-back one-CPU jobs: every cell is 1."""
    count = 2000
    starts = np.repeat(np.arange(count // 4) * 10.0, 4)
    jobs = pd.DataFrame({
        "job_id": pd.Series(np.arange(count).astype(str), dtype="string"), "start_time": starts,
        "end_time": starts + 10.0, "status": pd.Series(["completed"] * count, dtype="string"),
        "cluster": pd.Series(["c"] * count, dtype="string"), "procs": np.ones(count, dtype=int),
        "machines": pd.Series([str(i % 4) for i in range(count)], dtype="string")})
    timeline = timeline_frame([0.0], ["c"], ["up_cpus"], [4.0])
    gantt = figures.gantt(jobs, timeline)
    z = np.asarray(gantt.data[0].z, dtype=float)
    assert gantt.data[0].type == "heatmap" and z.shape[0] == 4 and np.allclose(z, 1.0)
