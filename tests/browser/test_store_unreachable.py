"""With ``REDIS_URL`` naming a Redis that does not answer, pages load and say why nothing can run.

No Redis is needed: the URL names a loopback port nothing listens on.
"""

import time

import pytest

from app import create_app
from components.pages import batch as batch_page
from components.pages import scenario as page
from components.services.workspace import ScenarioStore, permalink
from tests.support.dash_client import load_scenario
from tests.support.processes import free_port

pytestmark = pytest.mark.browser
TIMEOUT = 60


def test_an_unreachable_redis_is_named_on_the_page_and_pages_keep_loading(dash_duo, tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    sentence = f"the result store (Redis at 127.0.0.1:{port}) is unreachable"
    data = tmp_path / "data"
    scenario_hash = ScenarioStore(data / "scenarios").save(load_scenario(1), "quick")["hash"]
    dash_duo.start_server(create_app(data))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}{permalink(scenario_hash)}")
    dash_duo.wait_for_contains_text(f"#{page.ids.STATUS}", sentence, timeout=TIMEOUT)

    dash_duo.find_element(f"#{page.ids.RUN}").click()   # the run callback answers with the same sentence (no 500)
    dash_duo.wait_for_contains_text(f"#{page.ids.STATUS}", sentence, timeout=TIMEOUT)
    deadline = time.monotonic() + TIMEOUT
    while not dash_duo.find_element(f"#{page.ids.RUN}").is_enabled():   # the run has ended: Run is offered again
        assert time.monotonic() < deadline, "Run stayed disabled"
        time.sleep(0.1)

    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    dash_duo.wait_for_contains_text(f"#{batch_page.ids.TRACE_INFO}", "hpc2n-excerpt.swf", timeout=TIMEOUT)
    logs = dash_duo.get_logs()
    assert logs == [], "\n".join(entry["message"][:600] for entry in logs)
