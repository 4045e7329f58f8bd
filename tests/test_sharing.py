"""Per-user visibility with a login on: runs, uploads, saved scenarios and permalinks are their owners' and those
they share them with; without a login the app stays single-user."""

from __future__ import annotations

import base64
import json
import threading
import time
from contextlib import contextmanager

import pytest
from dash import DiskcacheManager

from app import create_app
from components.pages import Services
from components.pages import workspace as workspace_page
from components.pages.sweeps.store import SweepStore
from components.pages.workspace import sharing
from components.pages.workspace.callbacks import listed
from components.services import scoped
from components.services.access import (
    DAMAGED,
    EVERYONE,
    RUN,
    SCENARIO,
    UPLOAD,
    Access,
    FileGrants,
    NotAllowed,
    open_access,
)
from components.services.celery_jobs import CeleryJobManager
from components.services.jobs import CarryUser, JobManager
from components.services.login import JOB_USER, current_user
from components.services.prepared import PreparedFiles
from components.services.progress import JobStore
from components.services.runs import ResultCache
from components.services.uploads import UploadError, UploadStore
from components.services.workspace import SAMPLE_TRACES, ScenarioStore
from sched_engine import ScenarioError
from tests.support.dash_client import DEADLINE_S, DashClient, load_scenario
from tests.support.load import session
from tests.support.processes import redis_server
from tests.support.served import served_app

HEADER = "X-Forwarded-User"
HTML = {"Accept": "text/html,application/xhtml+xml"}
KEY = "ab" * 32
TRACE = (SAMPLE_TRACES / "hpc2n-excerpt.swf").read_bytes()


def tiny(seed: int = 1) -> dict:
    return load_scenario(seed, max_jobs=40)


@pytest.fixture
def proxied(tmp_path, monkeypatch):
    """An app behind a proxy that names the user in ``X-Forwarded-User``; yields ``(app, data dir, views)``.

    ``views`` are the stores as the app's pages see them, over the same data
    directory; call them inside :func:`as_user`.
    """
    monkeypatch.setenv("SCHEDSCOPE_USER_HEADER", HEADER)
    monkeypatch.delenv("SCHEDSCOPE_USERS", raising=False)
    data = tmp_path / "data"
    app = create_app(data)
    return app, data, scoped.user_services(stores(data), open_access(data), data / "uploads")


def stores(data) -> Services:
    """The app's stores over ``data``, as a single-user app (no login) sees them."""
    return Services(results=ResultCache(data / "results"), uploads=UploadStore(data / "uploads"),
                    scenarios=ScenarioStore(data / "scenarios", input_roots=(data / "uploads", SAMPLE_TRACES)),
                    sweeps=SweepStore(data / "sweeps"), prepared=PreparedFiles(data / "prepared"))


def panel(views):
    """The sharing panel's ``(options, lines, style)`` for the current user, over what they see."""
    _, *shown = sharing.state(views, views.scenarios.listing(), views.results.listing(), views.uploads.listing(),
                              views.sweeps.listing())
    return shown


@contextmanager
def as_user(app, name: str):
    with app.server.test_request_context("/", headers={HEADER: name}):
        yield


def get(app, path: str, name: str) -> int:
    return app.server.test_client().get(path, headers={**HTML, HEADER: name}).status_code


# -- the grants ---------------------------------------------------------------------------------------------------

@pytest.fixture(params=["files", pytest.param("redis", marks=pytest.mark.system)])
def access(request, tmp_path):
    """Grants in files, and in a Redis of their own."""
    if request.param == "files":
        yield Access(FileGrants(tmp_path))
        return
    with redis_server(tmp_path / "redis") as url:
        yield open_access(tmp_path, url)


def test_owners_see_an_item_and_only_they_share_it(access):
    assert access.sees(RUN, KEY, "ada") and not access.sees(RUN, KEY, None)   # no record: made before sign-in
    access.own(RUN, KEY, "ada", existed=True)                   # used again: still nobody's, seen by all
    assert access.grants(RUN, [KEY]) == {} and access.sees(RUN, KEY, "grace")
    with pytest.raises(NotAllowed, match="only an owner"):
        access.share(RUN, KEY, "ada", [])                       # nobody may hide it
    access.own(RUN, KEY, "ada")                                 # a new item: owned before it is stored
    access.own(RUN, KEY, "ada")
    assert access.grant(RUN, KEY).owners == ("ada",)
    assert access.sees(RUN, KEY, "ada") and not access.sees(RUN, KEY, "grace")
    access.own(SCENARIO, KEY, "grace")
    assert not access.sees(SCENARIO, KEY, "ada")                # kinds are apart
    with pytest.raises(NotAllowed, match="only an owner"):
        access.share(RUN, KEY, "grace", ["grace"])
    access.share(RUN, KEY, "ada", ["grace", "grace", "ada"])    # duplicates and owners dropped
    assert access.grant(RUN, KEY).shared == ("grace",)
    assert access.sees(RUN, KEY, "grace") and not access.sees(RUN, KEY, "linus")
    access.share(RUN, KEY, "ada", [EVERYONE])
    assert access.sees(RUN, KEY, "linus") and access.sees(RUN, KEY, "grace")
    access.share(RUN, KEY, "ada", [])
    assert not access.sees(RUN, KEY, "grace") and not access.sees(RUN, KEY, None)
    with pytest.raises(ValueError, match="not a user name"):
        access.share(RUN, KEY, "ada", ["two words"])
    with pytest.raises(ValueError, match="no item"):
        access.own(RUN, "../../etc/passwd", "ada")


def test_a_damaged_record_lets_nobody_see_the_item(access, tmp_path, caplog):
    access.own(UPLOAD, KEY, "ada")
    if isinstance(access.backend, FileGrants):
        (tmp_path / UPLOAD / f"{KEY}.json").write_text('{"owners": ["ada"')
    else:
        access.backend.client.hset("schedscope:access:upload", KEY, '{"owners": ["ada"')
    assert not access.sees(UPLOAD, KEY, "ada")
    assert any("damaged sharing record" in r.getMessage() for r in caplog.records)
    assert [reason for _, reason in access.skipped()] == [DAMAGED]   # listed on the Workspace page
    access.own(UPLOAD, KEY, "ada")                              # owning it again mends it
    assert access.sees(UPLOAD, KEY, "ada") and access.skipped() == []


def test_a_damaged_record_is_listed_on_the_workspace_page_with_the_sharing_panel(proxied):
    app, data, views = proxied
    with as_user(app, "ada"):
        saved = views.scenarios.save(tiny(), "ada's study")["hash"]
    (data / "access" / RUN / f"{KEY}.json").write_text("garbage")
    with served_app(app) as (url, _):
        client = DashClient(url, time.monotonic() + 60, {HEADER: "ada"})
        client.open_page("/workspace")
        refresh = (workspace_page.ids.REFRESH, "n_clicks")
        outputs = client.call(client.callback(*refresh), {refresh: 1}, refresh)
    assert f"access/{RUN}/{KEY}.json" in json.dumps(outputs[workspace_page.ids.SKIPPED]["children"])
    assert outputs[workspace_page.ids.SHARE_PANEL]["style"] == sharing.SHOWN
    assert outputs[workspace_page.ids.SHARE_ITEM]["options"] == [{"label": "Scenario · ada's study",
                                                                  "value": f"{SCENARIO}:{saved}"}]


# -- permalinks, downloads and lists --------------------------------------------------------------------------

def test_a_permalink_answers_404_to_another_user_until_it_is_shared(proxied):
    app, _, views = proxied
    with as_user(app, "ada"):
        saved = views.scenarios.save(tiny(), "ada's study")["hash"]
        result, cached = views.results.run(tiny(2))
    ran = result.scenario_hash
    download = f"/download/{ran}/summary.csv"
    assert not cached
    assert [get(app, f"/scenario/{saved}", "ada"), get(app, f"/scenario/{ran}", "ada"), get(app, download, "ada")] \
        == [200, 200, 200]
    # Another user: the same answers as for a hash that was never saved or run.
    assert [get(app, f"/scenario/{saved}", "grace"), get(app, f"/scenario/{ran}", "grace"),
            get(app, download, "grace"), get(app, f"/scenario/{KEY}", "grace")] == [404, 404, 404, 404]
    with as_user(app, "grace"):
        assert views.scenarios.listing() == [] and views.results.listing() == []
        assert views.results.get(ran) is None and views.scenarios.get(saved) is None
        assert sharing.share(views, 1, f"{SCENARIO}:{saved}", "grace", []).className == "error"   # not hers

    with as_user(app, "ada"):
        assert sharing.share(views, 1, f"{SCENARIO}:{saved}", "grace", []).children == "Shared with grace."
        assert sharing.share(views, 1, f"{RUN}:{ran}", "", [sharing.EVERYONE_CHOICE]).children \
            == "Shared with everyone signed in."
        assert sharing.chosen(views, f"{SCENARIO}:{saved}") == ("grace", [])
    assert [get(app, f"/scenario/{saved}", "grace"), get(app, f"/scenario/{saved}", "linus")] == [200, 404]
    assert [get(app, f"/scenario/{ran}", "linus"), get(app, download, "linus")] == [200, 200]
    with as_user(app, "grace"):
        assert [e["hash"] for e in views.scenarios.listing()] == [saved]
        assert [e["hash"] for e in views.results.listing()] == [ran]
        options, _, style = panel(views)
        assert options == [] and style == sharing.SHOWN      # she sees them, but owns none: nothing to share
        _, cached = views.results.run(tiny(2))                # she runs it herself: from the cache, and now hers too
        assert cached and views.access.grant(RUN, ran).owners == ("ada", "grace")
    with as_user(app, "ada"):
        options, lines, _ = panel(views)
        assert {o["value"] for o in options} == {f"{SCENARIO}:{saved}", f"{RUN}:{ran}"}
        assert "everyone signed in" in str(lines) and "shared with grace" in str(lines)


def test_an_upload_of_another_user_cannot_be_used_in_a_scenario(proxied):
    app, data, views = proxied
    with as_user(app, "ada"):
        stored = views.uploads.save(TRACE, "trace", "ada.swf")
        reference = views.uploads.reference_of(stored.name)
        mine = {**tiny(), "model": {**tiny()["model"], "trace": {"path": reference, "max_jobs": 40}}}
        views.results.run(mine)                                       # the owner uses it
    by_path = {**mine, "model": {**mine["model"], "trace": {"path": str(stored), "max_jobs": 40}}}
    with as_user(app, "grace"):
        assert views.uploads.listing() == []
        with pytest.raises(UploadError, match="not the name of a stored upload"):
            views.uploads.path_of(stored.name)
        for scenario in (mine, by_path, {**mine, "seed": 9}):
            with pytest.raises(ScenarioError, match="no upload of yours has this content") as refused:
                views.results.run(scenario)
            assert refused.value.field == "model.trace.path"
        with pytest.raises(ScenarioError, match="no upload of yours"):
            views.scenarios.save(mine, "borrowed")
        assert views.scenarios.listing() == [] and views.results.listing() == []
        views.uploads.save(TRACE, "trace", "grace.swf")             # the same bytes of her own: then she may
        assert views.results.run({**mine, "seed": 9})[0].jobs.shape[0] == 40
    assert list((data / "scenarios").glob("*.json")) == []


def test_a_scenario_file_naming_another_users_upload_is_not_saved_from_the_workspace(proxied):
    app, _, views = proxied
    with as_user(app, "ada"):
        stored = views.uploads.save(TRACE, "trace", "ada.swf")
    scenario = {**tiny(), "model": {**tiny()["model"], "trace": {"path": f"upload:{stored.name[:64]}"}}}
    contents = "data:application/json;base64," + base64.b64encode(json.dumps(scenario).encode()).decode()
    with as_user(app, "grace"):
        outputs = listed(views, None, None, contents, "borrowed.json")
    assert "Not saved" in str(outputs[4]) and "no upload of yours" in str(outputs[4]) and outputs[0] == []


# -- without a login ------------------------------------------------------------------------------------------

def test_without_a_login_everything_is_everyone_s_as_before(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDSCOPE_USER_HEADER", raising=False)
    monkeypatch.delenv("SCHEDSCOPE_USERS", raising=False)
    data = tmp_path / "data"
    app = create_app(data)
    saved = ScenarioStore(data / "scenarios").save(tiny(), "shared study")["hash"]
    client = app.server.test_client()
    assert client.get(f"/scenario/{saved}", headers=HTML).status_code == 200
    assert client.get(f"/scenario/{saved}", headers={**HTML, HEADER: "grace"}).status_code == 200
    assert not (data / "access").exists()
    with app.server.test_request_context("/"):
        services = Services(results=ResultCache(data / "results"), uploads=UploadStore(data / "uploads"),
                            scenarios=ScenarioStore(data / "scenarios"))
        outputs = listed(services, None, None, None, None)
    assert len(outputs[0]) == 1 and outputs[-1] == sharing.HIDDEN


# -- background runs carry their user ------------------------------------------------------------------------

class Recorder:
    def call_job_fn(self, key, job_fn, args, context):
        self.context = context
        return 1


class Carrying(CarryUser, Recorder):
    pass


def test_both_job_managers_write_the_user_into_the_job_context(proxied):
    assert CarryUser in JobManager.__mro__ and CarryUser in CeleryJobManager.__mro__
    app, _, _ = proxied
    manager = Carrying()
    with as_user(app, "ada"):
        manager.call_job_fn("k", None, [], {"custom_data": {"other": 1}})
    assert manager.context["custom_data"] == {"other": 1, JOB_USER: "ada"}
    with app.server.test_request_context("/"):                      # no user: nothing added
        manager.call_job_fn("k", None, [], {})
    assert "custom_data" not in manager.context


def test_a_job_finds_its_user_in_its_context_alone(tmp_path):
    """The job side, as Dash runs it (its public ``make_job_fn``, the same context for a Celery task): in a thread
    of its own, with no request, the user comes from the context the manager wrote."""
    manager = DiskcacheManager(JobStore(str(tmp_path / "jobs")))
    job = manager.make_job_fn(current_user, progress=False)
    for key, context in (("with", {"custom_data": {JOB_USER: "ada"}}), ("without", {})):
        thread = threading.Thread(target=job, args=(key, f"{key}-progress", [], context))
        thread.start()
        thread.join(30)
    assert manager.handle.get("with") == "ada" and manager.handle.get("without") is None


@pytest.mark.system
def test_a_background_run_belongs_to_the_user_who_pressed_run(proxied):
    app, data, views = proxied
    with as_user(app, "ada"):
        saved = views.scenarios.save(load_scenario(5), "ada's run")["hash"]
    with served_app(app) as (url, _):
        session(url, saved, time.monotonic() + DEADLINE_S, headers={HEADER: "ada"})
        assert views.access.grant(RUN, saved).owners == ("ada",)   # written by the job process
        with as_user(app, "grace"):
            assert views.results.get(saved) is None
        assert get(app, f"/download/{saved}/jobs.csv", "grace") == 404
        assert get(app, f"/download/{saved}/jobs.csv", "ada") == 200
