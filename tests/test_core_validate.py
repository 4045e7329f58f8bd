"""The shared field validators, and the bounds every model checks where it is normalised."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.core import validate
from sched_engine.elastic.model import MAX_NODES
from sched_engine.elastic.presets import paper_model
from sched_engine.network.presets import fig1_model
from sched_engine.sweeps import MAX_POINTS, normalize_spec, point_count


@pytest.mark.parametrize("value, bounds, message", [
    ("abc", {}, "must be a number, got 'abc'"),
    (True, {}, "must be a number, got True"),
    (None, {}, "must be a number, got None"),
    (float("nan"), {}, "must be a finite number, got nan"),
    (float("inf"), {}, "must be a finite number, got inf"),
    (10**400, {}, "must be a finite number, got a number too large to compute with"),
    (1.5, {"integer": True}, "must be a whole number, got 1.5"),
    (0, {"minimum": 1}, "must be at least 1, got 0"),
    (0, {"above": 0}, "must be greater than 0, got 0"),
    (20_000, {"maximum": 10_000}, "must be at most 10000, got 20000"),
])
def test_a_bad_number_names_its_field_and_what_is_allowed(value, bounds, message):
    with pytest.raises(ScenarioError) as caught:
        validate.number(value, "a.b", **bounds)
    assert caught.value.field == "a.b"
    assert caught.value.message == message


def test_numbers_come_back_in_their_canonical_type():
    assert validate.number(2, "x") == 2.0 and isinstance(validate.number(2, "x"), float)
    assert validate.whole(2.0, "x") == 2 and isinstance(validate.whole(2.0, "x"), int)
    assert validate.number_text(" 2.5 ", "x") == 2.5
    assert validate.number_range([1, 3], "r", integer=True) == [1, 3]
    with pytest.raises(ScenarioError, match="max 1 is below min 3"):
        validate.number_range([3, 1], "r")


def test_lists_are_bounded_before_their_entries_are_read_and_repeats_are_named():
    with pytest.raises(ScenarioError) as caught:
        validate.numbers([1, 2, 1], "xs")
    assert (caught.value.field, caught.value.message) == ("xs[2]", "1 is listed twice")
    with pytest.raises(ScenarioError, match="lists 4 numbers, at most 3"):
        validate.numbers(["not", "read", "at", "all"], "xs", max_items=3)
    with pytest.raises(ScenarioError) as caught:
        validate.choices(["a", "b", "a"], "cs", ["a", "b"])
    assert caught.value.field == "cs[2]"
    with pytest.raises(ScenarioError, match="unknown value 'z'"):
        validate.choice("z", "c", ["a", "b"])


def test_finding_repeats_takes_linear_time():
    values = list(range(200_000))
    started = time.perf_counter()
    assert validate.distinct(values, "xs") is values
    assert time.perf_counter() - started < 1.0


# --- bounds where models are normalised ---------------------------------------------------------------

def test_the_elasticity_node_count_is_bounded_before_any_node_is_built():
    model = paper_model()
    model["nodes"][0]["count"] = 20_000_000
    tracemalloc.start()
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "elastic", "policy": "yarn", "model": model})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert caught.value.field == "model.nodes[0].count"
    assert f"at most {MAX_NODES:g}" in caught.value.message
    assert peak < 20 * 2**20


def test_node_groups_are_bounded_together():
    model = paper_model()
    model["nodes"] = [{**model["nodes"][0], "count": MAX_NODES}, {**model["nodes"][0], "count": 1}]
    with pytest.raises(ScenarioError, match=f"{MAX_NODES + 1:,} nodes in all, at most {MAX_NODES:,}"):
        normalize_scenario({"engine": "elastic", "policy": "yarn", "model": model})


def test_generated_elasticity_jobs_are_bounded():
    model = paper_model()
    model["trace"]["jobs"] = 10**9
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "elastic", "policy": "yarn", "model": model})
    assert caught.value.field == "model.trace.jobs" and "at most" in caught.value.message


def test_network_machines_and_application_widths_are_bounded():
    model = fig1_model()
    model["machines"][0]["count"] = 10**8
    with pytest.raises(ScenarioError, match="at most 100000"):
        normalize_scenario({"engine": "network", "policy": "libra", "model": model})
    model = fig1_model()
    model["applications"][0]["containers"][0]["count"] = 10**6
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "network", "policy": "libra", "model": model})
    assert caught.value.field.startswith("model.applications[0].containers[0].count")


def test_batch_hardware_is_bounded():
    model = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf"},
             "clusters": [{"name": "big", "machines": 10**7, "cpus_per_machine": 1}]}
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "batch", "policy": "fcfs", "model": model})
    assert caught.value.field == "model.clusters[0].machines" and "at most 1000000" in caught.value.message


# --- sweep sizes ---------------------------------------------------------------------------------------

def test_a_sweep_is_counted_as_a_product_without_building_its_points():
    spec = {"kind": "libra-intervals", "seeds": 10, "intervals": [0.1, 1.0, 10.0], "schemes": ["drf", "libra"]}
    assert point_count(spec) == 2 * 3 * 10


def test_a_sweep_too_large_is_refused_with_the_bound_quickly():
    spec = {"kind": "libra-intervals", "seeds": 10_000, "intervals": [0.01 * (i + 1) for i in range(1_000)]}
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(ScenarioError) as caught:
        point_count(spec)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert f"40,000,000 points, at most {MAX_POINTS:,}" in caught.value.message
    assert elapsed < 5.0 and peak < 50 * 2**20


def test_sweep_lists_are_bounded_and_repeats_found_in_linear_time():
    with pytest.raises(ScenarioError, match="lists 20,000 numbers, at most 1,000"):
        normalize_spec({"kind": "libra-intervals", "intervals": [0.001 * (i + 1) for i in range(20_000)]})
    with pytest.raises(ScenarioError, match="must be at most 10000"):
        normalize_spec({"kind": "libra-intervals", "seeds": 20_000})
