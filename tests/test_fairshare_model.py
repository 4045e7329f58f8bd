"""Bad fair-sharing input: every mistake names its field and says what is wrong."""

import pytest

from fairshare_trees import dept, job, model
from sched_engine import ScenarioError, normalize_scenario
from sched_engine.fairshare.model import normalize_model
from sched_engine.fairshare.presets import starter_model


def _error(m):
    with pytest.raises(ScenarioError) as caught:
        normalize_model(m)
    return caught.value


def test_empty_tree_is_rejected():
    error = _error(model([("cpu", 10)], []))
    assert error.field == "tree" and "empty" in error.message


def test_departments_without_jobs_are_still_an_empty_tree():
    assert "empty" in _error(model([("cpu", 10)], [dept("ops", [])])).message


@pytest.mark.parametrize("capacity", [0, -5, "abc", None, float("inf")])
def test_capacity_must_be_a_positive_number(capacity):
    error = _error(model([("cpu", capacity)], [job("a", {"cpu": 1})]))
    assert error.field == "resources[0].capacity"


def test_no_resources_is_rejected():
    error = _error({"resources": [], "tree": dept("root", [job("a", {"cpu": 1})])})
    assert error.field == "resources"


def test_a_job_demanding_nothing_is_rejected():
    error = _error(model([("cpu", 10), ("mem", 10)], [job("idle", {"cpu": 0, "mem": 0})]))
    assert error.field == "tree.children[0].demand" and "demands nothing" in error.message


def test_a_task_larger_than_the_cluster_is_rejected():
    error = _error(model([("cpu", 10)], [dept("d", [job("big", {"cpu": 11})])]))
    assert error.field == "tree.children[0].children[0].demand.cpu"
    assert "11" in error.message and "10" in error.message


@pytest.mark.parametrize(
    "field, value",
    [("tasks", "many"), ("tasks", 2.5), ("tasks", 0), ("duration", -1), ("arrival", "soon"), ("weight", 0)],
)
def test_non_numeric_or_out_of_range_job_fields(field, value):
    leaf = job("a", {"cpu": 1})
    leaf[field] = value
    error = _error(model([("cpu", 10)], [leaf]))
    assert error.field == f"tree.children[0].{field}"


def test_departure_must_follow_arrival():
    error = _error(model([("cpu", 10)], [job("a", {"cpu": 1}, arrival=5, departure=5)]))
    assert error.field == "tree.children[0].departure"


def test_unknown_resource_and_duplicate_names():
    assert "no resource 'gpu'" in _error(model([("cpu", 10)], [job("a", {"gpu": 1})])).message
    assert "used twice" in _error(model([("cpu", 10)], [job("a", {"cpu": 1}), job("a", {"cpu": 1})])).message


def test_numeric_text_from_forms_is_accepted_and_normalised():
    m = model([("cpu", "10")], [job("a", {"cpu": "1.5"}, tasks="3")])
    normal = normalize_model(m)
    assert normal["resources"][0]["capacity"] == 10.0
    assert normal["tree"]["children"][0]["demand"] == {"cpu": 1.5}
    assert normal["tree"]["children"][0]["tasks"] == 3


def test_scenario_errors_are_prefixed_with_model():
    bad = starter_model()
    bad["resources"][1]["capacity"] = -1
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "fairshare", "policy": "mch", "model": bad})
    assert caught.value.field == "model.resources[1].capacity"
    assert str(caught.value) == "model.resources[1].capacity: must be greater than 0, got -1"


def test_collapsed_hierarchy_on_a_missing_resource_is_a_clear_error():
    from sched_engine import run_scenario

    m = model([("cpu", 10), ("gpu", 4)], [job("a", {"cpu": 1})])
    with pytest.raises(ScenarioError) as caught:
        run_scenario({"engine": "fairshare", "policy": "m-ch", "model": m})
    assert caught.value.field == "policy_params.resource" and "'mem'" in caught.value.message
