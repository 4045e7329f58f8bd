"""The batch page's pure helpers and figure builders (no browser)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest
from dash import no_update

from components.figures import batch as figures
from components.figures import gantt
from components.pages import batch as page
from components.services.runs import ResultCache
from components.services.uploads import UploadError, UploadStore
from components.widgets.time_window import window_from_relayout
from sched_engine import ScenarioError, run_scenario
from tests.support.callbacks import fired

DATA = Path(__file__).parent / "data" / "batch"
GOOD_SWF = (DATA / "cons_vs_easy.swf").read_bytes()
BAD_SWF = GOOD_SWF + b"5 4 -1 ten 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n"


def data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def upload(draft, uploads, data, name="mine.swf", kind="trace"):
    trigger = {"trace": page.ids.TRACE_UPLOAD, "machines": page.ids.MACHINES_UPLOAD, "failures": page.ids.FAILURE_UPLOAD}[kind]
    payload = {f"{p}_{k}": None for p in ("trace", "machines", "failure") for k in ("contents", "name")}
    prefix = {"trace": "trace", "machines": "machines", "failures": "failure"}[kind]
    payload.update({f"{prefix}_contents": data_url(data), f"{prefix}_name": name, "rows": draft["clusters"]})
    return page.draft.edit_draft(trigger, draft, payload, uploads)


def test_cluster_rows_round_trip_uniform_and_listed_cpus():
    clusters = [{"name": "a", "machines": 2, "cpus_per_machine": [4, 4], "speed": 1.5, "properties": ["x", "y"]},
                {"name": "b", "machines": 3, "cpus_per_machine": [1, 2, 2], "speed": 1.0, "properties": []}]
    rows = page.clusters.cluster_rows(clusters)
    assert [r["cpus_per_machine"] for r in rows] == ["4", "1,2,2"]
    back = page.clusters.clusters_from_rows(rows)
    assert back[0]["cpus_per_machine"] == 4 and back[1]["cpus_per_machine"] == [1, 2, 2]
    assert back[0]["properties"] == ["x", "y"]


@pytest.mark.parametrize("cell, value, field", [
    ("machines", "many", "clusters row 1, machines"),
    ("cpus_per_machine", "4,x", "clusters row 1, cpus_per_machine"),
    ("speed", "fast", "clusters row 1, speed"),
])
def test_a_bad_cluster_cell_names_row_and_column(cell, value, field):
    row = {"name": "a", "machines": 2, "cpus_per_machine": "4", "speed": 1.0, "properties": "", cell: value}
    with pytest.raises(ScenarioError) as caught:
        page.clusters.clusters_from_rows([row])
    assert caught.value.field == field


def test_cluster_list_length_must_match_machines():
    with pytest.raises(ScenarioError, match="lists 2 machines"):
        page.clusters.clusters_from_rows([{"name": "a", "machines": 3, "cpus_per_machine": "4,4", "speed": 1}])


def test_a_malformed_upload_keeps_the_previous_trace_and_skipping_retries_it(uploads):
    draft = page.draft.initial_draft()
    out = upload(draft, uploads, BAD_SWF)
    message = str(out["trace_msg"].children)
    assert "mine.swf" in message and "line 11" in message and "run_time" in message
    assert "previous file stays" in message
    assert out["draft"]["trace"] == draft["trace"]          # still the sample
    assert out["draft"]["rejected"]["label"] == "mine.swf"
    retried = page.draft.edit_draft(page.ids.SKIP_MALFORMED, out["draft"], {"format": "auto", "skip": True}, uploads)
    assert retried["draft"]["trace"]["label"] == "mine.swf"
    assert retried["draft"]["trace"]["skip_malformed"] is True
    assert "4 jobs" in str(retried["trace_msg"].children)


def test_a_good_upload_replaces_the_trace_and_is_stored_by_content(uploads):
    out = upload(page.draft.initial_draft(), uploads, GOOD_SWF)
    trace = out["draft"]["trace"]
    assert trace["source"] == "upload" and trace["label"] == "mine.swf"
    assert (uploads.directory / trace["name"]).read_bytes() == GOOD_SWF
    assert page.sources.ref_path(trace, uploads).endswith(".trace")


def test_a_machines_upload_fills_the_cluster_table(uploads):
    out = upload(page.draft.initial_draft(), uploads, b"0 alpha 4 8 1 0\n1 beta 2 16 2 0\n", "two.machines", "machines")
    assert [r["name"] for r in out["clusters"]] == ["alpha", "beta"]
    bad = upload(out["draft"], uploads, b"0 alpha four 8 1 0\n", "bad.machines", "machines")
    assert "bad.machines" in str(bad["clusters_msg"].children) and "draft" not in bad


def test_references_never_become_arbitrary_paths(uploads):
    for name in ("../../etc/passwd", "/etc/passwd", "0" * 64 + ".exe"):
        with pytest.raises(ScenarioError):
            page.sources.ref_path({"source": "upload", "kind": "trace", "name": name, "label": name}, uploads)
    with pytest.raises(ScenarioError, match="unknown sample"):
        page.sources.ref_path({"source": "sample", "kind": "trace", "name": "../README.md", "label": "x"}, uploads)
    with pytest.raises(UploadError):
        uploads.save(b"x", "../trace")


SETTINGS = {"max_jobs": 300, "failure_kind": "trace", "align": "start", "failure_params": {}, "req_share": 0.5,
            "estimates": "perfect", "scenarios": list(page.run.SCENARIO_KINDS)}


def test_scenario_kinds_switch_failures_and_requirements(uploads):
    models = page.run.scenario_models(page.draft.initial_draft(), SETTINGS, uploads)
    assert list(models) == ["BASIC", "EXT-FAIL", "EXT-REQ", "EXT-ALL"]
    shape = {name: (m["failures"]["kind"], m["requirements"], m["synthetic_requirements"]) for name, m in models.items()}
    assert shape == {"BASIC": ("none", False, None), "EXT-FAIL": ("trace", False, None),
                     "EXT-REQ": ("none", True, {"share": 0.5}), "EXT-ALL": ("trace", True, {"share": 0.5})}


def test_failure_scenarios_need_a_failure_source(uploads):
    with pytest.raises(ScenarioError, match="EXT-FAIL needs failures"):
        page.run.scenario_models(page.draft.initial_draft(), {**SETTINGS, "failure_kind": "none"}, uploads)
    with pytest.raises(ScenarioError, match="at least one"):
        page.run.scenario_models(page.draft.initial_draft(), {**SETTINGS, "scenarios": []}, uploads)


def test_matrix_repeats_only_seeded_runs_and_reports_progress(tmp_path, uploads):
    models = page.run.scenario_models(page.draft.initial_draft(), {**SETTINGS, "scenarios": ["BASIC", "EXT-REQ"]}, uploads)
    seen = []
    records, message = page.run.run_matrix(ResultCache(tmp_path / "r"), models, ["easy", "ls"], 2,
                                       lambda done, total: seen.append((done, total)))
    # BASIC: EASY once, LS twice; EXT-REQ (synthetic requirements are seeded): both twice.
    assert [(r["scenario"], r["policy"], r["seed"]) for r in records] == [
        ("BASIC", "easy", 1), ("BASIC", "ls", 1), ("BASIC", "ls", 2),
        ("EXT-REQ", "easy", 1), ("EXT-REQ", "easy", 2), ("EXT-REQ", "ls", 1), ("EXT-REQ", "ls", 2)]
    assert seen[-1] == (700, 700) and "7 run(s): 7 simulated" in message
    again, message = page.run.run_matrix(ResultCache(tmp_path / "r"), models, ["easy", "ls"], 2, lambda d, t: None)
    assert all(r["cached"] for r in again) and "7 from the cache" in message


def test_an_input_error_names_the_scenario_kind(tmp_path, uploads):
    draft = {**page.draft.initial_draft(), "clusters": [{"name": "x", "machines": 1, "cpus_per_machine": "1",
                                                   "speed": 1, "properties": ""}]}
    models = page.run.scenario_models(draft, SETTINGS, uploads)
    cache = ResultCache(tmp_path / "r")
    with pytest.raises(ScenarioError, match=r"cluster_12.*\(scenario EXT-FAIL\)"):
        page.run.run_matrix(cache, models, ["easy"], 1, lambda d, t: None)


def test_window_follows_zoom_and_resets_on_autorange():
    def hours_window(relayout, current):   # the batch charts' time axes are in hours
        return window_from_relayout(relayout, current, unit_seconds=figures.HOUR)

    assert hours_window({"xaxis.range[0]": 1, "xaxis.range[1]": 2.5}, None) == [3600.0, 9000.0]
    assert hours_window({"xaxis.range": [0, 1]}, None) == [0.0, 3600.0]
    assert hours_window({"xaxis.autorange": True}, [0, 1]) is None
    # A chart drawn or resized keeps the window; a reset of the whole run changes nothing either.
    assert hours_window({"autosize": True}, [0, 1]) is no_update
    assert hours_window({"xaxis.autorange": True}, None) is no_update
    assert hours_window({"yaxis.range[0]": 1}, None) is no_update


def failure_run():
    return run_scenario({"engine": "batch", "policy": "easy", "model": {
        "trace": {"path": str(DATA / "failure.swf")},
        "failures": {"kind": "trace", "path": str(DATA / "failure.failures"), "align": "absolute"}}})


def test_gantt_draws_each_job_on_its_machines_and_shades_down_time():
    result = failure_run()
    figure = gantt.gantt(result.jobs, result.timeline)
    by_name = {trace.name: trace for trace in figure.data}
    assert list(by_name["killed"].y) == [0, 1]                 # job 1 held machines 0 and 1
    assert sorted(by_name["finished"].y) == [0, 1, 2, 2, 3]  # job 2 on 2,3; job 4 on 0,1,2
    down = by_name["machine down"]
    assert list(down.y) == [1] and list(down.base) == [5 / 3600] and list(down.x) == [10 / 3600]
    windowed = gantt.gantt(result.jobs, result.timeline, window=(21, 40))
    assert "machine down" not in {t.name for t in windowed.data}


def test_objective_table_means_and_sample_deviation():
    summary = lambda slowdown: pd.DataFrame({"metric": [m for m, _ in figures.OBJECTIVES],  # noqa: E731
                                             "value": [slowdown, 1.0, 2.0, 0.0], "unit": [""] * 4})
    table = figures.objective_table([("BASIC", "LS", summary(2.0)), ("BASIC", "LS", summary(4.0)),
                                     ("BASIC", "EASY", summary(5.0))])
    row = table[(table.policy == "LS") & (table.metric == "mean_slowdown")].iloc[0]
    assert (row["mean"], row["std"], row["count"]) == (3.0, pytest.approx(2 ** 0.5), 2)
    easy = table[(table.policy == "EASY") & (table.metric == "mean_slowdown")].iloc[0]
    assert easy["std"] == 0.0


def test_the_html_report_is_self_contained_and_holds_every_run(tmp_path, uploads):
    models = page.run.scenario_models(page.draft.initial_draft(), {**SETTINGS, "scenarios": ["BASIC", "EXT-FAIL"]}, uploads)
    cache = ResultCache(tmp_path / "r")
    records, _ = page.run.run_matrix(cache, models, ["fcfs", "easy"], 1, lambda d, t: None)
    text = page.charts.batch_report(cache, records, "EXT-FAIL", "EASY", None, "2026-01-01 00:00 UTC")
    assert text.startswith("<!DOCTYPE html>") and "2026-01-01 00:00 UTC" in text
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=", text)  # plotly.js inline: opens offline
    assert text.count("Plotly.newPlot") == 6                           # objectives + five detail charts
    for record in records:
        assert f"{record['scenario']} · {record['label']} · seed 1" in text
    killed = cache.get(records[-1]["hash"]).summary_value("killed")
    assert "<td>killed</td>" in text and f"<td>{killed:.6g}</td>" in text
    assert "metacentrum-2009.failures" in text                        # the scenarios are included


def test_report_escapes_what_users_typed():
    from components.services.report import html_report
    result = failure_run()
    text = html_report("<b>mine</b>", [("<script>alert(1)</script>", result)], [], "now")
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>mine</b>" not in text


def test_an_earlier_upload_can_be_picked_again_from_the_dropdown(uploads):
    upload(page.draft.initial_draft(), uploads, GOOD_SWF)
    choices = page.sources.trace_choices(uploads)
    assert [c["value"] for c in choices[:2]] == list(page.sources.SAMPLE_TRACES)
    [mine] = [c for c in choices if c["value"].startswith(page.sources.UPLOADED)]
    assert mine["label"].startswith("mine.swf (uploaded ")
    out = page.draft.edit_draft(page.ids.SAMPLE, page.draft.initial_draft(), {"sample": mine["value"]}, uploads)
    assert out["draft"]["trace"]["label"] == "mine.swf" and out["draft"]["trace"]["source"] == "upload"
    assert "4 jobs" in str(out["trace_msg"].children)


def _edit_values(draft, **given) -> dict:
    """The draft callback's inputs and states by name: nothing typed, ``given`` set."""
    names = [*page.callbacks.TRACE_INPUTS, *page.callbacks.CLUSTER_INPUTS, *page.callbacks.FAILURE_INPUTS,
             *page.callbacks.EDIT_STATES]
    return {**dict.fromkeys(names), "format": "auto", "skip": [], "rows": draft["clusters"], "model": draft, **given}


def test_the_draft_callback_names_its_outputs_and_sets_only_what_an_action_changes(uploads):
    draft = page.draft.initial_draft()
    with fired(page.ids.ADD_CLUSTER):
        out = page.callbacks.edit(uploads, **_edit_values(draft, add_cluster=1))
    assert set(out) == set(page.callbacks.EDIT_OUTPUTS)
    assert len(out["clusters"]) == len(draft["clusters"]) + 1 and out["draft"]["clusters"] == out["clusters"]
    assert "Added a cluster" in out["clusters_msg"] and out["trace_msg"] is no_update and out["seeds"] is no_update
    with fired(page.ids.PRESET_CERIT):
        out = page.callbacks.edit(uploads, **_edit_values(draft, cerit=1))
    assert out["draft"]["trace"]["name"] == "cerit-sc-2013-slice.swf"
    assert [out[k] for k in page.draft.PRESET_FIELDS] == [page.draft.PRESET_SETTINGS["cerit"][k]
                                                          for k in page.draft.PRESET_FIELDS]
    with fired(page.ids.FORMAT, "value", "auto"):   # the trace in use is read that way already
        assert set(page.callbacks.edit(uploads, **_edit_values(draft)).values()) == {no_update}


def test_an_upload_then_run_with_nothing_else_touched_runs_the_whole_trace_on_its_own_hardware(tmp_path, uploads):
    """The page opens on the paper's set-up (MetaCentrum failures, 2,000 jobs at 4.7x): an own trace drops it."""
    draft = page.draft.initial_draft()
    opening = {**page.draft.PRESET_SETTINGS["complete"]}
    with fired(page.ids.TRACE_UPLOAD, "contents", data_url(GOOD_SWF)):
        out = page.callbacks.edit(uploads, **_edit_values(draft, trace_contents=data_url(GOOD_SWF),
                                                          trace_name="mine.swf", settings_now=opening))
    # The failure trace names MetaCentrum's clusters, which the header's one 4-CPU machine lacks.
    assert out["failure_kind"] == "none" and out["scenarios"] == ["BASIC", "EXT-REQ"]
    assert out["max_jobs"] is None and out["load_factor"] == 1.0
    assert out["policies"] is no_update and out["seeds"] is no_update and out["req_share"] is no_update
    said = str(out["trace_msg"])
    assert "metacentrum-2009.failures does not fit" in said and "EXT-FAIL, EXT-ALL dropped" in said
    assert "all 4 of mine.swf (was the first 2,000)" in said and "was 4.7" in said
    settings = {**opening, **{k: out[k] for k in page.draft.PRESET_FIELDS if out[k] is not no_update}}
    planned = page.run.plan(uploads, out["draft"], settings["max_jobs"], settings["failure_kind"], "start", [], [],
                            settings["req_share"], "perfect", settings["load_factor"], settings["policies"],
                            settings["scenarios"], settings["seeds"])
    assert [(p.record["scenario"], p.record["policy"]) for p in planned] == [
        (kind, policy) for kind in ("BASIC", "EXT-REQ") for policy in ("fcfs", "easy", "cons", "ls")]
    cache = ResultCache(tmp_path / "runs")
    for item in planned:
        result = cache.run(item.scenario)[0]
        assert len(result.jobs) == 4 and set(result.jobs["status"]) == {"finished"}


def test_an_upload_keeps_a_failure_trace_that_fits_and_settings_already_its_own(uploads):
    draft = page.draft.initial_draft()
    mine = {"max_jobs": None, "failure_kind": "none", "req_share": 0, "load_factor": 1, "policies": ["easy"],
            "scenarios": ["BASIC"], "seeds": 1}
    with fired(page.ids.TRACE_UPLOAD, "contents", data_url(GOOD_SWF)):
        out = page.callbacks.edit(uploads, **_edit_values(draft, trace_contents=data_url(GOOD_SWF),
                                                          trace_name="mine.swf", settings_now=mine))
    assert all(out[k] is no_update for k in page.draft.PRESET_FIELDS)
    assert "Loaded mine.swf: 4 jobs." in str(out["trace_msg"])


def test_an_own_trace_larger_than_local_search_can_take_starts_without_it(uploads, monkeypatch):
    monkeypatch.setattr(page.draft, "LOCAL_SEARCH_JOBS", 3)
    draft = page.draft.initial_draft()
    mine = {"max_jobs": None, "failure_kind": "none", "req_share": 0, "load_factor": 1, "policies": ["easy", "ls"],
            "scenarios": ["BASIC"], "seeds": 1}
    with fired(page.ids.TRACE_UPLOAD, "contents", data_url(GOOD_SWF)):
        out = page.callbacks.edit(uploads, **_edit_values(draft, trace_contents=data_url(GOOD_SWF),
                                                          trace_name="mine.swf", settings_now=mine))
    assert out["policies"] == ["easy"] and "Local Search left out" in str(out["trace_msg"])


def test_an_upload_is_read_the_way_the_skip_box_shows_and_a_binary_file_gets_no_skip_hint(uploads):
    draft = page.draft.initial_draft()
    binary = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    out = page.draft.edit_draft(page.ids.TRACE_UPLOAD, draft, {**_upload_payload(draft, binary), "skip": False}, uploads)
    assert "not UTF-8 text" in out["trace_msg"].children and "Tick" not in out["trace_msg"].children
    # The box ticked (retrying the binary file failed, so the trace in use was still read strictly): the next
    # truncated upload is read skipping its bad line, as the box says.
    out = page.draft.edit_draft(page.ids.TRACE_UPLOAD, draft, {**_upload_payload(draft, BAD_SWF), "skip": True}, uploads)
    assert out["draft"]["trace"]["skip_malformed"] is True and "Loaded mine.swf: 4 jobs" in str(out["trace_msg"])
    out = page.draft.edit_draft(page.ids.TRACE_UPLOAD, draft, {**_upload_payload(draft, BAD_SWF), "skip": False}, uploads)
    assert "line 11" in out["trace_msg"].children and "Tick 'skip malformed lines'" in out["trace_msg"].children


def _upload_payload(draft, data, name="mine.swf") -> dict:
    payload = {f"{p}_{k}": None for p in ("trace", "machines", "failure") for k in ("contents", "name")}
    return {**payload, "trace_contents": data_url(data), "trace_name": name, "rows": draft["clusters"]}
