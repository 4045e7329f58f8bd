"""The app as `make run` serves it: gunicorn, two worker processes, one client whose requests land on both.

Every worker builds its own app over one data directory: background runs,
their progress and results, uploads and the signing key are shared through
it, so a run started through one worker is polled and shown through the
other.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from components.services.workspace import ScenarioStore
from tests.support.dash_client import DEADLINE_S, load_scenario
from tests.support.load import session
from tests.support.production_server import ProductionServer

pytestmark = pytest.mark.system

def test_one_client_runs_through_two_workers(tmp_path):
    data = tmp_path / "data"
    store = ScenarioStore(data / "scenarios")
    hashes = [store.save(load_scenario(seed), f"seed {seed}")["hash"] for seed in range(1, 13)]
    server = ProductionServer(data, tmp_path / "server.log")
    try:
        for scenario_hash in hashes:   # one browser after another: each session polls its run many times
            timings = session(server.url, scenario_hash, time.monotonic() + DEADLINE_S)
            assert timings["run_s"] > 0
            polls = {pid for pid, method, path, status in server.requests()
                     if method == "POST" and path.startswith("/_dash-update-component") and "cacheKey=" in path}
            if len(polls) == 2:
                break
        assert len(polls) == 2, f"every poll landed on one worker: {server.requests()[-5:]}"
        assert all(status < 500 for *_, status in server.requests()), server.log()[-3000:]
        assert (data / "secret_key").exists()
    finally:
        server.stop()



def test_make_run_serves_through_gunicorn_and_make_dev_through_flask():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    recipes = dict(re.findall(r"^(run|dev):.*\n((?:\t.*\n)+)", makefile, re.M))
    assert "bin/gunicorn" in recipes["run"] and '"app:create_server()"' in recipes["run"]
    assert "--threads" in recipes["run"] and "$(HOST):$(PORT)" in recipes["run"]
    assert "app.py" in recipes["dev"] and "gunicorn" not in recipes["dev"]
    assert re.search(r"^HOST \?= 127\.0\.0\.1$", makefile, re.M)
