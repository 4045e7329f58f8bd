"""Bad input and dead ends, as a first-time visitor meets them: refused with a message, nothing lost, no 500."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from app import create_app
from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import scenario as scenario_page
from components.services.runs import ResultCache
from components.services.uploads import UploadError, UploadStore
from components.services.workspace import ScenarioStore
from sched_engine import ScenarioError

GOOD_SWF = (Path(__file__).parent / "data" / "batch" / "cons_vs_easy.swf").read_bytes()
HEADER_ONLY_SWF = b"; Version: 2.2\n; MaxProcs: 240\n; MaxNodes: 120\n"


def data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def upload_trace(draft, uploads, data, name):
    payload = {f"{p}_{k}": None for p in ("trace", "machines", "failure") for k in ("contents", "name")}
    payload.update({"trace_contents": data_url(data), "trace_name": name, "rows": draft["clusters"]})
    return batch_page.draft.edit_draft(batch_page.ids.TRACE_UPLOAD, draft, payload, uploads)


@pytest.mark.parametrize("data, name, why", [(b"", "empty.swf", "empty"), (b"\n  \n", "blank.swf", "empty"),
                                             (HEADER_ONLY_SWF, "header.swf", "no jobs")])
def test_an_empty_or_jobless_trace_is_refused_and_the_previous_one_stays(uploads, data, name, why):
    mine = upload_trace(batch_page.draft.initial_draft(), uploads, GOOD_SWF, "mine.swf")["draft"]
    out = upload_trace(mine, uploads, data, name)
    message = str(out["trace_msg"].children)
    assert out["trace_msg"].className == "error"
    assert name in message and why in message and "previous file stays" in message
    assert out.get("draft", mine)["trace"] == mine["trace"]


def test_the_memory_page_refuses_a_jobless_trace(uploads):
    with pytest.raises(UploadError, match="empty"):
        elastic_page.trace.apply_upload(data_url(b""), "empty.csv", uploads)
    with pytest.raises(ScenarioError, match="no jobs"):
        elastic_page.trace.apply_upload(data_url(b"[]"), "none.json", uploads)


@pytest.fixture
def stores(tmp_path):
    return ResultCache(tmp_path / "results"), ScenarioStore(tmp_path / "scenarios")


def _ids(component) -> set:
    found = {str(getattr(component, "id", None))}
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if hasattr(child, "to_plotly_json"):
            found |= _ids(child)
    return found


def test_an_unknown_permalink_says_so_and_offers_no_run(stores):
    results, store = stores
    page = scenario_page.callbacks.body(results, store, "ab" * 32)
    assert scenario_page.ids.RUN not in _ids(page) and scenario_page.ids.WHATIF_RUN not in _ids(page)
    assert page.children[0].children == scenario_page.layout.NOT_FOUND_TITLE
    assert page.children[-1].id == scenario_page.ids.NOT_FOUND_TITLE and page.children[-1].data == "Not found · schedscope"
    easy, _ = results.run({"engine": "batch", "policy": "easy", "name": "cve",
                           "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}})
    assert scenario_page.ids.RUN in _ids(scenario_page.callbacks.body(results, store, easy.scenario_hash))


def test_saving_an_unknown_run_is_a_message_not_a_500(stores):
    results, store = stores
    message = scenario_page.callbacks.save(results, store, 1, "mine", "cd" * 32)
    assert message.className == "error" and "Not saved" in message.children
    assert store.get("cd" * 32) is None


def test_an_unknown_permalink_answers_404_and_a_known_one_200(tmp_path):
    app = create_app(tmp_path / "data")
    client = app.server.test_client()
    unknown = client.get(f"/scenario/{'ef' * 32}")
    assert unknown.status_code == 404
    assert "<title>Not found · schedscope</title>" in unknown.get_data(as_text=True)   # the tab says so at once
    assert client.get(f"/?scenario={'ef' * 32}").status_code == 404
    assert client.get("/scenario/not-a-hash").status_code == 404
    assert client.get("/").status_code == 200 and client.get("/batch").status_code == 200
    results = ResultCache(tmp_path / "data" / "results")
    easy, _ = results.run({"engine": "batch", "policy": "easy", "name": "cve",
                           "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}})
    known = client.get(f"/scenario/{easy.scenario_hash}")
    assert known.status_code == 200 and "<title>schedscope</title>" in known.get_data(as_text=True)
