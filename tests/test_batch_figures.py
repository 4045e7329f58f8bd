"""The batch page's charts at any trace size: hand-computed densities and the payload budget at 450,000 jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from components.figures import batch as figures
from components.figures import gantt
from sched_engine.core.result import timeline_frame

#: The five detail figures of a 450,000-job run, serialised: half the page's 3 MB response budget.
BUDGET = 1.5 * 2**20


def jobs_frame(job_id, start, end, procs, machines, cluster="c", status="finished", submit=None, wait=None):
    """A jobs frame with the engine's column types (one cluster, every job as given)."""
    count = len(job_id)
    start = np.asarray(start, dtype=float)
    return pd.DataFrame({
        "job_id": pd.Series(job_id, dtype="string"),
        "submit_time": start if submit is None else np.asarray(submit, dtype=float),
        "start_time": start, "end_time": np.asarray(end, dtype=float),
        "status": pd.Series(status if isinstance(status, list) else [status] * count, dtype="string"),
        "cluster": pd.Series([cluster] * count, dtype="string"), "procs": np.asarray(procs, dtype=np.int64),
        "wait_time": np.zeros(count) if wait is None else np.asarray(wait, dtype=float),
        "machines": pd.Series(machines, dtype="string"),
    })


def test_occupancy_by_hand():
    """Window [0, 10) in five 2-s bins; busy CPU-seconds per (row, bin)."""
    busy = gantt.occupancy(rows=np.array([0, 1, 1]), starts=np.array([1.0, 3.0, 9.0]),
                             ends=np.array([5.0, 3.5, 20.0]), cpus=np.array([1.0, 2.0, 1.0]),
                             row_count=2, low=0.0, high=10.0, columns=5)
    assert busy.tolist() == [[1.0, 2.0, 1.0, 0.0, 0.0],    # [1, 5): 1 s, 2 s, 1 s
                             [0.0, 1.0, 0.0, 0.0, 1.0]]    # [3, 3.5) on 2 CPUs; [9, 20) clipped to [9, 10)


def test_held_machines_parses_every_entry():
    machines, counts = gantt.held_machines(pd.Series(["0,1,2", "7", "10,12"], dtype="string"))
    assert machines.tolist() == [0, 1, 2, 7, 10, 12] and counts.tolist() == [3, 1, 2]
    machines, counts = gantt.held_machines(pd.Series([], dtype="string"))
    assert machines.size == 0 and counts.size == 0


def test_down_intervals_pair_each_failure_with_the_next_repair():
    timeline = timeline_frame([5.0, 2.0, 9.0, 7.0, 1.0, 3.0], ["c/1", "c/1", "c/1", "c/1", "d/0", "d/0"],
                              ["machine_down"] * 6, [0.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    down = gantt.down_intervals(timeline, end=20.0)
    # c/1: down at 2, up at 5, down at 7, up at 9; d/0: down at 1 (repeated at 3), never up.
    assert down.values.tolist() == [["c", 1, 2.0, 5.0], ["c", 1, 7.0, 9.0], ["d", 0, 1.0, 20.0]]


@pytest.fixture
def density_always(monkeypatch):
    """Every window drawn as a density picture of five time bins."""
    monkeypatch.setattr(gantt, "GANTT_MAX_JOBS", 0)
    monkeypatch.setattr(gantt, "DENSITY_COLUMNS", 5)


def heatmaps(figure, layer):
    return [trace for trace in figure.data if trace.type == "heatmap" and trace.name.endswith(layer)]


def test_density_shares_by_hand(density_always):
    """Two machines of two CPUs, bins of 2 s over [0, 10).

    Job a: 2 CPUs of machine 0 over [1, 5). Job b: 2 CPUs over machines 0 and 1
    (one each) over [5, 10). Machine 1 is down over [0, 1).
    """
    jobs = jobs_frame(["a", "b"], [1.0, 5.0], [5.0, 10.0], [2, 2], ["0", "0,1"])
    timeline = pd.concat([timeline_frame([0.0], ["c"], ["up_cpus"], [4.0]),
                          timeline_frame([0.0, 1.0], ["c/1", "c/1"], ["machine_down"] * 2, [1.0, 0.0])])
    figure = gantt.gantt(jobs, timeline)
    [busy], [down] = heatmaps(figure, "busy"), heatmaps(figure, "down")
    # Machine 0: 2 of 4 CPU-s, 4/4, (2 + 1)/4, 2/4, 2/4. Machine 1: b's one CPU from 5 on.
    assert np.asarray(busy.z).tolist() == [[50, 100, 75, 50, 50], [0, 0, 25, 50, 50]]
    assert np.asarray(down.z).tolist() == [[0, 0, 0, 0, 0], [50, 0, 0, 0, 0]]
    assert np.allclose(busy.x, np.arange(0.0, 10.1, 2.0) / 3600) and list(busy.y) == [-0.5, 0.5, 1.5]
    assert "density picture" in figure.layout.title.text and "machines down" in figure.layout.title.text
    assert busy.customdata is None


def test_density_rows_bin_machines_and_stack_clusters(density_always, monkeypatch):
    """Three machines of one CPU in two rows: machines 0-1, then 2; a second cluster below, after a gap."""
    monkeypatch.setattr(gantt, "DENSITY_ROWS", 3)
    jobs = pd.concat([jobs_frame(["a"], [0.0], [10.0], [1], ["2"]),
                      jobs_frame(["b"], [0.0], [5.0], [1], ["0"], cluster="d")], ignore_index=True)
    timeline = timeline_frame([0.0, 0.0], ["c", "d"], ["up_cpus"] * 2, [3.0, 1.0])
    figure = gantt.gantt(jobs, timeline)
    c, d = heatmaps(figure, "busy")
    assert list(c.y) == [-0.5, 1.5, 2.5] and np.asarray(c.z).tolist() == [[0] * 5, [100] * 5]
    assert list(d.y) == [3.5, 4.5] and np.asarray(d.z).tolist() == [[100, 100, 50, 0, 0]]
    assert list(figure.layout.yaxis.ticktext) == ["c", "d"] and list(figure.layout.yaxis.tickvals) == [1.0, 4.0]


def test_a_fully_busy_machine_reads_100_percent():
    """Four one-CPU machines, each busy all along with back-to-back one-CPU jobs: every cell is 100 %."""
    count = 2000
    starts = np.repeat(np.arange(count // 4) * 10.0, 4)
    jobs = jobs_frame(np.arange(count).astype(str), starts, starts + 10.0, np.ones(count),
                      [str(i % 4) for i in range(count)])
    figure = gantt.gantt(jobs, timeline_frame([0.0], ["c"], ["up_cpus"], [4.0]))
    [busy] = heatmaps(figure, "busy")
    assert np.asarray(busy.z).shape == (4, gantt.DENSITY_COLUMNS) and (np.asarray(busy.z) == 100).all()


def test_wait_distribution_of_a_window_counts_the_jobs_submitted_in_it():
    jobs = jobs_frame(list("abcde"), [0.0] * 5, [1.0] * 5, [1] * 5, ["0"] * 5,
                      status=["finished", "finished", "finished", "killed", "finished"],
                      submit=[10.0, 20.0, 30.0, 35.0, 50.0], wait=[5.0, 5.0, 100.0, 1.0, 7.0])
    figure = figures.wait_distribution([("FCFS", jobs)], window=(15.0, 40.0))
    # Completed and submitted in [15, 40]: b (5 s) and c (100 s).
    assert list(figure.data[0].x) == [5.0, 100.0] and list(figure.data[0].y) == [0.5, 1.0]
    assert "submitted in window" in figure.layout.title.text


def synthetic_run(jobs: int, machines: int = 8192, seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A RICC-sized run built with numpy (no engine): ``jobs`` jobs on one cluster of one-CPU machines.

    Each job holds ``2^0..2^5`` contiguous machines from a random first one;
    starts are sorted, lengths log-normal. The machines text is built in
    Arrow (a list of indices per job, joined with commas).
    """
    rng = np.random.default_rng(seed)
    procs = 2 ** rng.integers(0, 6, jobs)
    first = rng.integers(0, machines - 32, jobs)
    start = np.sort(rng.random(jobs) * jobs * 30.0)
    end = start + rng.lognormal(6.0, 1.0, jobs)
    offsets = np.r_[0, np.cumsum(procs)]
    held = np.repeat(first - offsets[:-1], procs) + np.arange(offsets[-1])
    text = pc.binary_join(pa.ListArray.from_arrays(offsets, pa.array(held).cast(pa.string())), ",")
    frame = jobs_frame(np.arange(jobs).astype(str), start, end, procs, text.to_pandas(), submit=start)
    changes = np.concatenate([start, end])
    order = np.argsort(changes, kind="stable")
    used = np.cumsum(np.concatenate([procs, -procs])[order]).astype(float)
    queue_t = np.sort(rng.random(2 * jobs) * jobs * 30.0)
    timeline = pd.concat([
        timeline_frame(changes[order], ["c"] * len(order), ["used_cpus"] * len(order), used),
        timeline_frame([0.0], ["c"], ["up_cpus"], [float(machines)]),
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
            gantt.gantt(jobs, timeline, window)]


def test_a_450000_job_run_fits_the_payload_budget(large_run):
    jobs, timeline = large_run
    built = detail_figures(jobs, timeline, None)
    assert sum(len(figure.to_json()) for figure in built) <= BUDGET
    utilisation, queue, _, waits, machines = built
    assert [trace.type for trace in machines.data] == ["heatmap"] and "zoom in" in machines.layout.title.text
    z = np.asarray(machines.data[0].z)
    assert z.shape == (gantt.DENSITY_ROWS, gantt.DENSITY_COLUMNS) and z.dtype == np.uint8 and z.max() <= 100
    # The reduced series keep the full series' extremes; the CDF is quantiles.
    used = timeline[timeline["metric"] == "used_cpus"]["value"] / 8192
    assert max(utilisation.data[0].y) == used.max() and min(utilisation.data[0].y) == used.min()
    assert len(utilisation.data[0].y) < len(used) / 100
    queued = timeline[timeline["metric"] == "queue_length"]["value"]
    assert max(queue.data[0].y) == queued.max() and min(queue.data[0].y) == queued.min()
    assert len(waits.data[0].x) <= 1001


def test_a_zoomed_window_shows_each_job(large_run):
    jobs, timeline = large_run
    window = (6_000_000.0, 6_000_600.0)
    built = detail_figures(jobs, timeline, window)
    gantt = built[-1]
    bars = [trace for trace in gantt.data if trace.type == "bar" and trace.name == "finished"]
    inside = jobs[(jobs["end_time"] >= window[0]) & (jobs["start_time"] <= window[1])]
    assert bars and len(bars[0].y) == int(inside["procs"].sum())   # a bar per (job, machine)
    assert {str(job) for job in bars[0].customdata[:, 0]} == set(inside["job_id"])
    assert sum(len(figure.to_json()) for figure in built) <= BUDGET


def test_cluster_labels_never_overlap_and_the_large_clusters_keep_theirs():
    sizes = {"big": 200, "tiny_a": 1, "tiny_b": 1, "tiny_c": 1, "medium": 40}
    offsets = gantt._first_rows(sizes)
    positions, names = gantt.cluster_ticks(sizes, offsets)
    total = sum(sizes.values()) + len(sizes) - 1
    assert "big" in names and "medium" in names
    assert all(b - a >= gantt.LABEL_SPACING * total for a, b in zip(positions, positions[1:]))
    assert positions == sorted(positions) and len(names) < len(sizes)
    few = {"a": 10, "b": 10}
    assert gantt.cluster_ticks(few, gantt._first_rows(few))[1] == ["a", "b"]


def test_killed_jobs_with_none_killed_is_one_sentence_not_bare_axes():
    none = timeline_frame([0.0, 50.0], ["all", "all"], ["killed_jobs", "killed_jobs"], [0.0, 0.0])
    some = timeline_frame([0.0, 50.0], ["all", "all"], ["killed_jobs", "killed_jobs"], [0.0, 2.0])
    said = figures.series_by_run([("EASY", none), ("FCFS", none)], "all", "killed_jobs", "Killed jobs", "jobs",
                                 none="none in the runs shown.")
    assert list(said.data) == [] and said.layout.height == 80
    assert said.layout.annotations[0].text == "Killed jobs: none in the runs shown."
    drawn = figures.series_by_run([("EASY", none), ("FCFS", some)], "all", "killed_jobs", "Killed jobs", "jobs",
                                  none="none in the runs shown.")
    assert [trace.name for trace in drawn.data] == ["EASY", "FCFS"]


def test_the_per_job_chart_colours_each_users_jobs_and_outlines_every_bar():
    jobs = jobs_frame(["a", "b", "c"], [0.0, 0.0, 5.0], [5.0, 4.0, 9.0], [1, 1, 1], ["0", "1", "0"])
    jobs["user"] = pd.Series(["u2", "u1", "u2"], dtype="string")
    figure = gantt.gantt(jobs, timeline_frame([0.0], ["c"], ["up_cpus"], [2.0]))
    [bars] = [trace for trace in figure.data if trace.name == "finished"]
    colours = dict(zip(bars.customdata[:, 0], bars.marker.color))
    assert colours["a"] == colours["c"] != colours["b"]          # one user, one colour
    assert bars.marker.line.width > 0 and "colour: user" in figure.layout.title.text
    assert "user %{customdata[6]}" in bars.hovertemplate
    jobs["user"] = "u1"                                          # one user only: one colour, nothing said
    figure = gantt.gantt(jobs, timeline_frame([0.0], ["c"], ["up_cpus"], [2.0]))
    assert "colour" not in figure.layout.title.text


def test_objective_panels_are_named_as_the_runs_table_and_a_panel_of_zeros_says_so():
    from components.figures import batch as batch_figures

    table = pd.DataFrame({"scenario": ["BASIC"] * 4, "policy": ["EASY"] * 4,
                          "metric": [m for m, _ in batch_figures.OBJECTIVES], "mean": [1.2, 30.0, 4.0, 0.0],
                          "std": [0.0] * 4, "count": [1] * 4})
    figure = batch_figures.objective_bars(table)
    texts = [a.text for a in figure.layout.annotations]
    assert texts[:4] == ["Mean slowdown (×)", "Mean response time (s)", "Mean wait (s)", "Killed jobs"]
    assert texts[4] == "none in any run" and figure.layout.yaxis4.range == (0, 1)
    assert figure.layout.xaxis4.visible is False and figure.layout.yaxis4.visible is False   # no grid around nothing
    assert figure.layout.yaxis3.visible is not False
