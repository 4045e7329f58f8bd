"""Site study: each organisation draft records the weighting it was made under; Run applies a newer one itself, and
the weighting put back on a visit leaves the kept tree (edits and all) as it is."""

from __future__ import annotations

import pytest

from components.pages.site import callbacks, hardware, ids, organisation, run
from components.services.uploads import UploadStore
from tests.support.callbacks import fired

SAMPLE = "hpc2n-excerpt.swf"


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def _payload(**changes) -> dict:
    return {**dict.fromkeys(callbacks.ORG_INPUTS), "name": None, "weight": None, "group": None, "item_name": None,
            "filename": None, "trace": SAMPLE, "max_jobs": 300, "weighting": "equal", **changes}


def _draft(uploads, trigger, draft, **changes) -> dict:
    with fired(trigger):
        return callbacks.organisation_edit(uploads, draft, None, **_payload(**changes))["draft"]


def test_a_run_pressed_before_the_new_weighting_lands_runs_it(uploads):
    equal = _draft(uploads, ids.TRACE, None)
    assert equal["weighting"] == "equal" and equal["for"] == [SAMPLE, 300]
    weighed = _draft(uploads, ids.WEIGHTING, equal, weighting="cpu_hours")
    assert weighed["weighting"] == "cpu_hours" and weighed["tree"] != equal["tree"]
    # Run's States still hold the equal draft while the radio says CPU-hours: it runs the CPU-hours tree.
    assert organisation.as_shown(equal, uploads, SAMPLE, 300, "cpu_hours")["tree"] == weighed["tree"]
    planned = run.plan(uploads, SAMPLE, 300, "cpu_hours", "none", [], ["fcfs"], "easy", 0, equal,
                       hardware.header_draft(uploads, SAMPLE), 2048, None)
    assert planned[0].scenario["model"]["organisation"]["tree"] == organisation.model_organisation(weighed)["tree"]
    # The draft made under the weighting on screen runs as it is.
    assert organisation.as_shown(weighed, uploads, SAMPLE, 300, "cpu_hours") is weighed


def test_the_weighting_put_back_on_a_visit_keeps_the_edited_tree(uploads):
    weighed = _draft(uploads, ids.WEIGHTING, _draft(uploads, ids.TRACE, None), weighting="cpu_hours")
    user = weighed["tree"]["children"][0]["children"][0]["name"]
    with fired(ids.EDITOR.apply):
        edited = callbacks.organisation_edit(uploads, weighed, user, **_payload(
            weighting="cpu_hours", name=user, weight="7"))["draft"]
    assert edited["weighting"] == "cpu_hours"
    # A reload: the kept choice puts the trace, cut and weighting back, and nothing is derived or re-weighed.
    assert callbacks.restore_choice(None, callbacks.remember_choice(SAMPLE, 300, "cpu_hours")) == (
        SAMPLE, 300, "cpu_hours")
    for trigger in (ids.TRACE, ids.WEIGHTING):
        with fired(trigger):
            out = callbacks.organisation_edit(uploads, edited, None, **_payload(weighting="cpu_hours"))
        assert out["draft"] is callbacks.no_update, trigger
    # Another weighting chosen for a draft of another site derives that site's organisation afresh.
    other = _draft(uploads, ids.WEIGHTING, {**edited, "for": [SAMPLE, 200]}, weighting="equal")
    assert other["for"] == [SAMPLE, 300] and "first 300 jobs" in other["origin"] and other["weighting"] == "equal"
