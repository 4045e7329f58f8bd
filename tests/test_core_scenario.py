"""Scenario envelope checks, canonical hashing, result immutability."""

import json
from pathlib import Path

import pandas as pd
import pytest

from sched_engine import ScenarioError, normalize_scenario, run_scenario
from sched_engine.core import Scenario, SimulationResult, content_hash
from sched_engine.fairshare.presets import starter_model


def _scenario(**overrides):
    data = {"engine": "fairshare", "policy": "mch", "model": starter_model(), "seed": 0}
    data.update(overrides)
    return data


def test_hash_ignores_key_order_number_spelling_and_name():
    first = normalize_scenario(_scenario(name="a"))
    reordered = json.loads(json.dumps(_scenario(name="b"), sort_keys=True))
    reordered["model"]["resources"][0]["capacity"] = 100  # int instead of 100.0
    second = normalize_scenario(reordered)
    assert first.content_hash() == second.content_hash()


def test_hash_changes_with_policy_params_model_and_seed():
    base = normalize_scenario(_scenario()).content_hash()
    assert normalize_scenario(_scenario(policy="hdrf")).content_hash() != base
    assert normalize_scenario(_scenario(seed=1)).content_hash() != base
    model = starter_model()
    model["resources"][0]["capacity"] = 99.0
    assert normalize_scenario(_scenario(model=model)).content_hash() != base


def test_defaults_of_a_policy_are_part_of_the_normalised_scenario():
    scenario = normalize_scenario(_scenario(policy="c-ch"))
    assert scenario.policy_params == {"resource": "cpu"}


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"engine": "nope"}, "engine"),
        ({"policy": "nope"}, "policy"),
        ({"seed": -1}, "seed"),
        ({"model": []}, "model"),
        ({"colour": "red"}, "colour"),
        ({"policy_params": {"bogus": 1}}, "policy_params.bogus"),
        ({"policy_params": [1]}, "policy_params"),
    ],
)
def test_bad_envelopes_name_their_field(overrides, field):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario(_scenario(**overrides))
    assert caught.value.field == field


def test_non_finite_numbers_cannot_be_hashed():
    with pytest.raises(ScenarioError, match="non-finite"):
        content_hash({"x": float("nan")})


def test_scenario_round_trips_through_dict():
    scenario = normalize_scenario(_scenario(name="demo"))
    assert Scenario.from_dict(scenario.to_dict()) == scenario


def test_result_is_immutable_and_round_trips_through_json():
    result = run_scenario(_scenario())
    with pytest.raises(AttributeError):
        result.scenario_hash = "x"
    frame = result.jobs
    frame.loc[0, "status"] = "tampered"
    assert result.jobs.loc[0, "status"] != "tampered"
    again = SimulationResult.from_json(result.to_json())
    for name in ("jobs", "timeline", "summary"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(result, name), check_dtype=False)
    assert again.scenario_hash == result.scenario_hash


def test_a_file_named_by_content_hashes_the_same_by_any_path(tmp_path):
    relative = "sample_traces/hpc2n-excerpt.swf"
    absolute = str(Path(relative).resolve())
    copy = tmp_path / "hpc2n-excerpt.swf"
    copy.write_bytes(Path(relative).read_bytes())
    hashes = {normalize_scenario({"engine": "batch", "policy": "easy", "model": {"trace": {"path": path}}})
              .content_hash() for path in (relative, absolute, str(copy))}
    assert len(hashes) == 1
    changed = tmp_path / "changed" / "hpc2n-excerpt.swf"
    changed.parent.mkdir()
    changed.write_bytes(Path(relative).read_bytes() + b"\n; one more comment line\n")
    other = normalize_scenario({"engine": "batch", "policy": "easy", "model": {"trace": {"path": str(changed)}}})
    assert other.content_hash() not in hashes


def test_a_result_is_keyed_by_the_code_that_computes_it(monkeypatch):
    from sched_engine.core import scenario as scenario_module

    normal = normalize_scenario({"engine": "fairshare", "policy": "drf", "model": starter_model()})
    before = normal.content_hash()
    assert scenario_module.code_version("fairshare") != scenario_module.code_version("batch")
    monkeypatch.setattr(scenario_module, "code_version", lambda engine: "an edited engine")
    assert normal.content_hash() != before


@pytest.mark.parametrize("value, message", [(0, "must be greater than 0, got 0"), ("abc", "must be a number")])
def test_a_bad_policy_parameter_is_refused_before_the_run(value, message):
    """Local Search with interval_s 0 divided by zero, with "abc" raised TypeError, both inside the run."""
    scenario = {"engine": "batch", "policy": "ls", "policy_params": {"interval_s": value},
                "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 10}}}
    for call in (normalize_scenario, run_scenario):
        with pytest.raises(ScenarioError, match=message) as caught:
            call(scenario)
        assert caught.value.field == "policy_params.interval_s"


# --- files named by content -------------------------------------------------------------------------------

SWF = Path(__file__).parent / "data" / "batch" / "cons_vs_easy.swf"


def _batch(path: str, **trace) -> dict:
    return {"engine": "batch", "policy": "easy", "model": {"trace": {"path": path, **trace}}, "seed": 1}


def test_samples_and_uploads_become_references_and_no_scenario_holds_a_path(tmp_path):
    from hashlib import sha256

    from sched_engine.core.inputs import InputFiles

    uploads = tmp_path / "data" / "uploads"
    uploads.mkdir(parents=True)
    sha = sha256(SWF.read_bytes()).hexdigest()
    (uploads / f"{sha}.trace").write_bytes(SWF.read_bytes())
    files = InputFiles([uploads])
    sample = normalize_scenario(_batch(str(Path("sample_traces/hpc2n-excerpt.swf").resolve())), inputs=files)
    assert sample.model["trace"]["path"] == "sample:hpc2n-excerpt.swf"
    upload = normalize_scenario(_batch(str(uploads / f"{sha}.trace"), label="mine.swf"), inputs=files)
    assert upload.model["trace"]["path"] == f"upload:{sha}" and upload.model["trace"]["label"] == "mine.swf"
    by_reference = normalize_scenario(_batch(f"upload:{sha}", label="mine.swf"), inputs=files)
    assert by_reference.content_hash() == upload.content_hash()
    result = run_scenario(upload, inputs=files)
    text = result.to_json()
    assert str(tmp_path) not in text and str(Path.cwd()) not in text
    assert json.loads(text)["scenario"]["model"]["trace"]["path"] == f"upload:{sha}"


def test_a_scenario_stored_with_an_upload_path_opens_on_a_machine_with_the_data_elsewhere(tmp_path):
    from hashlib import sha256

    from sched_engine.core.inputs import InputFiles

    sha = sha256(SWF.read_bytes()).hexdigest()
    here = tmp_path / "mounted" / "uploads"
    here.mkdir(parents=True)
    (here / f"{sha}.trace").write_bytes(SWF.read_bytes())
    old = _batch(f"/srv/elsewhere/data/uploads/{sha}.trace", label="mine.swf")
    normal = normalize_scenario(old, inputs=InputFiles([here]))
    assert normal.model["trace"]["path"] == f"upload:{sha}"
    stored = run_scenario(normal, inputs=InputFiles([here]))
    old_result = SimulationResult.from_json(stored.to_json().replace(f"upload:{sha}", old["model"]["trace"]["path"]))
    assert old_result.scenario["model"]["trace"]["path"] == f"upload:{sha}"
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario(old, inputs=InputFiles([tmp_path / "empty"]))
    assert "upload it again" in str(caught.value) and "/srv" not in str(caught.value)


def test_a_missing_file_is_named_without_its_directory(tmp_path):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario(_batch(str(tmp_path / "nowhere" / "missing.swf")))
    assert "missing.swf" in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_a_normalised_scenario_is_run_as_it_is_and_its_file_hashed_once(tmp_path, monkeypatch):
    from sched_engine.core import inputs

    trace = tmp_path / "once.swf"
    trace.write_bytes(SWF.read_bytes())
    hashed = []
    real = inputs._sha256_of.__wrapped__
    monkeypatch.setattr(inputs, "_sha256_of", lambda *key: hashed.append(key) or real(*key))
    normal = normalize_scenario(_batch(str(trace)))
    assert normal.normalised and normalize_scenario(normal) is normal
    run_scenario(normal)
    assert len(hashed) == 1


def test_the_command_line_names_its_files_by_content(tmp_path, monkeypatch):
    from sched_engine.__main__ import run_by_content

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.swf").write_bytes(SWF.read_bytes())
    relative, absolute = run_by_content(_batch("t.swf")), run_by_content(_batch(str(tmp_path / "t.swf")))
    assert relative.scenario_hash == absolute.scenario_hash
    assert relative.scenario["model"]["trace"]["path"].startswith("upload:")
    assert relative.scenario["model"]["trace"]["label"] == "t.swf"
    assert str(tmp_path) not in json.dumps(absolute.scenario)
