"""Workspace items reused across pages: saved cluster definitions and hierarchies, earlier uploads in dropdowns."""

from __future__ import annotations

import base64
import json

import pytest

from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import fairshare as fairshare_page
from components.pages import network as network_page
from components.services.saved_items import HIERARCHY, clean_name, load_item, save_item, saved_choices
from components.services.uploads import UploadStore
from sched_engine import ScenarioError
from sched_engine.fairshare.presets import fig4_model, starter_model


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def data_url(data: bytes) -> str:
    return "data:application/json;base64," + base64.b64encode(data).decode()


def test_saved_item_round_trip_is_content_addressed(uploads):
    first = save_item(uploads, HIERARCHY, {"b": 1, "a": [1, 2]}, "org")
    again = save_item(uploads, HIERARCHY, {"a": [1, 2], "b": 1}, "org renamed")
    assert first == again and first.endswith(".hierarchy")
    document, label = load_item(uploads, HIERARCHY, first)
    assert document == {"a": [1, 2], "b": 1} and label == "org renamed"
    assert [option["value"] for option in saved_choices(uploads, HIERARCHY)] == [first]
    assert saved_choices(uploads, "clusters") == []


@pytest.mark.parametrize("name", ["", "   ", None])
def test_an_item_needs_a_name(name):
    with pytest.raises(ScenarioError, match="give the item a name"):
        clean_name(name, "hierarchy name")


@pytest.mark.parametrize("stored", ["../../etc/passwd", "/etc/passwd", "0" * 64 + ".hierarchy", None, ""])
def test_loading_anything_but_a_stored_item_is_refused(uploads, stored):
    with pytest.raises(ScenarioError):
        load_item(uploads, HIERARCHY, stored)


def test_an_item_of_another_kind_is_refused(uploads):
    stored = save_item(uploads, "clusters", {"clusters": []}, "grid")
    with pytest.raises(ScenarioError, match="not a saved hierarchy"):
        load_item(uploads, HIERARCHY, stored)


def test_batch_clusters_saved_then_opened_are_the_same_table(uploads):
    rows, label = batch_page.clusters.load_cluster_choice("sample:metacentrum-2009.machines", uploads)
    assert label == "metacentrum-2009.machines" and len(rows) == 14
    rows[0] = {**rows[0], "machines": 3}
    assert batch_page.clusters.save_cluster_rows(rows, "  my  grid ", uploads) == "my grid"
    saved = [o for o in batch_page.sources.cluster_choices(uploads) if o["label"].startswith("my grid")]
    assert len(saved) == 1
    reopened, reopened_label = batch_page.clusters.load_cluster_choice(saved[0]["value"], uploads)
    assert reopened == rows and reopened_label == "my grid"


def test_batch_clusters_with_a_bad_cell_are_not_saved(uploads):
    rows = [{"name": "a", "machines": "two", "cpus_per_machine": "4", "speed": 1, "properties": ""}]
    with pytest.raises(ScenarioError, match="clusters row 1, machines"):
        batch_page.clusters.save_cluster_rows(rows, "broken", uploads)
    with pytest.raises(ScenarioError, match="table is empty"):
        batch_page.clusters.save_cluster_rows([], "empty", uploads)
    assert uploads.listing() == []


def test_batch_page_opens_a_saved_definition_and_keeps_the_table_on_error(uploads):
    draft = batch_page.draft.initial_draft()
    rows = draft["clusters"][:2]
    batch_page.clusters.save_cluster_rows(rows, "two clusters", uploads)
    value = next(o["value"] for o in batch_page.sources.cluster_choices(uploads) if o["label"].startswith("two clusters"))
    payload = {"cluster_choice": value, "rows": draft["clusters"]}
    out = batch_page.draft.edit_draft(batch_page.ids.CLUSTER_CHOICE, draft, payload, uploads)
    assert out["clusters"] == rows and out["draft"]["clusters_label"] == "two clusters"
    broken = {"cluster_choice": "upload:" + "f" * 64 + ".clusters", "rows": draft["clusters"]}
    out = batch_page.draft.edit_draft(batch_page.ids.CLUSTER_CHOICE, draft, broken, uploads)
    assert set(out) == {"clusters_msg"} and "table is unchanged" in str(out["clusters_msg"].children)


def test_batch_failure_traces_uploaded_earlier_are_offered(uploads):
    text = open("sample_traces/metacentrum-2009.failures", "rb").read()
    stored = uploads.save(text, "failures", "site.failures").name
    values = [o["value"] for o in batch_page.sources.failure_choices(uploads)]
    assert values == ["sample:metacentrum-2009.failures", "upload:" + stored]
    draft = batch_page.draft.initial_draft()
    out = batch_page.draft.edit_draft(batch_page.ids.FAILURE_CHOICE, draft, {"failure_choice": values[1]}, uploads)
    assert out["draft"]["failure_trace"] == {"source": "upload", "kind": "failures", "name": stored,
                                             "label": "site.failures"}


def test_hierarchy_saved_then_opened_restores_the_draft(uploads):
    draft = fig4_model()
    out = fairshare_page.draft.hierarchy_action(fairshare_page.ids.SAVE_HIER, draft, {"name": "fig 4"}, uploads)
    assert "Saved the hierarchy as 'fig 4'" in out["message"].children
    choice = saved_choices(uploads, HIERARCHY)[0]["value"]
    out = fairshare_page.draft.hierarchy_action(fairshare_page.ids.HIER_CHOICE, starter_model(),
                                          {"choice": choice}, uploads)
    assert out["draft"] == draft


def test_hierarchy_upload_accepts_a_scenario_and_saves_its_model(uploads):
    scenario = {"engine": "fairshare", "policy": "drf", "model": fig4_model()}
    payload = {"contents": data_url(json.dumps(scenario).encode()), "filename": "fig4.scenario.json"}
    out = fairshare_page.draft.hierarchy_action(fairshare_page.ids.HIER_UPLOAD, {}, payload, uploads)
    assert out["draft"] == fig4_model()
    assert [e["label"] for e in uploads.listing()] == ["fig4.scenario"]


@pytest.mark.parametrize("document, expected", [
    (b'{"resources": [', "fig.json, line 1: invalid JSON"),
    (b'[1, 2]', "must be a JSON object"),
    (b'{"engine": "batch", "model": {}}', "'batch' scenario has no hierarchy"),
    (b'{"resources": [{"name": "cpu", "capacity": 4}], "tree": 7}', "fig.json"),
])
def test_bad_hierarchy_uploads_say_why_and_keep_the_draft(uploads, document, expected):
    payload = {"contents": data_url(document), "filename": "fig.json"}
    out = fairshare_page.draft.hierarchy_action(fairshare_page.ids.HIER_UPLOAD, fig4_model(), payload, uploads)
    assert set(out) == {"message"} and out["message"].className == "error"
    assert expected in out["message"].children and "unchanged" in out["message"].children
    assert uploads.listing() == []


def test_hierarchy_download_is_the_draft_as_json(uploads):
    out = fairshare_page.draft.hierarchy_action(fairshare_page.ids.EXPORT_HIER, fig4_model(), {}, uploads)
    assert json.loads(out["download"]["content"]) == fig4_model()


def test_network_application_lists_uploaded_earlier_can_be_reopened(uploads):
    csv = b"name,arrival,pattern,volume,weight,count,cpu,ram,downlink,uplink\na,0,all-to-all,1,1,2,1,1,0.5,0.5\n"
    stored = uploads.save(csv, "apps", "two.csv").name
    assert [o["value"] for o in network_page.draft.app_list_choices(uploads)] == [stored]
    draft = network_page.setups.initial_draft()
    out = network_page.draft.edit_draft(network_page.ids.APPS_CHOICE, draft, {"choice": stored}, uploads)
    assert out["draft"]["upload"]["name"] == stored, out
    out = network_page.draft.edit_draft(network_page.ids.APPS_CHOICE, draft, {"choice": "x" * 64 + ".apps"}, uploads)
    assert set(out) == {"apps_msg"}


def test_elastic_page_offers_only_its_own_trace_formats(uploads):
    sls = json.dumps([{"job.id": "j1", "job.start.ms": 0, "job.end.ms": 100000,
                       "job.tasks": [{"c.nr": 2, "c.dur": 100000, "c.mem": 2048, "c.type": "map"}]}]).encode()
    stored = uploads.save(sls, "trace", "jobs.json").name
    uploads.save(b"; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n", "trace", "batch.swf")
    assert [o["value"] for o in elastic_page.trace.trace_choices(uploads)] == [stored]
    ref, message = elastic_page.trace.open_stored_trace(stored, uploads)
    assert ref == {"kind": "upload", "name": stored, "label": "jobs.json"} and "1 jobs" in message
