"""The Site study page's functions: organisation and hardware editing, the plan, the summary, charts, two sites."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from dash import no_update

from components.pages.site import callbacks, charts, hardware, ids, organisation, run
from components.services.saved_items import ORGANISATION, saved_choices
from components.services.uploads import UploadStore
from sched_engine import ScenarioError, run_scenario
from tests.support.callbacks import fired

SAMPLE = "hpc2n-excerpt.swf"
EDITOR = ids.EDITOR
THREE_GROUPS = {"name": "root", "children": [
    {"name": "physics", "weight": 2.0, "children": [{"name": "ann", "weight": 1.0, "user": "1"}]},
    {"name": "biology", "weight": 1.0, "children": [{"name": "bob", "weight": 1.0, "user": "22"},
                                                    {"name": "cid", "weight": 1.0, "user": "33"}]},
    {"name": "empty", "weight": 1.0, "children": []}]}


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def _data_url(data: bytes) -> str:
    return "data:application/json;base64," + base64.b64encode(data).decode()


def _edit(trigger, draft, selected=None, uploads=None, **payload):
    base = {"trace": SAMPLE, "max_jobs": 300, "weighting": "equal", "name": None, "weight": None, "group": None,
            "choice": None, "item_name": None, "contents": None, "filename": None}
    return organisation.edit(trigger, draft, selected, {**base, **payload}, uploads)


def test_the_organisation_is_derived_from_the_jobs_a_run_simulates(uploads):
    draft = _edit(None, None, uploads=uploads)["draft"]
    assert "first 300 jobs" in draft["origin"] and "group ids" in draft["origin"]
    rows = organisation.node_rows(draft["tree"])
    assert rows[0] == {"id": "group 1", "node": "group 1", "kind": "group", "in": "root",
                       "users": len(rows) - 1, "weight": 1.0, "share": "100.0%"}
    # By CPU-hours: each user weighs the CPU-hours its jobs asked; the group the sum.
    weighed = _edit(ids.WEIGHTING, draft, uploads=uploads, weighting="cpu_hours")["draft"]["tree"]
    group = weighed["children"][0]
    assert group["weight"] == pytest.approx(sum(user["weight"] for user in group["children"]), rel=1e-3)
    assert len({user["weight"] for user in group["children"]}) > 1


def test_queues_group_users_when_the_log_has_one_group_id_and_each_user_is_in_one_group(uploads):
    draft = organisation.derived(uploads, "cerit-sc-2013-slice.swf", 400, "equal")
    assert "grouped by queue ids" in draft["origin"] and "placed in their main one" in draft["origin"]
    assert len(draft["tree"]["children"]) > 1 and organisation.check(draft["tree"]) is draft["tree"]


def test_editing_weights_moving_users_adding_and_removing_groups(uploads):
    draft = {"tree": THREE_GROUPS, "origin": "test"}
    out = _edit(EDITOR.apply, draft, "bob", uploads, name="bob", weight="3", group="empty")
    tree = out["draft"]["tree"]
    assert out["selected"] == "bob" and [u["name"] for u in tree["children"][2]["children"]] == ["bob"]
    assert tree["children"][2]["children"][0]["weight"] == 3.0 and THREE_GROUPS["children"][2]["children"] == []
    added = _edit(EDITOR.add_department, out["draft"], None, uploads)
    assert added["selected"] == "new group 1" and added["draft"]["tree"]["children"][-1]["children"] == []
    removed = _edit(EDITOR.remove, added["draft"], "physics", uploads)
    assert [g["name"] for g in removed["draft"]["tree"]["children"]] == ["biology", "empty", "new group 1"]
    assert "other users" in removed["tree_msg"]
    # A run leaves empty groups out; the engine accepts the rest.
    assert organisation.model_organisation(added["draft"])["tree"]["children"][-1]["name"] == "empty"
    assert [g["name"] for g in organisation.model_organisation(draft)["tree"]["children"]] == ["physics", "biology"]


@pytest.mark.parametrize("form, expected", [
    ({"name": "bob", "weight": "-1"}, "weight: must be a positive number, got '-1'"),
    ({"name": "bob", "weight": "many"}, "weight: must be a positive number"),
    ({"name": "ann", "weight": "1"}, "'ann' names two nodes"),
    ({"name": " ", "weight": "1"}, "name: must be a non-empty name"),
])
def test_a_bad_edit_keeps_the_organisation_and_names_the_field(uploads, form, expected):
    out = _edit(EDITOR.apply, {"tree": THREE_GROUPS, "origin": "test"}, "bob", uploads, **form)
    assert set(out) == {"tree_msg"} and out["tree_msg"].className == "error"
    assert expected in out["tree_msg"].children and "unchanged" in out["tree_msg"].children


def test_the_organisation_saved_opened_downloaded_and_uploaded(uploads):
    draft = {"tree": THREE_GROUPS, "origin": "test"}
    saved = _edit(EDITOR.save, draft, None, uploads, item_name="lab tree")
    assert "Saved the organisation as 'lab tree'" in saved["item_msg"].children
    choice = saved_choices(uploads, ORGANISATION)[0]["value"]
    opened = _edit(EDITOR.choice, None, None, uploads, choice=choice)
    assert opened["draft"]["tree"] == THREE_GROUPS
    download = _edit(EDITOR.export, draft, None, uploads)["download"]
    assert json.loads(download["content"]) == THREE_GROUPS and download["filename"] == "organisation.json"
    scenario = {"engine": "site", "policy": "hdrf", "model": {"organisation": {"tree": THREE_GROUPS}}}
    loaded = _edit(EDITOR.upload, None, None, uploads, contents=_data_url(json.dumps(scenario).encode()),
                   filename="site.json")
    assert loaded["draft"]["tree"] == THREE_GROUPS and loaded["selected"] is None


@pytest.mark.parametrize("document, expected", [
    (b'{"name": "root", "children": [', "org.json, line 1: invalid JSON"),
    (b'{"name": "root", "children": [{"name": "a", "weight": 0, "user": "1"}]}', "org.json, organisation.children[0].weight"),
    (b'{"tree": {"name": "root", "children": [{"name": "a", "user": "1"}, {"name": "b", "user": "1"}]}}',
     "org.json, tree.children[1].user: user 1 is already the leaf 'a'"),
    (b'{"name": "root", "children": [{"name": "g", "children": [], "user": "2"}]}', "organisation.children[0]"),
    (b'{"engine": "batch", "model": {}}', "'batch' scenario has no site organisation"),
])
def test_a_bad_organisation_upload_names_the_file_and_field_and_keeps_the_tree(uploads, document, expected):
    out = _edit(EDITOR.upload, {"tree": THREE_GROUPS, "origin": "test"}, None, uploads,
                contents=_data_url(document), filename="org.json")
    assert out["draft"] is no_update if "draft" in out else True
    assert out["item_msg"].className == "error" and expected in out["item_msg"].children
    assert "unchanged" in out["item_msg"].children and uploads.listing() == []


def test_the_organisation_callback_names_every_output_and_selects_from_tree_or_table(uploads):
    with fired(EDITOR.apply):
        out = callbacks.organisation_edit(uploads, {"tree": THREE_GROUPS, "origin": "t"}, "bob", **{
            **dict.fromkeys(callbacks.ORG_INPUTS), "name": "bob", "weight": "2", "group": None,
            "item_name": None, "filename": None, "trace": SAMPLE})
    assert set(out) == set(callbacks.ORG_OUTPUTS) and out["download"] is no_update
    with fired(ids.ORGANISATION):
        assert callbacks.select_node(None, {"row": 3, "column": 0, "row_id": "bob"}) == "bob"
    title, name, weight, options, group, style = callbacks.node_form("bob", {"tree": THREE_GROUPS})
    assert title == "User 22: bob" and group == "biology" and style == {"display": "block"}
    assert [o["value"] for o in options] == ["physics", "biology", "empty"]
    elements, rows, origin = callbacks.organisation_views({"tree": THREE_GROUPS, "origin": "test"})
    assert {e["data"]["id"] for e in elements if e.get("classes") == "user"} == {"ann", "bob", "cid"}
    assert origin == "3 groups, 3 users; test."


def test_hardware_from_the_header_with_memory_stated_and_a_bad_table_refused(uploads):
    draft = hardware.header_draft(uploads, SAMPLE)
    assert draft["rows"] == [{"name": "cluster", "machines": 240, "cpus_per_machine": "1",
                              "memory_per_machine_mb": None}]
    model = hardware.hardware_model(draft["rows"], 1024)
    assert model["memory_per_machine_mb"] == {} and model["default_memory_per_cpu_mb"] == 1024.0
    jobs, _ = organisation.simulated_jobs(uploads, SAMPLE, 300)
    said = " ".join(str(line.children.children) for line in hardware.statement(model, draft["origin"], jobs))
    assert "1,024 MB per CPU assumed" in said
    given = hardware.hardware_model([{**draft["rows"][0], "memory_per_machine_mb": "4096"}], 1024)
    said = " ".join(str(line.children.children) for line in hardware.statement(given, "the table", jobs))
    assert given["memory_per_machine_mb"] == {"cluster": 4096.0} and "assumed" not in said
    with pytest.raises(ScenarioError, match="the table has no cluster"):
        hardware.hardware_model([dict.fromkeys(hardware.COLUMNS)], 1024)
    with pytest.raises(ScenarioError, match="hardware row 1, machines: must be"):
        hardware.hardware_model([{**draft["rows"][0], "machines": 0}], 1024)
    with pytest.raises(ScenarioError, match="hardware row 1, memory_per_machine_mb"):
        hardware.hardware_model([{**draft["rows"][0], "memory_per_machine_mb": "lots"}], 1024)
    # An edited table survives a new trace; the header button takes the header again.
    edited = hardware.edit(ids.HW_TABLE, draft, [{**draft["rows"][0], "machines": 10}], uploads, SAMPLE)["draft"]
    assert hardware.edit(ids.TRACE, edited, edited["rows"], uploads, SAMPLE) == {}
    assert hardware.edit(ids.HW_HEADER, edited, edited["rows"], uploads, SAMPLE)["rows"] == draft["rows"]
    message = callbacks.hardware_text(uploads, {"rows": [], "origin": "the table"}, 2048, 300, SAMPLE)[0]
    assert message.className == "error" and "the table has no cluster" in message.children


def _plan(uploads, policies=("fcfs", "hdrf"), second=None, max_jobs=300, org=None):
    org = org or organisation.derived(uploads, SAMPLE, max_jobs, "equal")
    return run.plan(uploads, SAMPLE, max_jobs, "equal", "none", [], list(policies), "easy", 600, org,
                    hardware.header_draft(uploads, SAMPLE), 2048, second)


def test_the_plan_runs_the_organisation_and_hardware_on_screen_under_every_order(uploads):
    plan = _plan(uploads, org={"tree": THREE_GROUPS, "origin": "t"})
    assert [(p.scenario["policy"], p.record["label"], p.record["site"]) for p in plan] == [
        ("fcfs", "FCFS", "A"), ("hdrf", "H-DRF", "A")]
    model = plan[1].scenario["model"]
    assert plan[1].scenario["policy_params"] == {"backfill": "easy", "half_life_s": 600.0}
    assert [g["name"] for g in model["organisation"]["tree"]["children"]] == ["physics", "biology"]
    assert model["clusters"][0]["machines"] == 240 and model["default_memory_per_cpu_mb"] == 2048.0
    with pytest.raises(ScenarioError, match="at least one queue order"):
        _plan(uploads, policies=())
    two = _plan(uploads, second="cerit-sc-2013-slice.swf")
    assert [p.record["site"] for p in two] == ["A", "A", "B", "B"]
    assert two[2].record["hardware"] == "this site's table (its header gives no CPUs)"
    assert "queue" in json.dumps(two[2].scenario["model"]["organisation"])


def test_backfilling_choices_come_from_the_engine_registry():
    values = [choice["value"] for choice in run.backfilling_choices()]
    assert values[:2] == ["none", "easy"]


def test_the_summary_each_group_and_a_highlighted_group_in_every_chart(uploads):
    org = {"tree": THREE_GROUPS, "origin": "t"}
    loaded = [(p.record, run_scenario(p.scenario)) for p in _plan(uploads, ("fcfs", "drf"), org=org)]
    block = charts.stakeholder_block(loaded)
    assert block[0].children == f"Results of {SAMPLE}, its first 300 jobs."   # the inputs they came from
    lines = [item.children for item in block[2].children]
    assert any(line.startswith("FCFS — physics: ") and "for 67% entitlement" in line for line in lines)
    assert any(line.startswith("DRF — other users: ") for line in lines)
    shares, isolation, utilisation, waits, killed = charts.chart_figures(loaded, "physics", None)
    for figure in (shares, isolation, waits):
        bold = {trace.name for trace in figure.data if trace.line.width == 3.0}
        assert bold and all(name.startswith("physics") for name in bold)
    # The window is in seconds (the time-window Store's unit); the charts' axes in hours.
    zoomed = charts.chart_figures(loaded, None, [0.0, 3600.0])[0]
    assert list(zoomed.layout.xaxis.range) == [0.0, 1.0]
    assert all(max(trace.x[:-1], default=0.0) <= 1.0 for trace in zoomed.data)   # one point past the end at most
    assert charts.clicked_group({"points": [{"customdata": "physics"}]}) == "physics"


def test_two_sites_compared_side_by_side_with_differences_marked(uploads):
    plan = _plan(uploads, ("fcfs",), second="cerit-sc-2013-slice.swf", max_jobs=200)
    loaded = [(p.record, run_scenario(p.scenario)) for p in plan]
    figure, rows, columns, results, result_columns = charts.comparison(
        uploads, SAMPLE, "cerit-sc-2013-slice.swf", 200, loaded)
    assert len(figure.data) == 10 and len(figure.to_json()) < 100_000   # 5 panels × 2 sites, binned
    by_name = {row["characteristic"]: row for row in rows}
    assert by_name["jobs"]["differs"] == "" and by_name["groups from"]["cerit-sc-2013-slice.swf"] == "queue ids"
    assert by_name["median run time (s)"]["differs"] == "◆"
    assert {r["policy"] for r in results} == {"FCFS"} and [c["id"] for c in result_columns][:4] == [
        "policy", "metric", "site A", "site B"]
    cancelled = next(r for r in results if r["metric"] == "Cancelled jobs")
    assert cancelled["differs"] == "◆" and cancelled["site B"] == "200 jobs"
    utilisation = next(r for r in results if r["metric"] == "Utilisation")
    assert utilisation["site A"].endswith("%") and float(utilisation["site A"][:-1]) <= 100
    rows, columns, _ = callbacks.summary(_Results(loaded), [record for record, _ in loaded])
    assert [row["site"] for row in rows] == ["A", "B"]
    # The catalogue's names and rounding, never raw keys or 14802.836422.
    assert [c["id"] for c in columns][2:5] == ["Finished", "Killed jobs", "Mean wait (s)"]
    assert "Mean minimum isolation" in [c["id"] for c in columns] and "mean_wait_s" not in rows[0]
    assert rows[0]["Mean wait (s)"] == round(rows[0]["Mean wait (s)"])


class _Results:
    """A results cache holding already-run results by hash."""

    def __init__(self, loaded):
        self._by_hash = {}
        for record, result in loaded:
            record["hash"] = result.scenario_hash
            self._by_hash[result.scenario_hash] = result

    def get(self, key):
        return self._by_hash.get(key)


def test_a_bad_upload_is_refused_in_words(uploads):
    options, value, message = callbacks.upload(uploads, "data:text/plain;base64,////", "bad.swf")
    assert message.className == "error" and "bad.swf" in message.children


def test_an_uploaded_site_trace_runs_whole(uploads):
    data = (Path(__file__).parent / "data" / "batch" / "cons_vs_easy.swf").read_bytes()
    contents = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    options, value, message, max_jobs, refused = callbacks.upload_site(uploads, contents, "mine.swf")
    assert value.startswith("upload:") and max_jobs is None and refused is False
    assert "mine.swf: 4 jobs" in str(message) and "whole trace" in str(message)
    assert callbacks.upload_site(uploads, "data:;base64,AAAA", "bad.swf")[3] is no_update


def test_run_refuses_an_organisation_still_being_derived_for_another_cut(uploads):
    # The tree on screen was derived for the first 300 jobs; "First jobs only" was just cleared.
    stale = {**organisation.derived(uploads, SAMPLE, 300, "equal"), "for": [SAMPLE, 300]}
    with pytest.raises(ScenarioError, match="organisation: still being derived"):
        run.plan(uploads, SAMPLE, None, "equal", "none", [], ["fcfs"], "easy", 0, stale,
                 hardware.header_draft(uploads, SAMPLE), 2048, None)
    plan = _plan(uploads, ("fcfs",), org={**stale, "for": [SAMPLE, 300]})
    assert plan[0].record["trace"] == SAMPLE and plan[0].record["max_jobs"] == 300


def test_the_results_on_top_name_the_trace_and_cut_they_came_from():
    assert charts.inputs_line({"trace": "mine.swf", "max_jobs": None}) == "Results of mine.swf, the whole trace."
    assert charts.inputs_line({"trace": SAMPLE, "max_jobs": 2000}) == f"Results of {SAMPLE}, its first 2,000 jobs."
    assert "not recorded" in charts.inputs_line({"label": "FCFS"})
