"""With a login on: sweeps and prepared downloads are their owners' (and those they share them with), and what was
made before the login was turned on is seen by every signed-in user and owned by nobody."""

from __future__ import annotations

import pytest

from components.pages.sweeps import callbacks as sweep_callbacks
from components.pages.sweeps import results as sweep_results
from components.pages.workspace import sharing
from components.pages.workspace.callbacks import listed
from components.pages.workspace.lists import BEFORE_SIGN_IN
from components.services.access import RUN, SCENARIO, SWEEP, UPLOAD
from sched_engine import sweeps
from tests.test_sharing import HEADER, TRACE, as_user, get, proxied, stores, tiny  # noqa: F401 (proxied: a fixture)

#: One point: a Libra run of a few applications, quick enough to run in a unit test.
ONE_POINT = {"kind": "libra-intervals", "schemes": ["libra"], "intervals": [1.0], "width": 16, "machines": 16,
             "applications": 4, "seeds": 1}


def sweep_run(spec=ONE_POINT):
    return sweeps.run_sweep(spec, executor="serial")


def download(app, href: str, name: str) -> int:
    return app.server.test_client().get(href, headers={HEADER: name}).status_code


def workspace(views):
    """The Workspace page's refresh: ``{list name: rows}`` and the sharing options."""
    outputs = listed(views, None, None, None, None)
    return {"scenarios": outputs[0], "runs": outputs[1], "uploads": outputs[2], "sweeps": outputs[3],
            "options": outputs[6]}


def test_a_sweep_is_listed_opened_and_downloaded_by_its_owner_alone_until_shared(proxied):  # noqa: F811
    app, _, views = proxied
    key = sweeps.spec_hash(ONE_POINT)
    with as_user(app, "ada"):
        views.sweeps.put(key, sweep_run())
        assert [e["hash"] for e in views.sweeps.listing()] == [key]
        assert sweep_callbacks.opened(views.sweeps, {"key": key})[0] == {"key": key, "run": 0}
        name, text = sweep_results.export_csv(views.sweeps, {"key": key}, "points")
        href = views.prepared.put(text, name)
        assert workspace(views)["options"] == [{"label": "Sweep · Libra over arrival intervals",
                                                "value": f"{SWEEP}:{key}"}]
    assert download(app, href, "ada") == 200
    assert download(app, href, "grace") == 404                  # a prepared file is its preparer's alone

    with as_user(app, "grace"):
        assert views.sweeps.listing() == [] and workspace(views)["sweeps"] == []
        assert views.sweeps.get(key) is None and not views.sweeps.has(key)
        last, message = sweep_callbacks.opened(views.sweeps, {"key": key})   # a /sweeps?sweep=<key> link
        assert last is sweep_callbacks.no_update and "No sweep of yours" in str(message)
        assert sweep_results.results(views.sweeps, {"key": key}, None)[3] == "No sweep yet."
        assert sweep_results.export_csv(views.sweeps, {"key": key}, "points") is None
        assert sharing.share(views, 1, f"{SWEEP}:{key}", "grace", []).className == "error"   # not hers to share

    with as_user(app, "ada"):
        assert sharing.share(views, 1, f"{SWEEP}:{key}", "grace", []).children == "Shared with grace."
    with as_user(app, "grace"):
        [row] = workspace(views)["sweeps"]
        assert row["sweep"] == f"[Libra over arrival intervals](/sweeps?sweep={key})" and row["points"] == 1
        assert sweep_callbacks.opened(views.sweeps, {"key": key})[0] == {"key": key, "run": 0}
        name, text = sweep_results.export_csv(views.sweeps, {"key": key}, "points")
        mine = views.prepared.put(text, name)
    assert download(app, mine, "grace") == 200 and download(app, mine, "ada") == 404
    with as_user(app, "linus"):
        assert views.sweeps.get(key) is None
        # Asking for the same sweep makes it his too, from the store (as a cached run does).
        _, record, cached = views.sweeps.run(ONE_POINT, progress=None)
        assert cached and len(record["table"]) == 1
    assert views.access.grant(SWEEP, key).owners == ("ada", "linus")


def test_what_was_made_before_sign_in_is_seen_by_every_signed_in_user_and_owned_by_nobody(proxied):  # noqa: F811
    app, data, views = proxied
    before = stores(data)                      # the single-user app of yesterday, on the same data directory
    saved = before.scenarios.save(tiny(), "old study")["hash"]
    ran = before.results.run(tiny(2))[0].scenario_hash
    stored = before.uploads.save(TRACE, "trace", "old.swf")
    swept = sweeps.spec_hash(ONE_POINT)
    before.sweeps.put(swept, sweep_run())
    with as_user(app, "ada"):
        new = views.scenarios.save(tiny(3), "ada's new study")["hash"]

    for user in ("ada", "grace"):
        with as_user(app, user):
            shown = workspace(views)
            names = [row["name"] for row in shown["scenarios"]]
            assert f"[old study{BEFORE_SIGN_IN}](/scenario/{saved})" in names
            assert [row["run"].split("](")[0].endswith(BEFORE_SIGN_IN) for row in shown["runs"]] == [True]
            assert [row["file"] for row in shown["uploads"]] == [f"old.swf{BEFORE_SIGN_IN}"]
            assert BEFORE_SIGN_IN in shown["sweeps"][0]["sweep"]
            assert views.sweeps.get(swept) is not None and views.uploads.path_of(stored.name) == stored
            # Nobody owns them: they are never offered for sharing, and sharing one is refused.
            assert not {o["value"] for o in shown["options"]} & {f"{SCENARIO}:{saved}", f"{RUN}:{ran}"}
            assert sharing.share(views, 1, f"{RUN}:{ran}", "", []).className == "error"
    assert [get(app, f"/scenario/{saved}", "grace"), get(app, f"/download/{ran}/summary.csv", "linus")] == [200, 200]
    assert [get(app, f"/scenario/{new}", "ada"), get(app, f"/scenario/{new}", "grace")] == [200, 404]   # new: owned

    with as_user(app, "grace"):                # using them again leaves them nobody's, seen by everyone
        assert views.results.run(tiny(2))[1]
        views.uploads.save(TRACE, "trace", "grace.swf")
        views.scenarios.save(tiny(), "old study")
        views.sweeps.run(ONE_POINT, progress=None)
    for kind, key in ((RUN, ran), (UPLOAD, stored.name[:64]), (SCENARIO, saved), (SWEEP, swept)):
        assert views.access.grants(kind, [key]) == {}, kind
    with as_user(app, "linus"):
        assert len(views.results.listing()) == 1 and len(views.sweeps.listing()) == 1


def test_without_a_login_prepared_files_and_sweeps_are_everyone_s(tmp_path):
    plain = stores(tmp_path / "data")
    key = sweeps.spec_hash(ONE_POINT)
    plain.sweeps.put(key, sweep_run())
    assert [e["hash"] for e in plain.sweeps.listing()] == [key] and plain.sweeps.has(key)
    href = plain.prepared.put("a\n1\n", "x.csv")
    assert plain.prepared.path(href.split("/")[2]) is not None
    assert plain.prepared.path(href.split("/")[2], owner="ada") is None


@pytest.mark.parametrize("damaged", ["{", '{"spec": {"kind": "no-such-kind"}}'])
def test_an_unreadable_sweep_file_is_left_out_of_the_listing(tmp_path, damaged):
    plain = stores(tmp_path / "data")
    plain.sweeps.directory.mkdir(parents=True)
    (plain.sweeps.directory / f"{'ab' * 32}.json").write_text(damaged)
    assert plain.sweeps.listing() == []
