"""Nothing from the data directory is ever unpickled: a pickle planted at every path the app reads runs no code.

Each planted pickle, once unpickled, writes a canary file. The app is then
started over that data directory and used as a person would, over HTTP:
pages and permalinks opened, the Workspace lists read, a scenario run as a
background callback, a result downloaded, the result store pruned. The
canary must never appear, and the app must keep working around what it
cannot read.
"""

from __future__ import annotations

import hashlib
import pickle
import struct
import time
from pathlib import Path

import diskcache
import pytest

from app import create_app
from components import shell
from components.pages import scenario as scenario_page
from components.pages import workspace as workspace_page
from components.services.result_store import LEGACY_COUNT_FILE, result_key
from components.services.runs import ResultCache
from components.services.secret_key import FILE_NAME as SECRET_FILE
from components.services.workspace import ScenarioStore
from tests.support.dash_client import DEADLINE_S, DashClient, find_component, load_scenario
from tests.support.load import session
from tests.support.served import served_app

pytestmark = pytest.mark.system

PLANTED_HASH = "ab" * 32
UPLOAD_SHA = "cd" * 32


class Canary:
    """Unpickling this writes ``path``: proof that code ran."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (self.path, "ran"))


def plant(data: Path, canary: Path, run_hash: str) -> list[Path]:
    """A canary pickle at every file the app reads; returns the planted files (job-store rows aside)."""
    payload = pickle.dumps(Canary(canary), protocol=5)
    legacy = b"".join([struct.pack("I", 0), payload])   # FileSystemCache's layout: expiry, then the pickle
    files = {
        data / SECRET_FILE: payload,
        data / "results" / "store" / LEGACY_COUNT_FILE: payload,
        data / "results" / "store" / hashlib.sha256(result_key(PLANTED_HASH).encode()).hexdigest(): legacy,
        data / "results" / "store" / hashlib.sha256(result_key(run_hash).encode()).hexdigest(): legacy,
        data / "results" / "store" / f"{PLANTED_HASH}.parquet.zip": payload,
        data / "results" / "index" / f"{PLANTED_HASH}.json": payload,
        data / "results" / "index" / f"{run_hash}.json": payload,
        data / "scenarios" / f"{PLANTED_HASH}.json": payload,
        data / "uploads" / f"{UPLOAD_SHA}.trace": payload,
        data / "uploads" / f"{UPLOAD_SHA}.trace.meta.json": payload,
        data / "sweeps" / f"{PLANTED_HASH}.json": payload,
        data / "run-clients" / "planted.json": payload,
    }
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    jobs = diskcache.Cache(str(data / "callbacks"))   # diskcache's own disk: it pickles
    for key in ("__dash_background_signing_secret__", "schedscope-stopped-1", PLANTED_HASH):
        jobs.set(key, Canary(canary))
    jobs.set("large", [Canary(canary)] * 2000)   # pickled into a file of its own
    jobs.close()
    return list(files)


def test_no_planted_pickle_runs_across_start_pages_permalinks_runs_downloads_and_pruning(tmp_path):
    data, canary = tmp_path / "data", tmp_path / "canary"
    scenarios = ScenarioStore(data / "scenarios")
    run_hash = scenarios.save(load_scenario(1, max_jobs=300), "planted-run")["hash"]
    plant(data, canary, run_hash)

    app = create_app(data)   # start-up: key, job store, stores' checks of unreadable files
    assert not canary.exists(), "start-up unpickled a planted file"
    with served_app(app) as (base_url, job_processes):
        client = DashClient(base_url, time.monotonic() + DEADLINE_S)
        for path in ("/", "/batch", "/fairshare", "/compare", "/workspace", "/sweeps", f"/scenario/{PLANTED_HASH}"):
            client.open_page(path)
            client.call(client.callback(shell.LOCATION, "pathname"),
                        {(shell.LOCATION, "pathname"): path, (shell.LOCATION, "search"): ""})
        lists = client.call(client.callback(workspace_page.ids.REFRESH, "n_clicks"), {(workspace_page.ids.REFRESH, "n_clicks"): 1})
        assert [run_hash in row["name"] for row in lists[workspace_page.ids.SCENARIOS]["data"]] == [True]
        assert lists[workspace_page.ids.RUNS]["data"] == []
        assert "uploads/" + UPLOAD_SHA in str(lists[workspace_page.ids.SKIPPED]["children"])
        shown = client.call(client.callback(scenario_page.ids.HASH, "data"),
                            {(scenario_page.ids.HASH, "data"): PLANTED_HASH, (scenario_page.ids.VERSION, "data"): 0})
        assert shown[scenario_page.ids.TITLE]["children"] == "Scenario not found"
        assert not canary.exists(), "a page or a permalink unpickled a planted file"

        timings = session(base_url, run_hash, time.monotonic() + DEADLINE_S)   # a background run, start to chart
        assert timings["run_s"] > 0
        client.open_page(f"/scenario/{run_hash}")
        page = client.call(client.callback(shell.LOCATION, "pathname"),
                           {(shell.LOCATION, "pathname"): f"/scenario/{run_hash}", (shell.LOCATION, "search"): ""})
        assert find_component(page[shell.CONTENT]["children"], scenario_page.ids.URL_HASH)["props"]["data"] == run_hash
        status, csv = client.request(f"/download/{run_hash}/jobs.csv")
        assert status == 200 and csv.startswith(b"job_id")
        with pytest.raises(Exception, match="404"):
            client.request(f"/download/{PLANTED_HASH}/jobs.csv")
        settle = time.monotonic() + 10
        while job_processes() and time.monotonic() < settle:
            time.sleep(0.1)
    assert not canary.exists(), "a run or a download unpickled a planted file"

    results = ResultCache(data / "results", capacity=1)   # pruning lists and removes the planted entries
    results.put(results.get(run_hash))
    assert results.get(run_hash) is not None
    store = sorted(p.name for p in (data / "results" / "store").iterdir() if not p.name.startswith("."))
    assert store == sorted([LEGACY_COUNT_FILE, f"{run_hash}.parquet.zip"]), store   # the count file is never an entry
    assert not canary.exists(), "pruning unpickled a planted file"


def test_a_planted_legacy_result_is_a_miss_and_logged_once(tmp_path, caplog):
    """A file in the earlier store's pickle layout is read by a disassembler: a pickle that would call anything
    is refused, reads as a miss (so the run is simulated again) and is logged once per process."""
    canary, planted = tmp_path / "canary", "12" * 32
    store = tmp_path / "results" / "store"
    store.mkdir(parents=True)
    legacy = store / hashlib.sha256(result_key(planted).encode()).hexdigest()
    legacy.write_bytes(struct.pack("I", 0) + pickle.dumps(Canary(canary), protocol=5))
    for _ in range(3):
        assert ResultCache(tmp_path / "results").get(planted) is None
    assert not canary.exists() and legacy.exists()
    logged = [r.getMessage() for r in caplog.records if planted in r.getMessage()]
    assert len(logged) == 1 and "treated as a miss" in logged[0], logged
