"""At most N runs at once per client (``SCHEDSCOPE_MAX_RUNS_PER_CLIENT``); one more is refused with a sentence.

The app is served in this process (embedded manager: each run a forked job
process) and driven over HTTP as the renderer drives it. Runs are long
enough (local search on 1,500 HPC2N jobs) to still be going while the next
one is asked for; every job process is killed at the end.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from app import create_app
from components.pages import scenario as scenario_page
from components.services.run_cap import CLIENT_COOKIE, REFUSED, max_runs_per_client
from components.services.workspace import ScenarioStore
from tests.support.dash_client import CallbackFailed, DashClient
from tests.support.served import served_app

pytestmark = pytest.mark.system   # a served app and forked job processes
REFUSED_START = REFUSED.split("{count}")[0]


def long_run(seed: int) -> dict:
    return {"engine": "batch", "policy": "ls", "seed": seed, "name": f"long {seed}",
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 1500},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines"}}


class CookieClient(DashClient):
    """A session that sends a client cookie, as a browser does after its first page."""

    def __init__(self, base_url: str, cookie: str):
        super().__init__(base_url, time.monotonic() + 120)
        self.cookie = cookie

    def request(self, path, body=None, args=None):
        url = self.base_url + path + ("?" + urllib.parse.urlencode(args) if args else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Cookie": f"{CLIENT_COOKIE}={self.cookie}", **({"Content-Type": "application/json"} if data else {})}
        request = urllib.request.Request(url, data=data, method="POST" if data else "GET", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout()) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            raise CallbackFailed(f"{exc.code} from {path}") from None


@pytest.fixture
def capped(tmp_path, monkeypatch):
    """(base url, scenario hashes, job processes()) of the app with a cap of 2 runs per client."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("SCHEDSCOPE_MAX_RUNS_PER_CLIENT", "2")
    data = tmp_path / "data"
    store = ScenarioStore(data / "scenarios")
    hashes = [store.save(long_run(seed), f"long {seed}")["hash"] for seed in range(1, 6)]
    with served_app(create_app(data)) as (url, job_processes):
        yield url, hashes, job_processes


def start_run(client: DashClient, scenario_hash: str) -> dict:
    """Press Run for ``scenario_hash`` (no polling): the handles of a started run, or the refusal's outputs."""
    run = client.callback(scenario_page.ids.RUN, "n_clicks")
    values = {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
              (scenario_page.ids.VERSION, "data"): 0}
    status, body = client.request("/_dash-update-component", client.payload(run, values, (scenario_page.ids.RUN, "n_clicks")),
                                  [("endId", client.end_id)])
    assert status == 200
    return json.loads(body)


def refusal(answer: dict) -> str:
    return json.dumps(answer.get("response", {}).get(scenario_page.ids.STATUS, {}))


def test_the_cap_reads_its_setting():
    assert max_runs_per_client({}) == 4
    assert max_runs_per_client({"SCHEDSCOPE_MAX_RUNS_PER_CLIENT": "0"}) == 0
    with pytest.raises(ValueError, match="SCHEDSCOPE_MAX_RUNS_PER_CLIENT"):
        max_runs_per_client({"SCHEDSCOPE_MAX_RUNS_PER_CLIENT": "-1"})


def test_a_browser_gets_a_client_cookie_with_its_page(capped):
    url, _, _ = capped
    with urllib.request.urlopen(url + "/", timeout=30) as response:
        assert CLIENT_COOKIE in response.headers.get("Set-Cookie", "")


def test_one_run_more_than_the_cap_is_refused_at_once_and_a_freed_place_is_reused(capped):
    url, hashes, job_processes = capped
    browser = CookieClient(url, "browser-one")
    browser.open_page(f"/scenario/{hashes[0]}")
    assert "cacheKey" in start_run(browser, hashes[0])
    assert "cacheKey" in start_run(browser, hashes[1])
    mine = job_processes()
    assert len(mine) == 2

    started = time.monotonic()
    third = start_run(browser, hashes[2])
    assert time.monotonic() - started < 5 and "cacheKey" not in third
    assert REFUSED_START in refusal(third) and "2 runs going" in refusal(third)
    browser.open_page(f"/scenario/{hashes[2]}")          # another tab of the same browser: the same count
    assert REFUSED_START in refusal(start_run(browser, hashes[2]))

    other = DashClient(url, time.monotonic() + 120)     # another client (a script: counted per page load)
    other.open_page(f"/scenario/{hashes[3]}")
    assert "cacheKey" in start_run(other, hashes[3])

    mine[0].kill()                                       # one of the browser's runs ends
    mine[0].wait(30)
    assert "cacheKey" in start_run(browser, hashes[4])


def test_stale_client_lists_are_removed_and_live_ones_kept(tmp_path):
    """Clients come and go (a script is a client per page load): lists untouched for a day that count no
    running job are removed, with the per-client lock files of earlier versions; every list shares one lock."""
    from components.services.data_check import open_job_store
    from components.services.jobs import CLIENT_LIST_SECONDS, CLIENTS_LOCK, JobManager

    manager = JobManager(open_job_store(tmp_path / "callbacks"))
    manager.cap = 4
    clients = tmp_path / "run-clients"
    clients.mkdir()
    day_ago = time.time() - CLIENT_LIST_SECONDS - 60
    lists = {"gone": [{"token": "a", "job": "999999999", "at": day_ago}], "empty": [],
             "running": [{"token": "b", "job": str(os.getpid()), "at": day_ago}],
             "recent": [{"token": "c", "job": "999999999", "at": time.time()}]}
    for name, entries in lists.items():
        (clients / f"{name}.json").write_text(json.dumps(entries))
        (clients / f"{name}.lock").write_text("")
        if name != "recent":
            os.utime(clients / f"{name}.json", (day_ago, day_ago))
            os.utime(clients / f"{name}.lock", (day_ago, day_ago))

    manager._reserve("newcomer", "t")
    assert sorted(p.name for p in clients.iterdir()) == [
        CLIENTS_LOCK, "newcomer.json", "recent.json", "recent.lock", "running.json"]
    os.utime(clients / "recent.json", (day_ago, day_ago))
    manager._reserve("newcomer", "u")   # looked at again only every ten minutes: kept for now
    assert (clients / "recent.json").exists()
