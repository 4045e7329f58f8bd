"""Concurrent sessions against a served app: each one opens a scenario's permalink, runs it and shows the result.

Each session does what the browser's renderer does for a scenario permalink,
over plain HTTP (:class:`~tests.support.dash_client.DashClient`): load the
page (``/scenario/<hash>``), its layout and callback list, route to the
scenario page, show it, press Run (a background callback: the first POST
returns signed ``cacheKey``/``job`` handles, then the same request is polled
with them until the response carries the outputs), and show the page again
with the result. Every request is bounded in time, and each session by a
deadline. ``tests/test_load.py`` runs a few sessions for behaviour;
``bench/load.py`` runs 50 through the production server and prints the figures.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from components import shell
from components.figures import catalogue
from components.pages import scenario as scenario_page
from components.services.workspace import ScenarioStore
from tests.support.dash_client import DashClient, find_component, load_scenario


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def session(base_url: str, scenario_hash: str, deadline: float, headers: dict | None = None,
            jobs: int = 300) -> dict:
    """One user: open the permalink, show the scenario, Run it, show the result (``jobs`` rows). Returns timings."""
    started = time.monotonic()
    client = DashClient(base_url, deadline, headers)
    path = f"/scenario/{scenario_hash}"
    client.open_page(path)
    content = client.call(client.callback(shell.LOCATION, "pathname"),
                          {(shell.LOCATION, "pathname"): path, (shell.LOCATION, "search"): ""})
    page = content[shell.CONTENT]["children"]
    assert find_component(page, scenario_page.ids.URL_HASH)["props"]["data"] == scenario_hash
    body = client.call(client.callback(scenario_page.ids.URL_HASH, "data"),
                       {(scenario_page.ids.URL_HASH, "data"): scenario_hash})
    assert find_component(body[scenario_page.ids.BODY]["children"], scenario_page.ids.HASH)["props"]["data"] \
        == scenario_hash
    show = client.callback(scenario_page.ids.HASH, "data")
    before = client.call(show, {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 0})
    assert before[scenario_page.ids.SUMMARY]["data"] == [], "the scenario must not be cached before its run"
    clicked = time.monotonic()
    progress = []
    outputs = client.run_background(
        client.callback(scenario_page.ids.RUN, "n_clicks"),
        {(scenario_page.ids.RUN, "n_clicks"): 1, (scenario_page.ids.HASH, "data"): scenario_hash,
         (scenario_page.ids.VERSION, "data"): 0},
        (scenario_page.ids.RUN, "n_clicks"), on_progress=progress.append)
    finished = time.monotonic()
    assert outputs.get(scenario_page.ids.VERSION) == {"data": 1}, f"the run did not finish: {outputs}"
    after = client.call(show, {(scenario_page.ids.HASH, "data"): scenario_hash, (scenario_page.ids.VERSION, "data"): 1})
    rows = {row["Metric"]: row["Value"] for row in after[scenario_page.ids.SUMMARY]["data"]}
    assert rows[catalogue.label("jobs", "batch")] == catalogue.formatted("jobs", jobs, "batch")
    return {"run_s": finished - clicked, "session_s": time.monotonic() - started, "progress_reports": len(progress)}


def concurrent_sessions(base_url: str, data, count: int, deadline: float) -> tuple[list[str], list, float]:
    """Save ``count`` load scenarios (seeds 1..count) and run one :func:`session` per scenario, all at once.

    Returns the scenario hashes, each session's outcome (its timings, or the
    exception it raised) and the wall seconds of the whole.
    """
    store = ScenarioStore(data / "scenarios")
    hashes = [store.save(load_scenario(seed), f"load seed {seed}")["hash"] for seed in range(1, count + 1)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(session, base_url, h, deadline) for h in hashes]
        outcomes = []
        for future in futures:
            try:
                outcomes.append(future.result(timeout=max(1.0, deadline - time.monotonic() + 5)))
            except Exception as exc:  # noqa: BLE001 -- every failure is collected and reported by the caller
                outcomes.append(exc)
    return hashes, outcomes, time.monotonic() - started
