"""The batch page's hardware rule: the machine a run uses is never a surprise (no browser)."""

from __future__ import annotations

import base64

import pytest

from components.pages import batch as page
from components.services.runs import ResultCache
from components.services.uploads import UploadStore
from sched_engine import normalize_scenario

# Five jobs; the header describes 16 CPUs on 4 machines of 4 CPUs; job 3 asks for 32.
HEADER_SWF = b"""; MaxNodes: 4
; MaxProcs: 16
1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
2 10 -1 100 8 -1 -1 8 100 -1 1 2 1 -1 -1 -1 -1 -1
3 20 -1 100 32 -1 -1 32 100 -1 1 2 1 -1 -1 -1 -1 -1
4 30 -1 100 2 -1 -1 2 100 -1 1 3 1 -1 -1 -1 -1 -1
5 40 -1 100 1 -1 -1 1 100 -1 1 3 1 -1 -1 -1 -1 -1
"""
NO_HEADER_SWF = b"\n".join(line for line in HEADER_SWF.splitlines() if not line.startswith(b";")) + b"\n"


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def upload(draft, uploads, data, name, kind="trace"):
    trigger = {"trace": page.ids.TRACE_UPLOAD, "machines": page.ids.MACHINES_UPLOAD}[kind]
    payload = {f"{p}_{k}": None for p in ("trace", "machines", "failure") for k in ("contents", "name")}
    payload.update({f"{kind}_contents": "data:application/octet-stream;base64," + base64.b64encode(data).decode(),
                    f"{kind}_name": name, "rows": draft["clusters"]})
    return page.draft.edit_draft(trigger, draft, payload, uploads)


def statement(draft, uploads, max_jobs=None) -> str:
    workload = page.sources.parse_trace(draft["trace"], uploads)
    return " ".join(str(line.children if isinstance(line.children, str) else line.children)
                    for line in page.clusters.hardware_statement(draft, workload, max_jobs))


def test_an_upload_on_the_opening_set_up_runs_on_the_trace_header_and_says_so(uploads):
    opening = page.draft.initial_draft()
    out = upload(opening, uploads, HEADER_SWF, "site.swf")
    draft = out["draft"]
    assert out["clusters"] == draft["clusters"] == [
        {"name": "cluster", "machines": 4, "cpus_per_machine": "4", "speed": 1.0, "properties": ""}]
    assert "the trace header of site.swf" in str(out["clusters_msg"].children)
    text = statement(draft, uploads)
    assert "1 cluster, 16 CPUs" in text and "from the trace header of site.swf" in text
    assert "1 of the 5 jobs to simulate ask for more CPUs than the largest cluster has (16)" in text


def test_a_preset_is_a_choice_an_upload_keeps_and_the_statement_warns(uploads):
    chosen = page.draft.edit_draft(page.ids.PRESET_COMPLETE, page.draft.initial_draft(), {}, uploads)["draft"]
    out = upload(chosen, uploads, HEADER_SWF, "site.swf")
    assert "clusters" not in out and out["draft"]["clusters"] == chosen["clusters"]
    text = statement(out["draft"], uploads)
    assert "14 clusters, 806 CPUs" in text and "from metacentrum-2009.machines" in text
    assert "The trace header describes 16 CPUs; these clusters have 806." in text
    # The largest MetaCentrum cluster has 80 CPUs: none of these jobs is too large.
    assert "cancelled" not in text


@pytest.mark.parametrize("choose", ["edit", "machines"])
def test_an_explicit_cluster_choice_survives_later_uploads(uploads, choose):
    opening = page.draft.initial_draft()
    if choose == "edit":
        rows = [{"name": "mine", "machines": 2, "cpus_per_machine": "8", "speed": 1.0, "properties": ""}]
        draft = page.draft.edit_draft(page.ids.CLUSTERS, opening, {"rows": rows}, uploads)["draft"]
    else:
        draft = upload(opening, uploads, b"0 mine 2 8 1 0\n", "two.machines", "machines")["draft"]
    out = upload(draft, uploads, HEADER_SWF, "site.swf")
    assert [row["name"] for row in out["draft"]["clusters"]] == ["mine"]
    text = statement(out["draft"], uploads)
    assert "1 cluster, 16 CPUs" in text and "site.swf" not in text.split("from")[1]


def test_a_trace_without_header_keeps_the_table_and_says_so(uploads):
    opening = page.draft.initial_draft()
    out = upload(opening, uploads, NO_HEADER_SWF, "bare.swf")
    assert out["draft"]["clusters"] == opening["clusters"]
    text = statement(out["draft"], uploads)
    assert "bare.swf has no MaxProcs header line" in text and "14 clusters, 806 CPUs" in text


def test_an_empty_table_means_the_header_cluster(uploads):
    draft = upload(page.draft.initial_draft(), uploads, HEADER_SWF, "site.swf")["draft"]
    emptied = page.draft.edit_draft(page.ids.CLUSTERS, draft, {"rows": []}, uploads)["draft"]
    assert "1 cluster, 16 CPUs" in statement(emptied, uploads)
    assert "2 of the 2 jobs" not in statement(emptied, uploads, max_jobs=2)   # job 3 is the third


def test_the_oversize_warning_counts_only_the_jobs_to_simulate(uploads):
    draft = upload(page.draft.initial_draft(), uploads, HEADER_SWF, "site.swf")["draft"]
    assert "cancelled" not in statement(draft, uploads, max_jobs=2)
    assert "1 of the 3 jobs" in statement(draft, uploads, max_jobs=3)


def test_choosing_the_format_in_use_changes_nothing(uploads):
    newer = upload(page.draft.initial_draft(), uploads, HEADER_SWF, "site.swf")["draft"]
    assert page.draft.edit_draft(page.ids.FORMAT, newer, {"format": "auto", "skip": False}, uploads) == {}
    assert page.draft.edit_draft(page.ids.SKIP_MALFORMED, newer, {"format": "auto", "skip": False}, uploads) == {}
    changed = page.draft.edit_draft(page.ids.SKIP_MALFORMED, newer, {"format": "auto", "skip": True}, uploads)
    assert changed["draft"]["trace"]["label"] == "site.swf" and changed["draft"]["trace"]["skip_malformed"]


def test_records_summary_and_permalink_name_the_hardware(tmp_path, uploads):
    draft = upload(page.draft.initial_draft(), uploads, HEADER_SWF, "site.swf")["draft"]
    settings = {"max_jobs": None, "failure_kind": "none", "align": "start", "failure_params": {}, "req_share": 0,
                "estimates": "perfect", "scenarios": ["BASIC"]}
    models = page.run.scenario_models(draft, settings, uploads)
    hardware = page.clusters.hardware_text(*page.clusters.next_run_hardware(draft, page.sources.parse_trace(draft["trace"], uploads)))
    assert hardware == "1 cluster, 16 CPUs (the trace header of site.swf)"
    cache = ResultCache(tmp_path / "results")
    records, _ = page.run.run_matrix(cache, models, ["easy"], 1, lambda done, total: None, hardware)
    assert records[0]["hardware"] == hardware
    result = cache.get(records[0]["hash"])
    assert hardware in result.scenario["name"]
    assert result.summary_value("cpus") == 16 and result.summary_value("cancelled") == 1
    row = page.charts.summary_rows([(records[0], result)])[0]
    assert row["hardware"] == hardware
    # The name is not part of the content hash: the same run from the command line hits the cache.
    assert normalize_scenario({**result.scenario, "name": "other"}).content_hash() == records[0]["hash"]



def test_frame_downloads_stream_from_the_store_not_through_a_callback(tmp_path, uploads):
    from app import create_app
    from components.services.downloads import download_href

    app = create_app(tmp_path / "data")
    draft = upload(page.draft.initial_draft(), uploads, HEADER_SWF, "site.swf")["draft"]
    settings = {"max_jobs": None, "failure_kind": "none", "align": "start", "failure_params": {}, "req_share": 0,
                "estimates": "perfect", "scenarios": ["BASIC"]}
    cache = ResultCache(tmp_path / "data" / "results")
    records, _ = page.run.run_matrix(cache, page.run.scenario_models(draft, settings, uploads), ["fcfs"], 1,
                                 lambda done, total: None)
    links = page.charts.frame_links(records, "BASIC", "FCFS")
    assert links["jobs"] == (download_href(records[0]["hash"], "jobs", "batch-BASIC-fcfs-jobs.csv"),
                             "batch-BASIC-fcfs-jobs.csv")
    client = app.server.test_client()
    response = client.get(links["jobs"][0])
    assert response.status_code == 200
    assert 'filename="batch-BASIC-fcfs-jobs.csv"' in response.headers["Content-Disposition"]
    lines = response.get_data(as_text=True).splitlines()
    assert lines[0].startswith("job_id,submit_time,start_time,end_time,status") and len(lines) == 6
    assert client.get(f"/download/{records[0]['hash']}/secrets.csv").status_code == 404
    assert client.get(f"/download/{'0' * 64}/jobs.csv").status_code == 404
    assert "text/csv" not in client.get("/download/..%2F..%2Fetc/jobs.csv").content_type   # the app's page
    assert page.charts.frame_links(records, "BASIC", "EASY") == {}


def test_detail_figures_are_built_once_per_runs_scenario_policy_and_window(tmp_path, uploads, monkeypatch):
    built = []
    monkeypatch.setattr(page.charts, "detail_figures", lambda *args: built.append(args[2:]) or ("figures",))
    memo = page.charts.FigureMemo(size=2)
    records = [{"scenario": "BASIC", "label": "EASY", "hash": "a" * 64}]
    for window in (None, [0, 10], None, [0, 10], [5, 6], None):
        assert memo.detail(None, records, "BASIC", "EASY", window) == ("figures",)
    # None and [0, 10] once each; [5, 6] pushes out the least recent (None), which is then built again.
    assert built == [("BASIC", "EASY", None), ("BASIC", "EASY", [0, 10]), ("BASIC", "EASY", [5, 6]),
                     ("BASIC", "EASY", None)]
