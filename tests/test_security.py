"""Security basics: loopback by default, no code from users, no paths from users, no way out of the data directory."""

from __future__ import annotations

import ast
import base64
import http.client
import json
import subprocess
from pathlib import Path

import psutil
import pytest

from app import PAGES, create_app
from components import shell
from components.pages import batch as batch_page
from components.pages import elastic as elastic_page
from components.pages import scenario as scenario_page
from components.pages import workspace as workspace_page
from components.services import saved_items
from components.services.runs import ResultCache
from components.services.uploads import STORED_NAME, UploadError, UploadStore
from components.services.workspace import SAMPLE_TRACES, ScenarioStore, check_input_paths
from sched_engine import ScenarioError
from tests.support.dash_client import CONFIG, split_output
from tests.support.processes import AppProcess

ROOT = Path(__file__).resolve().parents[1]
OUR_CODE = [ROOT / "app.py", *sorted((ROOT / "components").rglob("*.py")),
            *sorted((ROOT / "sched_engine").rglob("*.py"))]

TRAVERSALS = ["../../etc/passwd", "/etc/passwd", "..", "a/b", "x\x00y", "../" + "0" * 64,
              "0" * 64 + "/../../etc/passwd", "0" * 64 + "\n", "%2e%2e%2fetc%2fpasswd", ""]


def data_url(data: bytes) -> str:
    return "data:application/json;base64," + base64.b64encode(data).decode()


# --- binding -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_server(tmp_path_factory):
    """``python app.py`` with SCHEDSCOPE_HOST unset, as an operator starts it."""
    directory = tmp_path_factory.mktemp("served")
    server = AppProcess(directory / "data", directory / "server.log")
    yield server
    server.kill()


def test_the_server_binds_loopback_only_unless_told_otherwise(real_server):
    listening = [c.laddr for c in psutil.Process(real_server.process.pid).net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN]
    assert listening and all(address.ip == "127.0.0.1" for address in listening), listening


@pytest.mark.parametrize("url", ["/assets/../app.py", "/assets/../../../../etc/passwd", "/assets/..%2Fapp.py",
                                 "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/_dash-component-suites/dash/../../app.py",
                                 "/_dash-component-suites/dash/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
                                 "/scenario/../../etc/passwd", "/scenario/%2e%2e%2f%2e%2e%2fetc%2fpasswd"])
def test_no_raw_url_reaches_a_file_outside_the_app(real_server, url):
    """Sent as written (``..`` not normalised by the client), to the real server."""
    connection = http.client.HTTPConnection("127.0.0.1", real_server.port, timeout=30)
    try:
        connection.request("GET", url)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
    finally:
        connection.close()
    assert "root:" not in text and "def create_app" not in text
    assert response.status != 200 or "<html" in text.lower(), "a 200 may only be the app's own page"


def test_make_run_serves_on_loopback_by_default():
    dry_run = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry_run.returncode == 0, dry_run.stderr
    command = [line for line in dry_run.stdout.splitlines() if "gunicorn" in line]
    assert command and "--bind 127.0.0.1:8050" in command[-1], dry_run.stdout
    dev = subprocess.run(["make", "-n", "dev"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "SCHEDSCOPE_HOST=127.0.0.1" in [line for line in dev.stdout.splitlines() if "app.py" in line][-1]


# --- no code from users ------------------------------------------------------------------------------------------

UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib"}
UNSAFE_BUILTINS = {"eval", "exec", "compile", "__import__"}
UNSAFE_METHODS = {"read_pickle", "unsafe_load", "full_load"}


@pytest.mark.parametrize("path", OUR_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_unpickles_or_evaluates_anything(path):
    """Uploads are parsed as text/JSON and callback bodies as JSON: nothing a user sends is ever executed."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in UNSAFE_MODULES:
            found.append(node.module)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in UNSAFE_BUILTINS:
                found.append(f"{node.func.id}() at line {node.lineno}")
            elif isinstance(node.func, ast.Attribute) and (
                    node.func.attr in UNSAFE_METHODS
                    or node.func.attr == "load" and any(k.arg == "allow_pickle" for k in node.keywords)):
                found.append(f"{node.func.attr}() at line {node.lineno}")
    assert not found, f"{path.name}: {found}"


PICKLING_STORES = {"FileSystemCache", "FanoutCache", "Index", "Deque", "SimpleCache", "UWSGICache"}
NOT_STORES = {"pd", "pandas", "np"}   # pandas' Index is a column label, not diskcache's pickling Index


@pytest.mark.parametrize("path", OUR_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_store_that_unpickles_is_opened(path):
    """diskcache's own stores and cachelib's file cache unpickle what they read: the app opens none of them
    (its job store is :class:`components.services.progress.JobStore`, JSON only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            owner = node.func.value.id if isinstance(node.func, ast.Attribute) and isinstance(
                node.func.value, ast.Name) else ""
            if (name in PICKLING_STORES and owner not in NOT_STORES) or (owner == "diskcache" and name == "Cache"):
                found.append(f"{owner + '.' if owner else ''}{name}() at line {node.lineno}")
    assert not found, f"{path.name}: {found}"


# --- upload names never become paths -----------------------------------------------------------------------------

@pytest.mark.parametrize("label", ["../../outside.swf", "/tmp/abs.swf", "..", "a/../../b", "x\x00y.swf",
                                   "..\\..\\win.swf", "~/home.swf"])
def test_an_upload_is_stored_under_its_hash_whatever_its_name(tmp_path, label):
    uploads = UploadStore(tmp_path / "data" / "uploads")
    path = uploads.save_data_url(data_url(b"1 0 0 10 1\n"), "trace", label)
    assert path.parent == uploads.directory and STORED_NAME.fullmatch(path.name)
    everything = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert everything == [Path("data/uploads") / path.name, Path("data/uploads") / f"{path.name}.meta.json"]
    assert uploads.listing()[0]["label"] == label


def test_the_batch_page_upload_keeps_a_traversal_name_as_a_label_only(tmp_path):
    uploads = UploadStore(tmp_path / "uploads")
    swf = (ROOT / "tests" / "data" / "batch" / "cons_vs_easy.swf").read_bytes()
    draft, _ = batch_page.draft.apply_upload(batch_page.draft.initial_draft(), data_url(swf), "../../../escape.swf", "trace",
                                       uploads)
    assert draft["trace"]["label"] == "../../../escape.swf" and STORED_NAME.fullmatch(draft["trace"]["name"])
    assert not (tmp_path.parent / "escape.swf").exists() and not (tmp_path / "escape.swf").exists()


# --- stored names and hashes from the browser --------------------------------------------------------------------

@pytest.mark.parametrize("name", TRAVERSALS + ["0" * 64 + ".trace/../../../etc/passwd", "0" * 64 + ".trace\x00",
                                               "0" * 64 + ".exe", "0" * 64 + ".trace"])
def test_upload_ids_from_the_browser_resolve_only_to_stored_uploads(tmp_path, name):
    uploads = UploadStore(tmp_path / "uploads")
    with pytest.raises(UploadError):
        uploads.path_of(name)
    ref = {"source": "upload", "kind": "trace", "name": name, "label": "x"}
    with pytest.raises(ScenarioError):
        batch_page.sources.ref_path(ref, uploads)
    with pytest.raises(ScenarioError):
        elastic_page.form.trace_spec({"source": "loaded"}, {"kind": "file", "name": name, "label": "x"}, uploads)
    with pytest.raises(ScenarioError):
        saved_items.load_item(uploads, "clusters", name)


@pytest.mark.parametrize("value", ["upload:../../etc/passwd", "upload:/etc/passwd", "upload:" + "0" * 64 + ".trace",
                                   "../../etc/passwd", "/etc/passwd", "upload:x\x00y"])
@pytest.mark.parametrize("trigger, field, message", [(batch_page.ids.SAMPLE, "sample", "trace_msg"),
                                                     (batch_page.ids.FAILURE_CHOICE, "failure_choice", "failure_msg"),
                                                     (batch_page.ids.CLUSTER_CHOICE, "cluster_choice", "clusters_msg")])
def test_a_forged_dropdown_choice_is_refused_and_the_draft_kept(tmp_path, value, trigger, field, message):
    uploads = UploadStore(tmp_path / "uploads")
    draft = batch_page.draft.initial_draft()
    payload = {"sample": None, "failure_choice": None, "cluster_choice": None, "format": "auto", "skip": False,
               "rows": draft["clusters"], field: value}
    out = batch_page.draft.edit_draft(trigger, draft, payload, uploads)
    assert "draft" not in out and message in out, out


@pytest.mark.parametrize("scenario_hash", TRAVERSALS)
def test_scenario_hashes_from_urls_never_reach_the_file_system(tmp_path, scenario_hash):
    store, results = ScenarioStore(tmp_path / "scenarios"), ResultCache(tmp_path / "results")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd.json").write_text(json.dumps({"scenario": {"engine": "batch"}}))
    assert store.get(scenario_hash) is None
    assert scenario_page.content.find_scenario(scenario_hash, store, results) is None
    stored = shell.page_for(PAGES, f"/scenario/{scenario_hash}").children[0]
    assert stored.id == scenario_page.ids.URL_HASH and stored.data == scenario_hash   # only ever data in a Store


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path / "data")
    client = app.server.test_client()
    client.data_dir = tmp_path / "data"
    client.end_id = json.loads(CONFIG.search(client.get("/").get_data(as_text=True)).group(1))["end_id"]
    client.dependencies = client.get("/_dash-dependencies").get_json()
    return client


def fire(client, component_id: str, prop: str, values: dict, changed: str | None = None):
    """POST one (non-background) callback through the Flask test client; returns (status, outputs)."""
    dependency = next(d for d in client.dependencies if {"id": component_id, "property": prop} in d["inputs"])
    outputs = split_output(dependency["output"])

    def filled(items):
        return [{**i, "value": values.get((i["id"], i["property"]))} for i in items]
    body = {"output": dependency["output"],
            "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
            "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
            "changedPropIds": [changed or f"{component_id}.{prop}"]}
    response = client.post(f"/_dash-update-component?endId={client.end_id}", json=body)
    return response.status_code, (response.get_json() or {}).get("response", {})


@pytest.mark.parametrize("scenario_hash", TRAVERSALS)
def test_the_scenario_page_answers_not_found_for_any_forged_hash(client, scenario_hash):
    status, outputs = fire(client, scenario_page.ids.HASH, "data",
                           {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 0})
    assert status == 200
    assert outputs[scenario_page.ids.TITLE]["children"] == "Scenario not found"


@pytest.mark.parametrize("url", ["/scenario/..%2F..%2Fetc%2Fpasswd", "/scenario/%2Fetc%2Fpasswd",
                                 "/?scenario=../../etc/passwd", "/assets/../app.py", "/assets/..%2Fapp.py",
                                 "/assets/%2e%2e/app.py", "/_dash-component-suites/dash/../../../../etc/passwd",
                                 "/_dash-component-suites/dash/..%2F..%2F..%2Fapp.py", "/scenario/%00"])
def test_no_url_serves_a_file_outside_the_app(client, url):
    response = client.get(url)
    text = response.get_data(as_text=True)
    assert "root:" not in text and "def create_app" not in text
    assert response.status_code != 200 or "<html" in text.lower(), "a 200 may only be the app's own page"


# --- files named inside scenarios --------------------------------------------------------------------------------

def batch_scenario(**model) -> dict:
    base = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 50}}
    return {"engine": "batch", "policy": "easy", "name": "probe", "model": {**base, **model}}


OUTSIDE = {
    "absolute": {"trace": {"path": "/etc/passwd"}},
    "relative traversal": {"trace": {"path": "../../../../../../etc/passwd"}},
    "out of the samples": {"trace": {"path": "sample_traces/../app.py"}},
    "project file": {"trace": {"path": "README.md"}},
    "machines": {"machines_path": "/etc/hostname"},
    "failures": {"failures": {"kind": "trace", "path": "../../etc/passwd", "align": "start"}},
    "nul byte": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf\x00.txt"}},
    "too long": {"trace": {"path": "a" * 5000}},
}


@pytest.fixture
def app_store(tmp_path):
    """The scenario store as the app builds it: files from the uploads directory and the samples only."""
    data = tmp_path / "data"
    return ScenarioStore(data / "scenarios", input_roots=(data / "uploads", SAMPLE_TRACES)), UploadStore(
        data / "uploads")


@pytest.mark.parametrize("case", OUTSIDE)
def test_an_uploaded_scenario_cannot_name_a_server_file(app_store, case, monkeypatch):
    store, _ = app_store
    opened = []
    monkeypatch.setattr("sched_engine.batch.model.file_sha256", lambda path, field: opened.append(path) or "0")
    contents = data_url(json.dumps(batch_scenario(**OUTSIDE[case])).encode())
    with pytest.raises(ScenarioError) as caught:
        workspace_page.lists.save_uploaded_scenario(contents, "evil.json", store)
    assert caught.value.source == "evil.json" and caught.value.field.startswith("model.")
    assert caught.value.field.endswith("path"), caught.value.field
    assert opened == [], "a refused file must not be opened"
    assert store.listing() == [] and list(store.directory.iterdir()) == []


def test_an_elastic_scenario_cannot_name_a_server_file(app_store):
    store, _ = app_store
    scenario = {"engine": "elastic", "policy": "yarn-me", "name": "probe",
                "model": {"trace": {"kind": "file", "path": "/etc/passwd"}}}
    with pytest.raises(ScenarioError) as caught:
        store.save(scenario, "probe", source="evil.json")
    assert caught.value.field == "model.trace.path"


def test_a_symlink_out_of_the_samples_is_followed_and_refused(tmp_path):
    link = tmp_path / "samples" / "passwd.swf"
    link.parent.mkdir()
    link.symlink_to("/etc/passwd")
    with pytest.raises(ScenarioError):
        check_input_paths(batch_scenario(trace={"path": str(link)}), [tmp_path / "samples"])


def test_scenarios_on_samples_and_uploads_are_still_saved(app_store):
    store, uploads = app_store
    assert store.save(batch_scenario(machines_path="sample_traces/hpc2n-excerpt.machines"), "samples")["hash"]
    swf = (ROOT / "tests" / "data" / "batch" / "cons_vs_easy.swf").read_bytes()
    uploaded = uploads.save(swf, "trace", "mine.swf")
    entry = store.save(batch_scenario(trace={"path": str(uploaded)}), "uploaded")
    assert entry["scenario"]["model"]["trace"]["path"] == f"upload:{uploaded.name.partition('.')[0]}"
    assert store.save(entry["scenario"], "again")["hash"] == entry["hash"], "a saved scenario saves again as it is"


def test_the_workspace_upload_reports_a_forbidden_path_over_http(client):
    scenario = batch_scenario(trace={"path": "/etc/passwd"})
    status, outputs = fire(client, workspace_page.ids.SCENARIO_UPLOAD, "contents",
                           {(workspace_page.ids.SCENARIO_UPLOAD, "contents"): data_url(json.dumps(scenario).encode()),
                            (workspace_page.ids.SCENARIO_UPLOAD, "filename"): "evil.json"})
    message = json.dumps(outputs[workspace_page.ids.UPLOAD_MSG])
    assert status == 200 and "Not saved" in message and "evil.json" in message and "model.trace.path" in message
    assert outputs[workspace_page.ids.SCENARIOS]["data"] == []
    assert not any((client.data_dir / "scenarios").iterdir())


# --- nothing planted in the data directory is unpickled ------------------------------------------------------------

class _Canary:
    """Unpickling this writes the file named when it was pickled: proof that code ran."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (self.path, "ran"))


def test_the_job_store_refuses_planted_pickles(tmp_path, caplog):
    import diskcache

    from components.services.progress import JobStore

    canary = tmp_path / "canary"
    directory = tmp_path / "data" / "callbacks"
    planter = diskcache.Cache(str(directory))   # diskcache's default disk: pickles
    planter.set("result-key", _Canary(canary))
    planter.set(("a", "tuple", "key"), "value")
    planter.set("large", [_Canary(canary)] * 2000)   # pickled into a file of its own
    planter.set("not-json", b"\x80\x04not json")
    planter.close()

    store = JobStore(str(directory))
    assert store.get("result-key", "missing") == "missing"
    assert store.get("large", "missing") == "missing"
    assert store.get("not-json", "missing") == "missing"
    assert store.pop("result-key", default=False) is False
    store.set("ours", {"figure": {"data": [1, 2]}, "done": True})
    assert store.get("ours") == {"figure": {"data": [1, 2]}, "done": True}
    store.expire(), store.cull()
    store.close()
    assert not canary.exists()
    assert sum("refused" in record.message for record in caplog.records) <= 1


def test_an_app_over_a_planted_job_store_starts_and_serves(tmp_path):
    import diskcache

    canary = tmp_path / "canary"
    planter = diskcache.Cache(str(tmp_path / "data" / "callbacks"))
    for key in ("__dash_background_signing_secret__", "schedscope-stopped-1"):
        planter.set(key, _Canary(canary))
    planter.close()
    client = create_app(tmp_path / "data").server.test_client()
    for url in ("/", "/batch", "/_dash-layout", "/_dash-dependencies"):
        assert client.get(url).status_code == 200
    assert not canary.exists()


# --- malformed requests, oversize bodies and unknown hosts -------------------------------------------------------

def _valid_body(client):
    dependency = next(d for d in client.dependencies
                      if {"id": scenario_page.ids.HASH, "property": "data"} in d["inputs"])
    outputs = split_output(dependency["output"])

    def filled(items):
        return [{**i, "value": None} for i in items]
    return {"output": dependency["output"],
            "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
            "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
            "changedPropIds": [f"{scenario_page.ids.HASH}.data"]}


MALFORMED = {
    "null": lambda body: None,
    "empty object": lambda body: {},
    "a list": lambda body: [body],
    "no output": lambda body: {k: v for k, v in body.items() if k != "output"},
    "unknown output": lambda body: {**body, "output": "no-such.children"},
    "output not text": lambda body: {**body, "output": 7},
    "no inputs": lambda body: {k: v for k, v in body.items() if k != "inputs"},
    "inputs not a list": lambda body: {**body, "inputs": {"id": "x"}},
    "input without property": lambda body: {**body, "inputs": [{"id": "x"}]},
    "state of numbers": lambda body: {**body, "state": [1, 2]},
    "changed ids not texts": lambda body: {**body, "changedPropIds": [{"a": 1}]},
    "outputs missing": lambda body: {k: v for k, v in body.items() if k != "outputs"},
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_callback_request_is_a_400_in_one_log_line(client, case, caplog):
    body = MALFORMED[case](_valid_body(client))
    response = client.post(f"/_dash-update-component?endId={client.end_id}", json=body)
    assert response.status_code == 400
    assert "malformed callback request" in response.get_json()["error"]
    refused = [r for r in caplog.records if "refused a callback request" in r.getMessage()]
    assert len(refused) == 1 and "Traceback" not in caplog.text


def test_a_body_that_is_not_json_is_a_400(client):
    response = client.post(f"/_dash-update-component?endId={client.end_id}", data=b"\xff{not json",
                           content_type="application/json")
    assert response.status_code == 400


def test_a_well_formed_callback_request_still_runs(client):
    response = client.post(f"/_dash-update-component?endId={client.end_id}", json=_valid_body(client))
    assert response.status_code == 200


def test_an_oversize_body_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from components.services import request_guard

    monkeypatch.setenv("SCHEDSCOPE_MAX_UPLOAD_BYTES", str(2**20))
    app = create_app(tmp_path / "data")
    limit = app.server.config["MAX_CONTENT_LENGTH"]
    assert limit == request_guard.max_body_bytes(2**20) < 2**20 * 4 // 3 + 9 * 2**20
    response = app.server.test_client().post("/_dash-update-component", data=b"x" * (limit + 1),
                                             content_type="application/json")
    assert response.status_code == 413


@pytest.mark.parametrize("bind, listed, host, allowed", [
    ("127.0.0.1", None, "localhost:8050", True),
    ("127.0.0.1", None, "127.0.0.1:8050", True),
    ("127.0.0.1", None, "evil.example:8050", False),   # DNS rebinding onto a loopback server
    ("127.0.0.1", "dash.example.org", "dash.example.org", True),
    ("127.0.0.1", ".example.org", "a.example.org", True),
    ("0.0.0.0", None, "anything.example", True),
    ("0.0.0.0", "dash.example.org", "other.example", False),
])
def test_only_trusted_hosts_are_answered(tmp_path, monkeypatch, bind, listed, host, allowed):
    monkeypatch.setenv("SCHEDSCOPE_HOST", bind)
    if listed:
        monkeypatch.setenv("SCHEDSCOPE_TRUSTED_HOSTS", listed)
    else:
        monkeypatch.delenv("SCHEDSCOPE_TRUSTED_HOSTS", raising=False)
    response = create_app(tmp_path / "data").server.test_client().get("/", headers={"Host": host})
    assert (response.status_code == 200) == allowed
    assert allowed or response.status_code == 400


def upload_callbacks(client) -> list[dict]:
    """Every server callback that reads a dcc.Upload's contents."""
    return [d for d in client.dependencies if not d.get("clientside_function")
            and any(i["property"] == "contents" for i in d["inputs"])]


def upload_request(dependency: dict, contents, filename) -> dict:
    upload = next(i for i in dependency["inputs"] if i["property"] == "contents")
    outputs = split_output(dependency["output"])

    def filled(items):
        return [{**i, "value": {"contents": contents, "filename": filename}.get(i["property"])
                 if i["id"] == upload["id"] else None} for i in items]
    return {"output": dependency["output"],
            "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
            "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
            "changedPropIds": [f"{upload['id']}.contents"]}


def test_every_page_with_an_upload_is_checked(client):
    ids = {next(i["id"] for i in d["inputs"] if i["property"] == "contents") for d in upload_callbacks(client)}
    assert ids == {"fairshare-hierarchy-upload", "batch-trace-upload", "network-apps-upload", "elastic-trace-upload",
                   "workspace-scenario-upload", "site-trace-upload", "site-organisation-upload",
                   "site-second-trace-upload", "site-hardware-upload"}


@pytest.mark.parametrize("contents, filename", [({"a": 1}, "t.swf"), (42, "t.swf"), ([1], "t.swf"), (True, "t.swf"),
                                                ("data:;base64,AAAA", {"name": 1}), ("data:;base64,AAAA", 7),
                                                ("data:;base64,AAAA", [None])])
def test_upload_contents_or_names_that_are_not_texts_are_a_400_in_one_log_line(client, contents, filename, caplog):
    for dependency in upload_callbacks(client):
        caplog.clear()
        response = client.post(f"/_dash-update-component?endId={client.end_id}",
                               json=upload_request(dependency, contents, filename))
        assert response.status_code == 400, dependency["output"]
        assert "is not a text" in response.get_json()["error"]
        assert len(caplog.records) == 1 and "Traceback" not in caplog.text


@pytest.mark.parametrize("contents", ["garbage", "data:application/json;base64,e30=", "data:;base64,////"])
def test_upload_texts_that_are_no_file_are_a_message_on_every_page(client, contents):
    for dependency in upload_callbacks(client):
        response = client.post(f"/_dash-update-component?endId={client.end_id}",
                               json=upload_request(dependency, contents, "../odd name.json"))
        assert response.status_code in (200, 204), (dependency["output"], response.get_data(as_text=True)[:300])


def test_an_app_is_set_up_before_its_first_request(tmp_path):
    """Dash's first-request set-up is done when the app is built: a worker's concurrent first requests
    (gunicorn threads) never find the component scripts unregistered (they answered 500)."""
    app = create_app(tmp_path / "data")
    assert {"dash", "plotly"} <= set(app.registered_paths)
    # A script every page loads (the registered set also names source maps a package may not ship).
    suite = "dcc/dash_core_components.js"
    assert suite in app.registered_paths["dash"]
    assert app.server.test_client().get(f"/_dash-component-suites/dash/{suite}").status_code == 200
