"""The fair-sharing, network and elasticity pages at the size of their benchmarks: every response ≤ 3 MB.

Each page's callbacks are pure functions of ``[(run record, result)]``; here
they get benchmark-size results (the scenarios of ``bench/page_scale.py``)
and each output, and each whole response, must serialise (as Dash sends it)
to at most 3 MB, with charts reduced as the pages promise. Fair sharing
runs MCH for real once and shows it under four policy labels; the network
runs every scheme for real; the elasticity results are synthetic frames of
the engine's schema at full size (3,000 jobs, the longest series the engine
keeps), since simulating 3,000 jobs on 3,000 nodes takes about a minute.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from plotly.io.json import to_json_plotly

from components.figures import fairshare as fairshare_figures
from components.figures import network as network_figures
from components.figures.downsample import ECDF_POINTS, TIME_BINS
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from components.services.runs import ResultCache
from sched_engine.core.result import SimulationResult, timeline_frame

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import page_scale  # noqa: E402

pytestmark = pytest.mark.slow   # benchmark-size runs
BUDGET = 3_000_000
#: Changes per elasticity series: the engine keeps every change, so the page must reduce them.
SERIES_POINTS = 200_000


def assert_within_budget(outputs) -> None:
    """Every output and the whole response serialise to at most 3 MB."""
    for output in outputs:
        assert len(to_json_plotly(output)) <= BUDGET
    assert len(to_json_plotly(list(outputs))) <= BUDGET


# ---- fair sharing: a 5-level tree of 1,024 jobs --------------------------------------------------


@pytest.fixture(scope="module")
def fairshare(tmp_path_factory):
    """The benchmark tree and its MCH run shown as four policies (the page draws one panel each)."""
    model = page_scale.fairshare_model()
    results = ResultCache(tmp_path_factory.mktemp("fairshare"))
    [record], _ = fairshare_page.run.run_policies(results, model, ["mch"], lambda done, total: None)
    result = results.get(record["hash"])
    loaded = [({**record, "label": label}, result) for label in ("MCH", "H-DRF", "C-CH", "M-CH")]
    return model, loaded


def test_fairshare_page_draws_a_large_tree_folded_and_its_shares_per_department(fairshare):
    model, loaded = fairshare
    leaves = fairshare_page.tree.leaves_of(model)
    assert len(leaves) == 1024
    departments = fairshare_page.tree.share_nodes(model)
    assert len(departments) == 32 and departments[:2] == ["d0.0.0.0.0", "d0.0.0.0.1"]  # the bottom departments
    charts = fairshare_page.charts.chart_outputs(loaded, departments[5])
    assert_within_budget(charts)
    shares = charts[0]
    assert [trace.type for trace in shares.data] == ["heatmap"] * 4
    assert list(shares.data[0].y) == departments
    assert shares.data[0].z.shape == (32, fairshare_figures.HEATMAP_COLUMNS)
    assert len(shares.layout.shapes) == 4 and shares.layout.shapes[0].y0 == 4.5   # the hovered row outlined
    tasks = fairshare_page.charts.tasks_figure(loaded, None)
    assert_within_budget([tasks])
    assert "of 1024 jobs running" in tasks.layout.xaxis.title.text and len(tasks.data[0].x) < len(leaves)
    elements = fairshare_page.tree.tree_elements(model)
    assert_within_budget([elements])
    assert len(elements) == 2 * 63 - 1 and not any(e.get("classes") == "job" for e in elements)
    assert next(e for e in elements if e["data"].get("id") == departments[0])["data"]["label"].endswith("32 jobs")


def test_fairshare_heatmap_of_every_leaf_stays_within_budget(fairshare):
    _, loaded = fairshare
    runs = [(record["label"], result.timeline) for record, result in loaded]
    leaves = list(loaded[0][1].jobs["job_id"])
    figure = fairshare_figures.share_timelines(runs, leaves, "job33")                 # rows: the leaves themselves
    assert_within_budget([figure])
    assert list(figure.data[0].y) == leaves
    assert figure.data[0].z.size <= fairshare_figures.HEATMAP_CELLS and figure.layout.shapes[0].y0 == 32.5


def test_fairshare_hover_patches_the_highlight_and_finds_the_heatmap_row(fairshare):
    _, loaded = fairshare
    point = {"points": [{"x": 100.0, "y": "d0.0.1.0.1", "z": 0.12, "curveNumber": 0}]}
    assert fairshare_page.charts.hovered_leaf(point) == "d0.0.1.0.1"
    patch = fairshare_page.charts.share_highlight(loaded, "d0.0.1.0.1")
    assert_within_budget([patch])
    operations = patch.to_plotly_json()["operations"]
    assert [op["location"] for op in operations] == [["layout", "shapes"]]
    assert [shape["y0"] for shape in operations[0]["params"]["value"]] == [4.5] * 4
    assert fairshare_page.tree.tree_stylesheet("d0.1")[-1]["selector"] == 'node[id = "d0.1"]'


def test_fairshare_lines_keep_a_bounded_number_of_points():
    end = 10_000.0
    times = np.linspace(0.0, end, 50_000)
    timeline = pd.concat([
        timeline_frame(times, [leaf] * times.size, ["dominant_share"] * times.size, np.random.default_rng(1).random(times.size))
        for leaf in ("a", "b")
    ], ignore_index=True).sort_values("time", kind="stable")
    figure = fairshare_figures.share_timelines([("MCH", timeline), ("DRF", timeline)], ["a", "b"], "b")
    assert [trace.type for trace in figure.data] == ["scatter"] * 4
    assert sum(len(trace.x) for trace in figure.data) <= fairshare_figures.LINE_POINTS + 2 * len(figure.data)
    assert_within_budget([figure])
    operations = fairshare_figures.share_highlight([("MCH", timeline)] * 2, ["a", "b"], "a").to_plotly_json()
    assert {tuple(op["location"]): op["params"]["value"] for op in operations["operations"]}[("data", 0, "line", "width")] == 4


# ---- network: 512 machines, 100 applications of width 128 ----------------------------------------


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    results = ResultCache(tmp_path_factory.mktemp("network"))
    return page_scale.network_runs(results, page_scale.network_settings())


def test_network_page_at_the_fig6_benchmark_stays_within_budget(network):
    labels = [record["label"] for record, _ in network]
    app = str(network[0][1].jobs["job_id"].iloc[3])
    summary = network_page.charts.summary_outputs(network, None)
    assert_within_budget(summary)
    assert len(summary[4]) == 100                                             # one choice per application
    compare = network_page.charts.compare_outputs(network, app, None)
    assert_within_budget(compare)
    lines = compare[0].data
    assert sum(len(trace.x) for trace in lines) <= network_figures.ISOLATION_POINTS + 2 * len(lines)
    heatmap = network_page.charts.heatmap_figure(network, labels[-1], app, None)
    assert_within_budget([heatmap])
    heat = [trace for trace in heatmap.data if trace.type == "heatmap"]
    assert len(heat[0].y) == 512 and heat[0].z.size <= network_figures.HEATMAP_MAX_CELLS
    assert heat[0].customdata is None                                         # hover names the machine by its row
    assert_within_budget([network_page.charts.placement_figure(network, labels[-1], app, None)])


def test_network_heatmap_rows_are_bounded_beyond_512_machines():
    machines = [f"M{i + 1}" for i in range(1500)]
    labels, groups = network_figures.machine_rows(machines)
    assert len(labels) == network_figures.HEATMAP_MAX_ROWS and labels[0] == "M1–M3"
    assert sum(len(group) for group in groups) == 1500


def test_network_window_gives_full_detail_inside_it(network):
    record, result = network[1]
    series = network_figures.isolation_series(result.jobs, result.timeline)
    app, (times, _) = max(series.items(), key=lambda item: len(item[1][0]))
    window = (float(times[1]), float(times[min(20, len(times) - 1)]))
    figure = network_figures.isolation_over_time([(record["label"], result.jobs, result.timeline)], None, window)
    drawn = next(trace for trace in figure.data if trace.name == app)
    assert all(window[0] <= x for x in drawn.x) and list(figure.layout.xaxis.range) == list(window)


# ---- elasticity: 3,000 jobs on 3,000 nodes (synthetic frames of the engine's schema) -------------


def elastic_result(policy: str, seed: int, jobs: int = 3000) -> SimulationResult:
    """An elasticity result of ``jobs`` jobs whose cluster series have the most points the engine keeps."""
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.uniform(0, 1000, jobs))
    runtime = rng.uniform(10, 5000, jobs)
    frame = pd.DataFrame({
        "job_id": pd.Series([f"job{i}" for i in range(jobs)], dtype="string"), "submit_time": submit,
        "start_time": submit, "end_time": submit + runtime, "status": pd.Series(["finished"] * jobs, dtype="string"),
        "runtime_s": runtime, "tasks": rng.integers(1, 300, jobs),
        "elastic_tasks": rng.integers(0, 5, jobs) if policy == "yarn-me" else np.zeros(jobs, dtype=int),
        "map_phase_s": np.nan, "reduce_phase_s": runtime,
    })
    times = np.sort(rng.uniform(0, 6000, SERIES_POINTS))
    series = {"memory_utilisation": rng.random(SERIES_POINTS),
              "memory_used_mb": rng.random(SERIES_POINTS) * 3e7,
              "regular_tasks": rng.integers(0, 40_000, SERIES_POINTS).astype(float),
              "elastic_tasks": rng.integers(0, 400, SERIES_POINTS).astype(float)}
    timeline = pd.concat([timeline_frame(times, ["cluster"] * times.size, [metric] * times.size, values)
                          for metric, values in series.items()], ignore_index=True)
    summary = pd.DataFrame({"metric": ["jobs", "tasks", "mean_job_runtime_s", "makespan_s", "memory_utilisation",
                                       "elastic_tasks", "scheduler_cpu_s"],
                            "value": [jobs, frame["tasks"].sum(), runtime.mean(), 6000.0, 0.9,
                                      frame["elastic_tasks"].sum(), 20.0], "unit": ""})
    return SimulationResult({"engine": "elastic", "policy": policy}, f"{seed:064x}", frame, timeline, summary)


@pytest.fixture(scope="module")
def elastic():
    return [({"policy": policy, "label": label, "hash": f"{seed:064x}", "cached": False, "wall_seconds": 30.0},
             elastic_result(policy, seed))
            for seed, (policy, label) in enumerate((("yarn", "YARN"), ("yarn-me", "YARN-ME"), ("meganode", "Meganode")))]


def test_elastic_page_at_3000_jobs_stays_within_budget(elastic):
    outputs = elastic_page.charts.results_outputs(elastic, None)
    assert_within_budget(outputs)
    cdf = outputs[4]
    assert all(len(trace.x) <= ECDF_POINTS + 1 for trace in cdf.data)
    over_time = elastic_page.charts.over_time_outputs(elastic, None)
    assert_within_budget(over_time)
    assert all(len(trace.x) <= 4 * TIME_BINS + 2 for figure in over_time[:2] for trace in figure.data)
    windowed = elastic_page.charts.over_time_outputs(elastic, [1000.0, 1100.0])
    assert all(trace.x[0] == 1000.0 and trace.x[-2] <= 1100.0 for trace in windowed[0].data)


def test_elastic_job_table_is_paged_and_sorted_on_the_server(elastic):
    rows, columns, pages = elastic_page.charts.job_table(elastic, 2, [{"column_id": "tasks", "direction": "desc"}])
    assert_within_budget([rows, columns])
    assert pages == 300 and len(rows) == elastic_page.charts.JOB_PAGE_SIZE
    tasks = np.sort(elastic[0][1].jobs["tasks"].to_numpy())[::-1]
    assert [row["tasks"] for row in rows] == list(tasks[20:30])
    assert "YARN-ME elastic tasks" in [column["id"] for column in columns]
    last, _, _ = elastic_page.charts.job_table(elastic, 999, [])
    assert [row["job"] for row in last] == [f"job{i}" for i in range(2990, 3000)]


def test_elastic_job_choices_are_bounded_and_searchable(elastic):
    job_ids = list(elastic[0][1].jobs["job_id"])
    assert len(elastic_page.charts.job_options(job_ids, None, None)) == elastic_page.charts.JOB_OPTIONS
    found = elastic_page.charts.job_options(job_ids, "job299", "job7")
    assert found[0] == "job7" and set(found[1:]) == {"job299", *(f"job299{i}" for i in range(10))}
    assert elastic_page.charts.job_options(job_ids[:5], None, None) == job_ids[:5]
