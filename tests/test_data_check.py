"""Unreadable files in the data directory: the app starts, skips them, logs each once and lists them on Workspace.

Files are planted in a fresh data directory (a truncated saved scenario, a
JSON file that is no scenario, a damaged index entry, a result that is not
a bundle, a damaged upload label, a jobs' database that is not a database);
then the app is built and served, and the Workspace page's listing is asked
for over HTTP as the browser asks for it.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

from app import create_app
from components.pages import workspace as workspace_page
from components.services import data_check
from components.services.runs import ResultCache
from components.services.uploads import UploadStore
from components.services.workspace import ScenarioStore
from tests.support.dash_client import DashClient, load_scenario
from tests.support.served import served_app

pytestmark = pytest.mark.system   # a served app
TRUNCATED = "a" * 64
NOT_A_SCENARIO = "b" * 64
DAMAGED_INDEX = "c" * 64
GARBAGE_RESULT = "e" * 64


@pytest.fixture(autouse=True)
def fresh_log_memory(monkeypatch):
    monkeypatch.setattr(data_check, "_logged", set())
    monkeypatch.delenv("REDIS_URL", raising=False)


def plant(data) -> tuple[str, bytes]:
    """Unreadable files beside one good scenario and one good upload; returns the good scenario's hash and
    the good upload's bytes."""
    scenarios = ScenarioStore(data / "scenarios")
    good = scenarios.save(load_scenario(1), "good")
    whole = (data / "scenarios" / f"{good['hash']}.json").read_bytes()
    (data / "scenarios" / f"{TRUNCATED}.json").write_bytes(whole[: len(whole) // 2])
    (data / "scenarios" / f"{NOT_A_SCENARIO}.json").write_text(json.dumps({"hash": NOT_A_SCENARIO, "name": "x"}))
    index, store = data / "results" / "index", data / "results" / "store"
    index.mkdir(parents=True)
    store.mkdir(parents=True)
    (index / f"{DAMAGED_INDEX}.json").write_text('{"hash": "' + DAMAGED_INDEX)
    (index / f"{GARBAGE_RESULT}.json").write_text(json.dumps(
        {"hash": GARBAGE_RESULT, "engine": "batch", "policy": "easy", "name": "junk", "seed": 0,
         "finished": "2026-01-01T00:00:00", "wall_seconds": 1.0, "jobs": 3}))
    (store / f"{GARBAGE_RESULT}.parquet.zip").write_bytes(b"\x00garbage" * 100)
    uploads = UploadStore(data / "uploads")
    upload = b"1 seth 120 2 1.0 x86_64\n"
    stored = uploads.save(upload, "machines", "mine.machines")
    stored.with_name(stored.name + ".meta.json").write_text('{"label": "mi')
    (data / "callbacks").mkdir()
    (data / "callbacks" / "cache.db").write_bytes(b"not a database " * 200)
    return good["hash"], upload


def expected_files(data) -> dict[str, str]:
    aside = next(p.name for p in data.iterdir() if data_check.SET_ASIDE in p.name)
    return {f"scenarios/{TRUNCATED}.json": "not valid JSON, truncated or damaged",
            f"scenarios/{NOT_A_SCENARIO}.json": "not a saved scenario",
            f"results/index/{DAMAGED_INDEX}.json": "damaged index entry",
            f"results/store/{GARBAGE_RESULT}.parquet.zip": "not a result bundle",
            next(f"uploads/{p.name}" for p in (data / "uploads").glob("*.meta.json")): "damaged label file",
            aside: "set aside"}


def test_unreadable_files_are_skipped_logged_once_and_listed_on_the_workspace_page(tmp_path, caplog):
    data = tmp_path / "data"
    good, upload = plant(data)
    with caplog.at_level(logging.WARNING):
        app = create_app(data)                      # starts despite every planted file
    with served_app(app) as (base_url, _):
        client = DashClient(base_url, time.monotonic() + 60)
        client.open_page("/workspace")
        with caplog.at_level(logging.WARNING):
            tables = [client.call(client.callback(workspace_page.ids.REFRESH, "n_clicks"),
                                  {(workspace_page.ids.REFRESH, "n_clicks"): n}, (workspace_page.ids.REFRESH, "n_clicks"))
                      for n in (1, 2)]

    expected = expected_files(data)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped ")]
    for name, reason in expected.items():
        mine = [line for line in lines if line.startswith(f"skipped {name}: ")]
        assert len(mine) == 1, f"{name} logged {len(mine)} times: {lines}"
        assert reason in mine[0]
    assert len(lines) == len(expected), lines

    outputs = tables[-1]
    shown = json.dumps(outputs[workspace_page.ids.SKIPPED]["children"])
    for name, reason in expected.items():
        assert f"skipped: {name}, " in shown and reason in shown
    # The readable ones are listed as before; the unreadable ones are not.
    assert [row["name"] for row in outputs[workspace_page.ids.SCENARIOS]["data"]] == [f"[good](/scenario/{good})"]
    assert outputs[workspace_page.ids.RUNS]["data"] == [], "a result that is no bundle is not a finished run"
    [row] = outputs[workspace_page.ids.UPLOADS]["data"]
    assert row["kind"] == "machines" and row["size (bytes)"] == len(upload)
    # The set-aside jobs' store was replaced by a working one.
    assert (data / "callbacks" / "cache.db").exists()


def test_a_clean_data_directory_lists_nothing_skipped(tmp_path):
    data = tmp_path / "data"
    ScenarioStore(data / "scenarios").save(load_scenario(1), "good")
    stores = (ScenarioStore(data / "scenarios"), ResultCache(data / "results"), UploadStore(data / "uploads"))
    assert data_check.skipped_files(data, *stores) == []
    assert workspace_page.lists.skipped_section([]) == []
