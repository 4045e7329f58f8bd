"""Faults: the server is killed (SIGKILL, the whole process group) during a run and during an upload.

The app runs as a real process (``python app.py``, its own process group,
data in a temporary directory, a free loopback port). Uploads and scenarios
are saved over HTTP through the pages' callbacks and through the stores'
API; a scenario is run to completion (cached); then the server is killed
while a longer run is in progress, or while an upload is being received or
written. After a restart every saved upload and scenario must be
byte-identical and listed, no partial file may be listed, the earlier result
must be served from the cache, and new runs and uploads must work. Every
wait is bounded.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import threading
import time
from pathlib import Path

import pytest

from components.pages import batch as batch_page
from components.pages import scenario as scenario_page
from components.pages import workspace as workspace_page
from components.services.runs import ResultCache
from components.services.uploads import STORED_NAME, UploadStore
from components.services.workspace import ScenarioStore
from tests.support.dash_client import DashClient, load_scenario
from tests.support.processes import ROOT, AppProcess

pytestmark = pytest.mark.system   # the app as a real process, killed and restarted
TEST_DEADLINE_S = 240.0
SAMPLE_SWF = (ROOT / "sample_traces" / "hpc2n-excerpt.swf").read_bytes()


@pytest.fixture
def servers(tmp_path):
    """Start app processes on one data directory; every one still running is killed at the end."""
    started: list[AppProcess] = []
    data = tmp_path / "data"

    def start() -> AppProcess:
        server = AppProcess(data, tmp_path / f"server-{len(started) + 1}.log")
        started.append(server)
        return server
    start.data = data
    yield start
    for server in started:
        if server.process.poll() is None or server.group_members():
            server.kill()


def data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every stored file under ``directory`` (temporary files of interrupted writes left out)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def upload_trace_over_http(client: DashClient, data: bytes, name: str) -> dict:
    """The batch page's trace upload, as the browser sends it; returns the new draft's trace reference."""
    outputs = client.call(client.callback(batch_page.ids.TRACE_UPLOAD, "contents"),
                          {(batch_page.ids.TRACE_UPLOAD, "contents"): data_url(data),
                           (batch_page.ids.TRACE_UPLOAD, "filename"): name,
                           (batch_page.ids.DRAFT, "data"): batch_page.draft.initial_draft()},
                          (batch_page.ids.TRACE_UPLOAD, "contents"))
    return outputs[batch_page.ids.DRAFT]["data"]["trace"]


def upload_scenario_over_http(client: DashClient, scenario: dict, name: str) -> dict:
    """The Workspace page's scenario upload; returns the callback's outputs."""
    return client.call(client.callback(workspace_page.ids.SCENARIO_UPLOAD, "contents"),
                       {(workspace_page.ids.SCENARIO_UPLOAD, "contents"): data_url(json.dumps(scenario).encode()),
                        (workspace_page.ids.SCENARIO_UPLOAD, "filename"): name},
                       (workspace_page.ids.SCENARIO_UPLOAD, "contents"))


def workspace_tables(client: DashClient) -> dict:
    outputs = client.call(client.callback(workspace_page.ids.REFRESH, "n_clicks"),
                          {(workspace_page.ids.REFRESH, "n_clicks"): 1}, (workspace_page.ids.REFRESH, "n_clicks"))
    return {table: outputs[table]["data"] for table in (workspace_page.ids.SCENARIOS, workspace_page.ids.UPLOADS)}


class Interrupt(Exception):
    """Stops polling a run once it is known to be in progress."""


def run_values(scenario_hash: str) -> dict:
    return {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
            (scenario_page.ids.VERSION, "data"): 0}


def run_to_completion(client: DashClient, scenario_hash: str) -> dict:
    outputs = client.run_background(client.callback(scenario_page.ids.RUN, "n_clicks"), run_values(scenario_hash),
                                    (scenario_page.ids.RUN, "n_clicks"))
    assert outputs.get(scenario_page.ids.VERSION) == {"data": 1}, f"the run did not finish: {outputs}"
    return outputs


def assert_uploads_whole(uploads_dir: Path) -> None:
    """Every stored upload holds exactly the bytes its name (their SHA-256) promises."""
    for path in uploads_dir.iterdir():
        if STORED_NAME.fullmatch(path.name):
            assert hashlib.sha256(path.read_bytes()).hexdigest() == path.name.split(".")[0], f"{path.name} is torn"


def test_kill_during_a_run_keeps_uploads_scenarios_and_cached_results(servers):
    deadline = time.monotonic() + TEST_DEADLINE_S
    first = servers()
    data = servers.data
    client = DashClient(first.url, deadline)
    client.open_page("/batch")
    trace_ref = upload_trace_over_http(client, SAMPLE_SWF, "mine.swf")
    assert trace_ref["source"] == "upload" and trace_ref["label"] == "mine.swf"
    uploads = UploadStore(data / "uploads")
    uploads.save(b"1 seth 120 2 1.0 x86_64\n", "machines", "extra.machines")
    scenarios = ScenarioStore(data / "scenarios")
    quick = scenarios.save(load_scenario(7), "quick")["hash"]
    long_run = {**load_scenario(8), "policy": "ls", "name": "long"}
    client.open_page("/workspace")
    message = json.dumps(upload_scenario_over_http(client, long_run, "long.json"))
    assert "Saved" in message, message
    long_hash = next(e["hash"] for e in scenarios.listing() if e["name"] == "long")

    client.open_page(f"/scenario/{quick}")
    run_to_completion(client, quick)
    index_entry = (data / "results" / "index" / f"{quick}.json").read_bytes()
    before = {"uploads": snapshot(data / "uploads"), "scenarios": snapshot(data / "scenarios")}
    listed = (uploads.listing(), scenarios.listing())

    client.open_page(f"/scenario/{long_hash}")
    progress = []

    def stop_at_first_progress(values):
        progress.append(values)
        raise Interrupt
    with pytest.raises(Interrupt):
        client.run_background(client.callback(scenario_page.ids.RUN, "n_clicks"), run_values(long_hash),
                              (scenario_page.ids.RUN, "n_clicks"), on_progress=stop_at_first_progress)
    assert len(first.group_members()) >= 2, "the long run's job process should be running beside the server"
    first.kill()
    assert first.group_members() == [], "no process of the killed server may survive"
    assert ResultCache(data / "results").get(long_hash) is None, "the long run was killed before it finished"

    second = servers()
    assert {"uploads": snapshot(data / "uploads"), "scenarios": snapshot(data / "scenarios")} == before
    assert (UploadStore(data / "uploads").listing(), ScenarioStore(data / "scenarios").listing()) == listed
    assert_uploads_whole(data / "uploads")
    assert ResultCache(data / "results").get(quick) is not None

    client = DashClient(second.url, deadline)
    client.open_page("/workspace")
    tables = workspace_tables(client)
    assert len(tables[workspace_page.ids.SCENARIOS]) == 2 and len(tables[workspace_page.ids.UPLOADS]) == 2
    client.open_page(f"/scenario/{quick}")
    run_to_completion(client, quick)
    assert (data / "results" / "index" / f"{quick}.json").read_bytes() == index_entry, \
        "the cached result must be served, not simulated again"
    client.open_page(f"/scenario/{long_hash}")
    run_to_completion(client, long_hash)               # the interrupted run works after the restart
    assert ResultCache(data / "results").get(long_hash) is not None


def post_upload_raw(port: int, body: bytes, sent: threading.Event, send_all: bool = True) -> None:
    """POST a callback body on a raw connection (all of it, or half); errors from the killed server are expected."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest("POST", "/_dash-update-component")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders()
        connection.send(body if send_all else body[: len(body) // 2])
        sent.set()
        if send_all:
            connection.getresponse().read()
    except OSError:
        pass
    finally:
        sent.set()
        connection.close()


def big_trace(megabytes: int) -> bytes:
    lines = SAMPLE_SWF.splitlines(keepends=True)
    header = [line for line in lines if line.startswith(b";")]
    jobs = [line for line in lines if line.strip() and not line.startswith(b";")]
    body, size, copy = [], 0, 0
    while size < megabytes * 1024 * 1024:   # renumbered copies of the excerpt's jobs
        for line in jobs:
            fields = line.split()
            fields[0] = str(int(fields[0]) + copy * 100000).encode()
            text = b" ".join(fields) + b"\n"
            body.append(text)
            size += len(text)
        copy += 1
    return b"".join(header + body)


def test_kill_during_an_upload_leaves_no_partial_file(servers):
    deadline = time.monotonic() + TEST_DEADLINE_S
    first = servers()
    data = servers.data
    client = DashClient(first.url, deadline)
    client.open_page("/batch")
    upload_trace_over_http(client, SAMPLE_SWF, "small.swf")
    ScenarioStore(data / "scenarios").save(load_scenario(3), "kept")
    before = {"uploads": snapshot(data / "uploads"), "scenarios": snapshot(data / "scenarios")}
    listed = UploadStore(data / "uploads").listing()
    dependency = client.callback(batch_page.ids.TRACE_UPLOAD, "contents")
    big = big_trace(24)
    body = json.dumps(client.payload(
        dependency, {(batch_page.ids.TRACE_UPLOAD, "contents"): data_url(big),
                     (batch_page.ids.TRACE_UPLOAD, "filename"): "big.swf",
                     (batch_page.ids.DRAFT, "data"): batch_page.draft.initial_draft()},
        (batch_page.ids.TRACE_UPLOAD, "contents"))).encode()
    big_name = f"{hashlib.sha256(big).hexdigest()}.trace"

    # 1. Killed while the upload's body is still arriving.
    sent = threading.Event()
    sender = threading.Thread(target=post_upload_raw, args=(first.port, body, sent, False))
    sender.start()
    assert sent.wait(30)
    time.sleep(0.2)
    first.kill()
    sender.join(30)
    second = servers()
    assert {"uploads": snapshot(data / "uploads"), "scenarios": snapshot(data / "scenarios")} == before
    assert UploadStore(data / "uploads").listing() == listed

    # 2. Killed while the server writes the upload (its temporary file appears), or just after.
    sent.clear()
    uploads_dir = data / "uploads"
    sender = threading.Thread(target=post_upload_raw, args=(second.port, body, sent, True))
    sender.start()
    seen_temporary = False
    watch_until = time.monotonic() + 60
    while time.monotonic() < watch_until and not (uploads_dir / big_name).exists():
        if any(p.name.startswith(".incoming-") for p in uploads_dir.iterdir()):
            seen_temporary = True
            break
        time.sleep(0.001)
    second.kill()
    sender.join(30)
    leftovers = [p.name for p in uploads_dir.iterdir() if p.name.startswith(".incoming-")]
    print(f"\nupload killed {'mid-write' if seen_temporary else 'after the write'}; "
          f"{len(leftovers)} temporary file(s) left behind")

    third = servers()
    assert_uploads_whole(uploads_dir)
    after = UploadStore(uploads_dir).listing()
    assert [e for e in after if e["name"] != big_name] == listed, "earlier uploads must be listed unchanged"
    assert all(not e["name"].startswith(".") for e in after), "temporary files are never listed"
    stored = snapshot(data / "uploads")
    assert {k: v for k, v in stored.items() if not k.startswith(big_name)} == before["uploads"]
    assert snapshot(data / "scenarios") == before["scenarios"]

    # The store still works: the same upload again is stored whole and listed, over HTTP.
    client = DashClient(third.url, deadline)
    client.open_page("/batch")
    ref = upload_trace_over_http(client, big, "big.swf")
    assert ref["name"] == big_name
    assert_uploads_whole(uploads_dir)
    assert (uploads_dir / big_name).read_bytes() == big
    client.open_page("/workspace")
    labels = sorted(row["file"] for row in workspace_tables(client)[workspace_page.ids.UPLOADS])
    assert labels == ["big.swf", "small.swf"]
