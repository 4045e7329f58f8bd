"""Failure messages that tell the truth: Redis unreachable, and a run waiting for a Celery worker.

The app is served on a loopback port in this process and driven over HTTP
as the browser's renderer drives it (:class:`test_load.DashClient`).
Redis "down" is a ``REDIS_URL`` naming a loopback port nothing listens on;
the waiting run uses a real redis-server and no worker at all.
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack

import pytest
import redis

from app import create_app
from components import shell
from components.pages import scenario as scenario_page
from components.pages import workspace as workspace_page
from components.services.celery_jobs import CeleryJobManager, Heartbeat
from components.services.jobs import TAKEN, WAITING
from components.services.runs import ResultCache, ResultStoreUnreachable, redis_address
from components.services.workspace import ScenarioStore
from tests.support.dash_client import DashClient, load_scenario
from tests.support.processes import free_port, redis_server
from tests.support.served import served_app

pytestmark = pytest.mark.system   # served apps, and a redis-server for the waiting run
DEADLINE_S = 60.0


@pytest.fixture
def serve(tmp_path, monkeypatch):
    """``serve(redis_url)`` -> (base url, data dir) of the app built with that ``REDIS_URL``; stopped at the end."""
    with ExitStack() as servers:

        def start(url: str):
            monkeypatch.setenv("REDIS_URL", url)
            data = tmp_path / "data"
            base_url, _ = servers.enter_context(served_app(create_app(data)))
            return base_url, data
        yield start


def text_of(component) -> str:
    """The text of a serialised component (or a plain string)."""
    if isinstance(component, dict):
        return text_of(component.get("props", {}).get("children"))
    if isinstance(component, list):
        return "".join(text_of(c) for c in component)
    return "" if component is None else str(component)


def run_values(scenario_hash: str) -> dict:
    return {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
            (scenario_page.ids.VERSION, "data"): 0}


def test_redis_address_names_host_and_port_never_the_password():
    assert redis_address("redis://:secret@cache.example.org:6380/2") == "cache.example.org:6380"
    assert redis_address("redis://localhost/0") == "localhost:6379"
    assert redis_address("unix:///run/redis.sock") == "/run/redis.sock"


def test_the_result_cache_names_an_unreachable_redis(tmp_path):
    port = free_port()
    cache = ResultCache(tmp_path, redis_url=f"redis://127.0.0.1:{port}/0")
    for read in (lambda: cache.get("a" * 64), cache.listing):
        with pytest.raises(ResultStoreUnreachable, match=rf"the result store \(Redis at 127.0.0.1:{port}\) is unreachable"):
            read()


def test_with_redis_unreachable_a_run_says_so_and_the_server_keeps_serving_pages(serve):
    port = free_port()
    url, data = serve(f"redis://127.0.0.1:{port}/0")
    sentence = f"the result store (Redis at 127.0.0.1:{port}) is unreachable"
    scenario_hash = ScenarioStore(data / "scenarios").save(load_scenario(1), "quick")["hash"]
    client = DashClient(url, time.monotonic() + DEADLINE_S)
    client.open_page(f"/scenario/{scenario_hash}")

    # Opening the page reads the result cache: its status line says why there is no result.
    shown = client.call(client.callback(scenario_page.ids.HASH, "data"),
                        {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 0})
    assert sentence in text_of(shown[scenario_page.ids.STATUS]["children"])
    assert scenario_page.ids.TITLE not in shown, "only the status line is written"

    # Run: starting the Celery task fails at once (no 500, no twenty seconds of broker retries).
    started = time.monotonic()
    run = client.callback(scenario_page.ids.RUN, "n_clicks")
    status, body = client.request("/_dash-update-component",
                                  client.payload(run, run_values(scenario_hash), (scenario_page.ids.RUN, "n_clicks")),
                                  [("endId", client.end_id)])
    assert time.monotonic() - started < 5
    assert status == 200
    outputs = json.loads(body)["response"]
    assert sentence in text_of(outputs[scenario_page.ids.STATUS]["children"])
    assert scenario_page.ids.VERSION not in outputs

    # Other pages still load, and the Workspace listing says the same on its message line.
    for path in ("/", "/batch", "/workspace"):
        client.open_page(path)
        assert client.layout is not None
    content = client.call(client.callback(shell.LOCATION, "pathname"),
                          {(shell.LOCATION, "pathname"): "/workspace", (shell.LOCATION, "search"): ""})
    assert content[shell.CONTENT]["children"]
    listed = client.call(client.callback(workspace_page.ids.REFRESH, "n_clicks"),
                         {(workspace_page.ids.REFRESH, "n_clicks"): 1}, (workspace_page.ids.REFRESH, "n_clicks"))
    assert sentence in text_of(listed[workspace_page.ids.UPLOAD_MSG]["children"])


def poll(client: DashClient, dependency: dict, values: dict, handles: dict) -> dict:
    """One poll of a started background callback, as the renderer sends it; the response's JSON."""
    payload = client.payload(dependency, values, (scenario_page.ids.RUN, "n_clicks"))
    blank = {**payload, "inputs": [{**i, "value": None} for i in payload["inputs"]],
             "state": [{**s, "value": None} for s in payload["state"]]}
    status, body = client.request("/_dash-update-component", blank,
                                  [("endId", client.end_id), ("cacheKey", handles["cacheKey"]),
                                   ("job", handles["job"])])
    return json.loads(body) if status == 200 else {}


def status_update(response: dict) -> str:
    return text_of(response.get("sideUpdate", {}).get(scenario_page.ids.STATUS, {}).get("children"))


def seconds_in(text: str, template: str) -> int:
    """The number of seconds in ``text``, a sentence made from ``template``; fails if it is not one."""
    before, _, after = template.partition("{seconds}")
    assert text.startswith(before) and text.endswith(after), f"{text!r} is not {template!r}"
    return int(text[len(before):len(text) - len(after)])


def test_a_run_no_worker_has_taken_says_it_waits_and_how_long_then_that_a_worker_took_it(serve, tmp_path):
    with redis_server(tmp_path / "redis") as redis_url:
        url, data = serve(redis_url)
        scenario_hash = ScenarioStore(data / "scenarios").save(load_scenario(2), "queued")["hash"]
        client = DashClient(url, time.monotonic() + DEADLINE_S)
        client.open_page(f"/scenario/{scenario_hash}")
        run = client.callback(scenario_page.ids.RUN, "n_clicks")
        status, body = client.request("/_dash-update-component",
                                      client.payload(run, run_values(scenario_hash), (scenario_page.ids.RUN, "n_clicks")),
                                      [("endId", client.end_id)])
        handles = json.loads(body)
        assert "cacheKey" in handles and "job" in handles

        first = status_update(poll(client, run, run_values(scenario_hash), handles))
        assert seconds_in(first, WAITING) <= 1
        time.sleep(2.2)
        later = poll(client, run, run_values(scenario_hash), handles)
        waited = seconds_in(status_update(later), WAITING)
        assert 2 <= waited <= 5, "the wait is counted while it lasts"
        assert "response" not in later, "a queued run is not finished, nor lost"

        # A worker takes the task (its heartbeat as the real one writes it): the page is told once.
        store = redis.Redis.from_url(redis_url)
        [queued_key] = store.keys("schedscope:job:*:queued")
        job = queued_key.decode().split(":")[2]
        manager = CeleryJobManager.__new__(CeleryJobManager)
        with Heartbeat(store, manager._prefix(job), period=0.2, ttl=5, started_ttl=60):
            taken = status_update(poll(client, run, run_values(scenario_hash), handles))
            assert waited <= seconds_in(taken, TAKEN) <= waited + 2
            assert status_update(poll(client, run, run_values(scenario_hash), handles)) == ""
