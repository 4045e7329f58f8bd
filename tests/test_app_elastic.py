"""The memory-elasticity page's pure helpers and figure builders (no browser)."""

from __future__ import annotations

import base64

import pytest
from dash import no_update

from components.figures import elastic as figures
from components.pages import elastic as page
from components.services.runs import ResultCache, loaded_runs
from components.services.uploads import UploadStore
from components.widgets.time_window import window_from_relayout
from sched_engine import ScenarioError, run_scenario
from sched_engine.elastic.presets import two_job_model

CSV = b"job_id,arrival_s,tasks,memory_mb,duration_s\nj1,0,4,2000,50\nj2,10,2,3000,80\n"


def data_url(data: bytes) -> str:
    return "data:text/csv;base64," + base64.b64encode(data).decode()


def form(**changes) -> dict:
    """The form as the page would send it, starting from the paper preset."""
    c = page.form.preset_controls(page.ids.PRESET_PAPER)
    values = {"nodes": c["nodes"], "cores": c["cores"], "node_memory_gb": c["node_memory_gb"], "source": c["source"],
              "jobs": c["jobs"], "distribution": c["distribution"],
              "ranges": {name: list(c[name]) for name, *_ in page.form.RANGES},
              "penalty": {"kind": c["penalty_kind"], "factor": c["factor"], "shape": "spill", "fraction": 0.5,
                          "ratio": 1.5}}
    values.update(changes)
    return values


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


@pytest.fixture
def two_job_run(tmp_path, uploads):
    """YARN, YARN-ME and Meganode on the two-job example, through the page's own model and run path."""
    loaded = page.form.preset_controls(page.ids.PRESET_TWO_JOB)["loaded"]
    model = page.form.build_model(form(nodes=1, source="loaded", penalty={"kind": "step", "factor": 1.5, "shape": "spill",
                                                                      "fraction": 0.5, "ratio": 1.5}),
                             loaded, uploads)
    results = ResultCache(tmp_path / "results")
    progress = []
    records, message = page.run.run_all(results, page.run.scenarios(model, ["yarn", "yarn-me", "meganode"], 1),
                                    lambda done, total: progress.append((done, total)))
    return results, records, message, progress


def test_presets_fill_the_form_from_the_engine_models():
    paper = page.form.preset_controls(page.ids.PRESET_PAPER)
    assert (paper["nodes"], paper["cores"], paper["node_memory_gb"]) == (100, 16, 10.0)
    assert paper["source"] == "generated" and paper["tasks_per_job"] == [1, 300] and paper["memory_gb"] == [1.0, 6.0]
    assert (paper["penalty_kind"], paper["factor"]) == ("spill", 3.0)
    two = page.form.preset_controls(page.ids.PRESET_TWO_JOB)
    assert two["source"] == "loaded" and two["loaded"]["kind"] == "jobs"
    assert two["loaded"]["jobs"] == two_job_model()["trace"]["jobs"]
    assert two["policies"] == ["yarn", "yarn-me", "meganode"]


def test_the_form_builds_the_paper_model_and_the_facts_match_the_engine_draw():
    model = page.form.build_model(form(), None, None)
    assert model["nodes"] == [{"count": 100, "cores": 16, "memory_mb": 10_000}]
    assert model["trace"]["memory_gb"] == [1.0, 6.0]
    facts = dict(page.trace.trace_facts(model, 1))
    assert facts["Jobs"] == "100"
    result = run_scenario({"engine": "elastic", "policy": "meganode", "model": model, "seed": 1})
    assert facts["Tasks"].startswith(f"{int(result.summary_value('tasks')):,} ")
    assert dict(page.trace.trace_facts(model, 2))["Tasks"] != facts["Tasks"]


@pytest.mark.parametrize("changes, field", [
    ({"cores": 0}, "Cores per node"),
    ({"nodes": 2.5}, "Nodes"),
    ({"node_memory_gb": None}, "Memory per node (GB)"),
    ({"jobs": 0}, "Jobs"),
    ({"ranges": {"tasks_per_job": [5, 2], "memory_gb": [1, 2], "duration_s": [1, 2]}}, "Tasks per job"),
    ({"penalty": {"kind": "step", "factor": 0.5, "shape": "spill", "fraction": 0.5, "ratio": 1.5}}, "Penalty factor"),
    ({"penalty": {"kind": "fitted", "factor": 1.5, "shape": "spill", "fraction": 1.2, "ratio": 1.5}},
     "Profiling run: memory fraction"),
])
def test_bad_form_values_name_the_form_field(changes, field):
    with pytest.raises(ScenarioError) as caught:
        page.form.build_model(form(**changes), None, None)
    assert caught.value.field == field


def test_a_generated_task_larger_than_any_node_is_refused():
    ranges = {"tasks_per_job": [1, 10], "memory_gb": [1.0, 12.0], "duration_s": [1, 100]}
    with pytest.raises(ScenarioError, match="12 GB per task exceeds the largest node"):
        page.form.build_model(form(ranges=ranges), None, None)


def test_an_upload_is_parsed_then_checked_against_the_cluster(uploads):
    ref, message = page.trace.apply_upload(data_url(CSV), "mine.csv", uploads)
    assert ref["kind"] == "upload" and ref["label"] == "mine.csv" and "2 jobs, 6 tasks" in message
    model = page.form.build_model(form(source="loaded"), ref, uploads)
    assert model["trace"]["kind"] == "file" and model["trace"]["label"] == "mine.csv"
    assert dict(page.trace.trace_facts(model, 1))["Task memory"] == "2,000 – 3,000 MB"
    with pytest.raises(ScenarioError, match="needs 3000 MB per task, more than any node has") as caught:
        page.form.build_model(form(source="loaded", node_memory_gb=2.5), ref, uploads)
    assert caught.value.source == "mine.csv"


def test_a_malformed_upload_names_file_line_and_field(uploads):
    bad = CSV + b"j3,20,1,lots,10\n"
    with pytest.raises(ScenarioError) as caught:
        page.trace.apply_upload(data_url(bad), "bad.csv", uploads)
    assert (caught.value.source, caught.value.line, caught.value.field) == ("bad.csv", 4, "memory_mb")


def test_no_loaded_trace_and_no_scheduler_are_refused():
    with pytest.raises(ScenarioError, match="no trace loaded"):
        page.form.build_model(form(source="loaded"), None, None)
    with pytest.raises(ScenarioError, match="at least one scheduler"):
        page.run.scenarios(page.form.build_model(form(), None, None), [], 1)


def test_two_job_example_through_the_page(two_job_run):
    results, records, message, progress = two_job_run
    assert [r["label"] for r in records] == ["YARN", "YARN-ME", "Meganode"]
    assert message.startswith("3 run(s): 3 simulated")
    assert progress[-1] == (300, 300)
    loaded = loaded_runs(results, records)
    rows = {row["job"]: row for row in page.charts.job_rows(loaded)}
    assert (rows["a"]["YARN runtime (s)"], rows["b"]["YARN runtime (s)"]) == (100.0, 199.0)
    assert rows["b"]["YARN-ME runtime (s)"] == 150.0 and rows["b"]["YARN-ME elastic tasks"] == 1
    summary = {row["scheduler"]: row for row in page.charts.summary_rows(loaded)}
    assert summary["YARN"]["avg runtime / YARN"] == 1.0
    assert summary["YARN-ME"]["avg runtime / YARN"] == round(125.0 / 149.5, 3)
    assert summary["YARN-ME"]["Under-sized tasks"] == 1 and summary["YARN"]["Under-sized tasks"] == 0
    assert "0.836" in page.charts.ratio_text(loaded)
    assert page.charts.default_job(loaded, None) == "b" and page.charts.default_job(loaded, "a") == "a"
    jobs = page.charts.export_frame(loaded, "jobs")
    assert list(jobs.columns[:2]) == ["scheduler", "job_id"] and len(jobs) == 6
    model = results.get(records[0]["hash"]).scenario["model"]
    again, message = page.run.run_all(results, page.run.scenarios(model, ["yarn"], 1), lambda *_: None)
    assert again[0]["cached"] and again[0]["hash"] == records[0]["hash"] and "1 from the cache" in message


def test_window_from_relayout_reads_any_x_axis():
    assert window_from_relayout({"xaxis2.range[0]": 10.04, "xaxis2.range[1]": 50}, None) == [10.0, 50.0]
    assert window_from_relayout({"xaxis.range": [5, 7]}, None) == [5.0, 7.0]
    assert window_from_relayout({"xaxis3.autorange": True}, [1, 2]) is None
    assert window_from_relayout({"autosize": True}, [1, 2]) is no_update
    assert window_from_relayout({"xaxis3.autorange": True}, None) is no_update
    assert window_from_relayout({"xaxis.range[0]": 5, "xaxis.range[1]": 7}, [5.0, 7.0]) is no_update
    assert window_from_relayout({"yaxis.range[0]": 5, "yaxis.range[1]": 7}, None) is no_update
    assert window_from_relayout(None, None) is no_update


def test_penalty_profiles_step_and_sawtooth():
    fractions, runtimes = figures.profile_points({"kind": "step", "factor": 1.5})
    assert fractions[0] == pytest.approx(0.1) and fractions[-1] == 1.0
    assert runtimes[-1] == 100.0 and set(runtimes[:-1]) == {150.0}
    spill = {"kind": "spill", "factor": 3.0}
    fractions, runtimes = figures.profile_points(spill)
    at = dict(zip(fractions.round(7), runtimes))
    # input/buffer just above 2 (fraction just below 1/2) is a local maximum; exactly 2 is a minimum
    assert at[round(0.5 - 1e-6, 7)] > at[0.5] and at[round(0.5 - 1e-6, 7)] > at[0.45]
    assert at[0.5] == pytest.approx(200.0)
    fitted = figures.penalty_profile({"kind": "fitted", "shape": "step", "profile_fraction": 0.4,
                                      "profile_ratio": 2.0})
    assert [t.name for t in fitted.data] == ["runtime", "profiling runs"]
    assert list(fitted.data[1].y) == [200.0, 100.0]


def test_time_figures_use_the_window_and_one_colour_per_scheduler(two_job_run):
    results, records, _, _ = two_job_run
    loaded = loaded_runs(results, records)
    timelines = [(rec["label"], res.timeline) for rec, res in loaded]
    memory = figures.memory_utilisation(timelines, [0, 120])
    assert [t.name for t in memory.data] == ["YARN", "YARN-ME", "Meganode"]
    assert list(memory.layout.xaxis.range) == [0, 120]
    yarn_me = dict(zip(memory.data[1].x, memory.data[1].y))
    assert yarn_me[1.0] == pytest.approx(0.66)                  # 6000 + 600 MB of 10 GB
    tasks = figures.running_tasks(timelines)
    assert [t.name for t in tasks.data] == ["YARN regular", "YARN-ME regular", "YARN-ME elastic", "Meganode regular"]
    assert tasks.data[2].line.color == figures.COLORS["YARN-ME"] and tasks.data[2].line.dash == "dot"
    assert figures.memory_utilisation([]).layout.annotations


def test_runtime_comparison_figures(two_job_run):
    results, records, _, _ = two_job_run
    jobs = {rec["label"]: res.jobs for rec, res in loaded_runs(results, records)}
    pairs = figures.runtime_pairs(jobs["YARN"], jobs["YARN-ME"]).set_index("job_id")
    assert pairs.loc["b", "x"] == 199.0 and pairs.loc["b", "y"] == 150.0
    scatter = figures.runtime_scatter("YARN", jobs["YARN"], "YARN-ME", jobs["YARN-ME"])
    assert list(scatter.data[1].customdata) == ["a", "b"]
    assert "1 of 2 jobs faster" in scatter.layout.title.text
    assert list(scatter.data[0].x) == list(scatter.data[0].y)       # the y = x line
    cdf = figures.runtime_cdf(list(jobs.items()))
    assert list(cdf.data[0].x) == [100.0, 199.0] and list(cdf.data[0].y) == [0.5, 1.0]


def test_per_node_timeline_of_a_job(two_job_run):
    results, records, _, _ = two_job_run
    timelines = [(rec["label"], res.timeline) for rec, res in loaded_runs(results, records)]
    held = figures.job_intervals(dict(timelines)["YARN-ME"], "b")
    assert held.to_dict("records") == [{"node": "node-0", "start": 1.0, "end": 151.0, "memory_mb": 600.0}]
    assert figures.job_intervals(dict(timelines)["YARN"], "missing").empty
    figure = figures.job_node_timeline(timelines, "b", [0, 160])
    assert [a.text for a in figure.layout.annotations] == ["YARN", "YARN-ME", "Meganode"]
    assert list(figure.data[1].base) == [1.0] and list(figure.data[1].x) == [150.0]
    assert list(figure.layout.xaxis.range) == [0, 160]
    assert "Pick a job" in figures.job_node_timeline(timelines, None).layout.annotations[0].text
