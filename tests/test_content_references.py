"""The web app names uploads by content: stored scenarios, old and new, hold no server path."""

from __future__ import annotations

import json
from pathlib import Path

from components.services.uploads import UploadStore
from components.services.workspace import ScenarioStore
from sched_engine import normalize_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[1]
SWF = (ROOT / "tests" / "data" / "batch" / "cons_vs_easy.swf").read_bytes()


def _batch(path: str) -> dict:
    return {"engine": "batch", "policy": "easy", "seed": 1, "model": {"trace": {"path": path, "label": "mine.swf"}}}


def test_an_upload_is_run_by_its_reference_in_any_process_that_has_the_store(tmp_path):
    uploads = UploadStore(tmp_path / "data" / "uploads")
    stored = uploads.save(SWF, "trace", "mine.swf")
    reference = uploads.reference_of(stored.name)
    result = run_scenario(_batch(reference))
    assert result.scenario["model"]["trace"]["path"] == reference
    assert str(tmp_path) not in json.dumps(result.scenario)
    assert normalize_scenario(_batch(str(stored))).content_hash() == result.scenario_hash


def test_a_scenario_saved_with_an_upload_path_opens_with_its_reference(tmp_path):
    data = tmp_path / "data"
    uploads = UploadStore(data / "uploads")
    stored = uploads.save(SWF, "trace", "mine.swf")
    store = ScenarioStore(data / "scenarios", input_roots=(data / "uploads", ROOT / "sample_traces"))
    entry = store.save(_batch(str(stored)), "mine")
    old = {**entry, "scenario": {**entry["scenario"], "model": {
        **entry["scenario"]["model"], "trace": {**entry["scenario"]["model"]["trace"],
                                                 "path": f"/srv/old-data/uploads/{stored.name}"}}}}
    (data / "scenarios" / f"{entry['hash']}.json").write_text(json.dumps(old))
    opened = store.get(entry["hash"])
    assert opened["scenario"]["model"]["trace"]["path"] == uploads.reference_of(stored.name)
    assert "/srv" not in json.dumps(opened) and str(tmp_path) not in json.dumps(opened)
    assert normalize_scenario(opened["scenario"]).content_hash() == entry["hash"]


def test_an_upload_reference_is_only_ever_a_hash(tmp_path):
    import pytest

    from sched_engine import ScenarioError
    from sched_engine.core.inputs import InputFiles

    data = tmp_path / "data"
    (data / "uploads").mkdir(parents=True)
    (data / "scenarios").mkdir()
    (data / "scenarios" / f"{'a' * 64}.json").write_text("{}")
    files = InputFiles([data / "uploads"])
    for forged in (f"upload:../scenarios/{'a' * 64}", "upload:*", "sample:../README.md"):
        with pytest.raises(ScenarioError):
            files.path(files.reference(forged, "trace.path"), "trace.path")
        assert not files.locate(forged).resolve().is_relative_to(data / "scenarios")
