"""Calibrate on an uploaded log from the Sweeps page: the upload's reference, its owner, a missing or forged one."""

from __future__ import annotations

import pytest
from dash import no_update

from components.pages import sweeps as page
from components.services import scoped
from components.services.access import Access, FileGrants
from components.services.uploads import UploadStore
from sched_engine import ScenarioError, sweeps
from tests.support.sweeps_form import calibrate_form

# One 4-CPU machine (the header's); job 1 holds it 0-100, job 2 (4 CPUs) starts when it ends, job 3 (2 CPUs)
# when job 2 ends: the log's waits are 0, 90 and 180 s, mean 90 s. EASY with the users' estimates (exact here)
# replays exactly that: off by 0%, every job within 10 minutes, Spearman 1.
LOG = """; MaxNodes: 4
; MaxProcs: 4
1 0 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
2 10 90 100 4 -1 -1 4 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 180 50 2 -1 -1 2 50 -1 1 3 1 -1 1 -1 -1 -1
"""
TRACE = {"type": page.ids.PARAM, "kind": "calibrate", "name": "trace"}


class User:
    """Who is signed in (``name``), as the scoped views ask it."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self) -> str:
        return self.name


@pytest.fixture
def site(tmp_path):
    """``(uploads, sweeps, user, reference)``: ada's views of the stores, her uploaded log's reference."""
    access = Access(FileGrants(tmp_path / "access"))
    user = User("ada")
    uploads = scoped.UserUploads(UploadStore(tmp_path / "uploads"), access, user)
    stored = scoped.UserSweeps(page.store.SweepStore(tmp_path / "sweeps"), access, user)
    saved = uploads.save(LOG.encode(), "trace", "site-log.swf")
    return uploads, stored, user, uploads.reference_of(saved.name)


def test_an_uploaded_log_is_calibrated_and_the_page_says_which_setting_fits_best(site):
    uploads, stored, _, reference = site
    options, value, message = page.callbacks.workload_choices(uploads, "calibrate", reference)
    assert options[-1]["value"] == reference and options[-1]["label"].startswith("site-log.swf (uploaded ")
    assert [o["value"] for o in options[:2]] == list(page.form.SAMPLE_TRACES)
    assert value is no_update and message is no_update
    ids, values = calibrate_form(trace=reference, estimates=["trace", "perfect"], allocation=["cpus"],
                                 priorities=[False], running_jobs_limits="0, 1")
    text, fine = page.form.preview("calibrate", ids, values, page.callbacks.allowed_uploads(uploads))
    assert fine and text.startswith("4 points")
    seen = []
    key, message, cached = page.store.run_form(stored, "calibrate", ids, values, lambda d, t: seen.append(d),
                                               page.callbacks.allowed_uploads(uploads))
    assert not cached and message.startswith("4 runs in") and seen[-1] == 4
    record = stored.get(key)
    assert record["spec"]["trace"] == reference   # the upload by content: no path of this machine in the spec
    sentence = page.results.verdict(stored, {"key": key}, page.form.upload_labels(uploads))
    assert sentence == ("site-log.swf (3 jobs compared), EASY: Best: trace estimates, cpus, queue priorities off, "
                        "no user limit -- simulated mean wait 90 s vs the log's 90 s (off by 0%), 100% within 10 min, "
                        "Spearman 1.00; the reference setting is already the best.")
    # Another kind's sweep has no such sentence.
    assert page.results.verdict(stored, None, {}) == ""


def test_another_users_upload_cannot_be_calibrated_by_its_reference(site):
    uploads, stored, user, reference = site
    ids, values = calibrate_form(trace=reference, allocation=["cpus"], priorities=[False], running_jobs_limits="0")
    key = page.store.run_form(stored, "calibrate", ids, values, lambda d, t: None,
                              page.callbacks.allowed_uploads(uploads))[0]
    user.name = "grace"
    # Her choices hold no upload of ada's; the link's reference gives way to the default sample, with the same
    # words as for an upload nobody stored (a guessed hash tells nothing).
    options, value, message = page.callbacks.workload_choices(uploads, "calibrate", reference)
    assert reference not in [o["value"] for o in options] and value == "hpc2n-excerpt.swf"
    unknown = page.callbacks.workload_choices(uploads, "calibrate", "upload:" + "0" * 64)[2]
    assert str(message).replace(reference[:19], "?") == str(unknown).replace("upload:" + "0" * 12, "?")
    assert "none of your uploaded traces, or is no longer stored" in str(message)
    # A forged form value is refused before anything runs; ada's gathered sweep answers as never run.
    with pytest.raises(ScenarioError, match="Workload \\(with recorded waits\\): .* is not one of the choices"):
        page.store.run_form(stored, "calibrate", ids, values, lambda d, t: pytest.fail("ran"),
                            page.callbacks.allowed_uploads(uploads))
    assert stored.get(key) is None
    assert page.results.verdict(stored, {"key": key}, {}) == ""
    user.name = "ada"
    assert stored.get(key) is not None


def test_an_upload_no_longer_stored_is_named_and_nothing_runs(site, tmp_path):
    uploads, stored, _, _ = site
    # Content of its own: every upload store of this process is searched for a reference (the other tests' too).
    saved = uploads.save(f"{LOG}; {tmp_path}\n".encode(), "trace", "gone.swf")
    reference = uploads.reference_of(saved.name)
    ids, values = calibrate_form(trace=reference, allocation=["cpus"], priorities=[False], running_jobs_limits="0")
    saved.unlink()
    with pytest.raises(ScenarioError, match="is not stored here \\(any more\\); upload it again"):
        page.store.run_form(stored, "calibrate", ids, values, lambda d, t: pytest.fail("ran"),
                            (reference,))
    assert list((tmp_path / "sweeps").glob("*.json")) == []


def test_a_log_without_recorded_waits_says_so(tmp_path):
    log = tmp_path / "no-waits.swf"
    log.write_text("\n".join(" ".join(["-1" if i == 2 else field for i, field in enumerate(line.split())])
                             if not line.startswith(";") else line for line in LOG.splitlines()) + "\n")
    ranked = sweeps.run_sweep({"kind": "calibrate", "trace": str(log), "estimates": ["trace"], "allocation": ["cpus"],
                               "priorities": [False], "running_jobs_limits": [0, 1]}, executor="serial").summary()
    assert ranked["compared_jobs"].tolist() == [0, 0]
    assert sweeps.calibrate.verdict(ranked).startswith("the log records no wait times")
