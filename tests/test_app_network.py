"""The network page's pure helpers and figure builders (no browser)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest
from dash import no_update

from components.figures import network as figures
from components.pages import network as page
from components.services.runs import ResultCache
from components.services.uploads import UploadStore
from components.widgets.time_window import window_from_relayout
from sched_engine import ScenarioError
from sched_engine.network import apps_from_rows
from tests.support.callbacks import fired


def data_url(data: bytes) -> str:
    return "data:text/plain;base64," + base64.b64encode(data).decode()


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


@pytest.fixture
def results(tmp_path):
    return ResultCache(tmp_path / "results")


def fig1_setup():
    settings = page.setups.preset(page.setups.FIG1)
    return settings, {"machines": settings["machines"], "apps": settings["apps"], "upload": None}


def run_fig1(results, uploads, schemes=("drf", "libra")):
    settings, draft = fig1_setup()
    model = page.setups.build_model(settings, draft, uploads)
    records, message = page.run.run_schemes(results, model, list(schemes), "paper", 0, lambda done, total: None)
    return records, message, [(r, results.get(r["hash"])) for r in records]


def test_fig1_preset_reproduces_the_papers_isolation_guarantees(results, uploads):
    records, message, loaded = run_fig1(results, uploads)
    rows = {row["scheme"]: row for row in page.charts.summary_rows(loaded)}
    # Round-robin puts c11 and c21 together (placement (a)): 0.5. Libra runs with the preset's
    # candidate_fraction 1.0 (both machines) and finds the paper's (b): 0.625.
    assert rows["DRF"]["Worst-off isolation"] == 0.5
    assert rows["Libra"]["Worst-off isolation"] == 0.625
    assert message.startswith("2 scheme(s): 2 simulated")
    again, message, _ = run_fig1(results, uploads)
    assert [r["hash"] for r in again] == [r["hash"] for r in records] and "2 from the cache" in message


def test_fig1_tables_round_trip_to_the_presets_model():
    settings, draft = fig1_setup()
    assert settings["machine_mode"] == "table" and settings["app_mode"] == "table"
    assert [r["name"] for r in settings["apps"]] == ["A1", "A1", "A2", "A2"]
    apps, origin = apps_from_rows(list(enumerate(draft["apps"], start=1)), "applications row")
    assert [a["name"] for a in apps] == ["A1", "A2"]
    assert [c["downlink"] for c in apps[0]["containers"]] == [1.2, 0.2]
    assert origin == {(0, 0): 1, (0, 1): 2, (1, 0): 3, (1, 1): 4}


def test_fig6_preset_uses_generators_with_a_modest_count_and_keeps_typed_tables(uploads):
    settings = page.setups.preset(page.setups.FIG6)
    assert settings["machine_mode"] == "generate" and settings["machine_gen"]["count"] == 512
    assert settings["app_gen"]["count"] == page.setups.FIG6_PAGE_APPS == 30 and settings["app_gen"]["width"] == 128
    model = page.setups.build_model(settings, {"machines": [], "apps": [], "upload": None}, uploads)
    assert model["generate"]["pattern"] == "many-to-many" and model["machines"][0]["count"] == 512
    _, draft = fig1_setup()
    out = page.draft.edit_draft(page.ids.PRESET_FIG6, draft, {}, uploads)
    assert out["draft"]["machines"] == draft["machines"] and out["settings"]["app_mode"] == "generate"


def test_periodic_arrivals_are_listed_evenly_spaced(uploads):
    settings = {**page.setups.preset(page.setups.FIG6), "arrivals": "periodic",
                "app_gen": {**page.setups.DEFAULT_APP_GEN, "count": 3, "mean_interval": 2.0}}
    generate, apps = page.setups.generated_apps(settings)
    assert generate is None and [a["arrival"] for a in apps] == [0.0, 2.0, 4.0]
    assert [a["name"] for a in apps] == ["app-1", "app-2", "app-3"]


@pytest.mark.parametrize("edit, field, words", [
    (lambda s, d: d["machines"][1].update(downlink=-1), "machines row 2, downlink", "cannot be negative"),
    (lambda s, d: d["apps"][2].update(cpu=5), "applications row 3", "fits on no machine"),
    (lambda s, d: d["apps"][0].update(pattern="ring"), "applications row 1, pattern", "unknown pattern 'ring'"),
    (lambda s, d: d["apps"][3].update(volume="lots"), "applications row 4, volume", "must be a number"),
])
def test_bad_table_input_names_row_and_column(uploads, edit, field, words):
    settings, draft = fig1_setup()
    edit(settings, draft)
    with pytest.raises(ScenarioError) as caught:
        page.setups.build_model(settings, draft, uploads)
    assert caught.value.field == field and words in caught.value.message


def test_bad_generator_input_names_the_generator_field(uploads):
    settings = page.setups.preset(page.setups.FIG6)
    settings["machine_gen"] = {**settings["machine_gen"], "uplink": -1}
    with pytest.raises(ScenarioError, match="machine generator, uplink: bandwidth cannot be negative"):
        page.setups.build_model(settings, {"machines": [], "apps": [], "upload": None}, uploads)
    settings = {**page.setups.preset(page.setups.FIG6), "pattern": "ring"}
    with pytest.raises(ScenarioError, match="application generator, pattern: unknown pattern"):
        page.setups.build_model(settings, {"machines": [], "apps": [], "upload": None}, uploads)


CSV_GOOD = b"name,arrival,pattern,volume,weight,count,cpu,ram,downlink,uplink\n" \
           b"X,0,all-to-all,0.5,1,2,1,1,0.5,0.5\nY,1,one-to-one,0.5,1,4,1,1,0.5,0.5\n"


def test_an_uploaded_csv_is_stored_and_used(uploads, results):
    settings, draft = fig1_setup()
    out = page.draft.edit_draft(page.ids.APPS_UPLOAD, draft, {"contents": data_url(CSV_GOOD), "filename": "apps.csv"}, uploads)
    assert out["draft"]["upload"]["label"] == "apps.csv" and out["draft"]["upload"]["name"].endswith(".apps")
    assert "2 applications (6 containers)" in str(out["apps_msg"].children)
    model = page.setups.build_model({**settings, "app_mode": "upload"}, out["draft"], uploads)
    assert [a["name"] for a in model["applications"]] == ["X", "Y"]


@pytest.mark.parametrize("data, where", [
    (CSV_GOOD.replace(b"Y,1,one-to-one", b"Y,1,ring"), "apps.csv, line 3, pattern: unknown pattern 'ring'"),
    (CSV_GOOD.replace(b"Y,1,", b"Y,soon,"), "apps.csv, line 3, arrival: must be a number"),
    (b"name,size\nX,3\n", "apps.csv, line 1, header"),
    (b'[{"name": "X",\n "containers": }]', "apps.csv, line 2: not valid JSON"),
])
def test_a_bad_upload_names_file_line_and_field_and_keeps_the_draft(uploads, data, where):
    _, draft = fig1_setup()
    out = page.draft.edit_draft(page.ids.APPS_UPLOAD, draft, {"contents": data_url(data), "filename": "apps.csv"}, uploads)
    assert "draft" not in out
    assert where in str(out["apps_msg"].children) and "previous applications stay" in str(out["apps_msg"].children)


def test_a_json_list_is_checked_against_the_machines_at_run_time(uploads):
    settings, draft = fig1_setup()
    apps = [{"name": "big", "pattern": "all-to-all", "containers": [{"count": 2, "cpu": 64, "ram": 1}]}]
    out = page.draft.edit_draft(page.ids.APPS_UPLOAD, draft, {"contents": data_url(json.dumps(apps).encode()),
                                                   "filename": "apps.json"}, uploads)
    with pytest.raises(ScenarioError) as caught:
        page.setups.build_model({**settings, "app_mode": "upload"}, out["draft"], uploads)
    assert str(caught.value).startswith("apps.json, applications[0].containers[0]: a container needing 64 CPU")


def test_no_scheme_is_an_error(results, uploads):
    settings, draft = fig1_setup()
    with pytest.raises(ScenarioError, match="choose at least one"):
        page.run.run_schemes(results, page.setups.build_model(settings, draft, uploads), [], "paper", 0, lambda d, t: None)


def test_placement_override_changes_the_label_and_the_run(results, uploads):
    settings, draft = fig1_setup()
    model = page.setups.build_model(settings, draft, uploads)
    records, _ = page.run.run_schemes(results, model, ["drf"], "libra", 0, lambda d, t: None)
    assert records[0]["label"] == "DRF · libra placement"
    # Libra placement with the preset's two candidate machines: placement (b), 0.625 (round-robin's (a): 0.5).
    assert results.get(records[0]["hash"]).summary_value("min_isolation") == pytest.approx(0.625)


def test_an_edited_preset_runs_with_the_registry_defaults(results, uploads):
    settings, draft = fig1_setup()
    draft = {**draft, "apps": [{**row, "downlink": 1.0} if i == 0 else row for i, row in enumerate(draft["apps"])]}
    model = page.setups.build_model(settings, draft, uploads)
    assert page.setups.preset_params(model) == {}
    assert page.setups.preset_params(page.setups.build_model(*fig1_setup(), uploads)) == {"candidate_fraction": 1.0}


@pytest.mark.parametrize("relayout, expected", [
    ({"xaxis.range[0]": 1, "xaxis.range[1]": 2.5}, [1.0, 2.5]),
    ({"xaxis3.range[0]": 0.5, "xaxis3.range[1]": 1}, [0.5, 1.0]),
    ({"xaxis2.autorange": True}, None),
    ({"autosize": True}, no_update),
    ({"dragmode": "pan"}, no_update),
])
def test_window_from_relayout_reads_any_time_axis(relayout, expected):
    assert window_from_relayout(relayout, [0.0, 1.0], decimals=4) == expected


def test_clicked_app_and_busiest_instant():
    assert page.charts.clicked_app({"points": [{"x": 1, "customdata": "A2"}]}) == "A2"
    assert page.charts.clicked_app({"points": [{"x": 1, "z": 0.3}]}) is no_update
    timeline = pd.DataFrame({"time": [0.0, 1.0, 2.0, 3.0], "entity": ["cluster"] * 4,
                             "metric": ["running_apps"] * 4, "value": [1.0, 3.0, 3.0, 0.0]})
    assert page.charts.busiest_instant(timeline) == 1.0


# ---- figure builders -----------------------------------------------------------------------------

JOBS = pd.DataFrame({
    "job_id": ["A1", "A2", "A3"], "start_time": [0.0, 1.0, np.nan], "end_time": [4.0, np.nan, np.nan],
    "status": ["finished", "running", "waiting"], "duration": [4.0, np.nan, np.nan],
    "mean_isolation": [0.6, 0.8, np.nan], "placement": ["M1:1;M2:1", "M2:2", ""],
})
TIMELINE = pd.DataFrame({
    "time": [0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 5.0],
    "entity": ["A1", "M1/down", "M2/up", "A2", "M1/down", "A1", "M2/up"],
    "metric": ["isolation", "utilisation", "utilisation", "isolation", "utilisation", "isolation", "utilisation"],
    "value": [0.5, 1.0, 0.25, 0.8, 0.5, 0.7, 0.0],
})


def test_isolation_steps_hold_until_the_application_ends():
    times, values = figures.isolation_steps(JOBS, TIMELINE, "A1")
    assert list(times) == [0.0, 2.0, 4.0] and list(values) == [0.5, 0.7, 0.7]
    times, _ = figures.isolation_steps(JOBS, TIMELINE, "A2")          # still running: up to the last event
    assert list(times) == [1.0, 5.0]


def test_isolation_over_time_has_a_panel_per_scheme_and_highlights_the_selection():
    figure = figures.isolation_over_time([("DRF", JOBS, TIMELINE), ("Libra", JOBS, TIMELINE)], "A2", [0.0, 2.0])
    assert len(figure.data) == 4                                         # two placed apps x two schemes
    widths = {(t.name, t.yaxis): t.line.width for t in figure.data}
    assert widths[("A2", "y")] > widths[("A1", "y")] and figure.data[0].opacity < 1
    assert list(figure.layout.xaxis.range) == [0.0, 2.0]


def test_isolation_cdf_sorts_and_marks_the_selection():
    figure = figures.isolation_cdf([("DRF", JOBS)], "A2")
    assert list(figure.data[0].x) == [0.6, 0.8] and list(figure.data[0].y) == [0.5, 1.0]
    assert list(figure.data[1].customdata) == ["A2"] and figure.data[1].marker.size == 14


def test_durations_join_the_selected_application_across_schemes():
    figure = figures.durations([("DRF", JOBS), ("Libra", JOBS.assign(duration=[2.0, np.nan, np.nan]))], "A1")
    assert [list(t.y) for t in figure.data[:2]] == [[4.0], [2.0]]
    assert list(figure.data[2].x) == ["DRF", "Libra"] and list(figure.data[2].y) == [4.0, 2.0]


def test_link_matrix_holds_the_last_value():
    matrix = figures.link_matrix(TIMELINE, ["M1/down", "M2/up", "M3/up"], np.array([0.0, 0.5, 1.0, 5.0]))
    assert matrix.tolist() == [[1.0, 1.0, 0.5, 0.5], [0.25, 0.25, 0.25, 0.0], [0.0, 0.0, 0.0, 0.0]]


def test_heatmap_edges_follow_changes_or_a_grid():
    assert figures.heatmap_edges(TIMELINE).tolist() == [0.0, 1.0, 2.0, 5.0]
    assert figures.heatmap_edges(TIMELINE, (0.5, 1.5)).tolist() == [0.5, 1.0, 1.5]
    many = pd.DataFrame({"time": np.arange(1000.0), "entity": "x", "metric": "utilisation", "value": 0.0})
    assert len(figures.heatmap_edges(many)) == figures.HEATMAP_MAX_COLUMNS + 1


def test_utilisation_heatmap_outlines_the_selected_applications_machines():
    figure = figures.utilisation_heatmap(TIMELINE, JOBS, ["M1", "M2"], "DRF", "A1")
    heat = [t for t in figure.data if t.type == "heatmap"]
    assert len(heat) == 2 and list(heat[1].z[0]) == [1.0, 0.5, 0.5]       # downlinks, M1
    outline = [t for t in figure.data if t.type == "scatter"]
    assert list(outline[0].y) == ["M1", "M1", None, "M2", "M2", None] and list(outline[0].x)[:2] == [0.0, 4.0]


def test_placement_at_counts_containers_of_running_applications():
    assert figures.parse_placement("M1:2;M10:1") == {"M1": 2, "M10": 1}
    figure = figures.placement_at(JOBS, ["M1", "M2", "M3"], 2.0, "DRF", "A2")
    assert [t.name for t in figure.data] == ["A1", "A2"]
    assert list(figure.data[0].x) == ["M1", "M2"] and (list(figure.data[1].x), list(figure.data[1].y)) == (["M2"], [2])
    assert figure.data[1].opacity == 1.0 and figure.data[0].opacity < 1
    assert [t.name for t in figures.placement_at(JOBS, ["M1", "M2"], 4.5).data] == ["A2"]   # A1 ended at 4


def test_empty_inputs_give_placeholder_figures():
    assert figures.isolation_over_time([]).layout.annotations[0].text.startswith("Run at least one")
    assert len(figures.placement_at(JOBS, ["M1"], -1.0).data) == 0


def test_an_error_on_an_odd_field_of_an_uploaded_list_still_names_the_file():
    error = page.setups.ui_error(ScenarioError("applications[0].\n0", "unknown field"), None, {(0, 0): 2}, "apps.json")
    assert error.source == "apps.json" and error.field == "applications[0].\n0"


def test_the_draft_callback_names_its_outputs_and_sets_only_what_an_action_changes():
    draft = page.setups.initial_draft()
    names = [*page.callbacks.PRESET_INPUTS, *page.callbacks.TABLE_INPUTS, *page.callbacks.UPLOAD_INPUTS,
             *page.callbacks.EDIT_STATES]
    values = {**dict.fromkeys(names), "machines": draft["machines"], "apps": draft["apps"], "model": draft}
    with fired(page.ids.ADD_MACHINE):
        out = page.callbacks.edit(None, **{**values, "add_machine": 1})
    assert set(out) == set(page.callbacks.EDIT_OUTPUTS)
    assert len(out["machines"]) == len(draft["machines"]) + 1 and out["draft"]["machines"] == out["machines"]
    assert out["apps"] is no_update and out["seed"] is no_update and out["machine_gen"] == [no_update] * 5
    with fired(page.ids.PRESET_FIG6):
        out = page.callbacks.edit(None, **{**values, "fig6": 1})
    settings = page.setups.preset(page.setups.FIG6)
    assert [out[k] for k in page.callbacks.PRESET_CONTROLS] == [settings[k] for k in page.callbacks.PRESET_CONTROLS]
    with fired(page.ids.APPS_CHOICE, "value", None):
        assert out["draft"] is not no_update
        assert page.callbacks.edit(None, **values)["draft"] is no_update
