"""Network model validation: bad input gets a message naming the field; good input is canonical."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from sched_engine import ScenarioError, normalize_scenario, run_scenario
from sched_engine.network.model import applications, flow_counts, normalize_model
from sched_engine.network.presets import PRESETS, fig1_model, fig6_model


def broken(edit):
    model = copy.deepcopy(fig1_model())
    edit(model)
    return model


@pytest.mark.parametrize("edit, field, message", [
    (lambda m: m["machines"][0].update(uplink=-1), "machines[0].uplink", "bandwidth cannot be negative"),
    (lambda m: m["machines"][1].update(downlink=0), "machines[1].downlink", "greater than 0 Gbps"),
    (lambda m: m["applications"][0]["containers"][0].update(downlink=-0.5),
     "applications[0].containers[0].downlink", "bandwidth cannot be negative"),
    (lambda m: m["applications"][1]["containers"][1].update(cpu=3),
     "applications[1].containers[1]", "fits on no machine (largest: 2 CPU, 2 GB RAM)"),
    (lambda m: m["applications"][0].update(pattern="ring"), "applications[0].pattern", "unknown pattern 'ring'"),
    (lambda m: m["applications"][0].update(weight=2), "applications[0].weight", "(0, 1]"),
    (lambda m: m["applications"][1].update(name="A1"), "applications[1].name", "used twice"),
    (lambda m: m["applications"][0]["containers"][0].update(count=5), "applications[0].containers",
     "needs 6 CPU in all, the cluster has 4"),
    (lambda m: m.update(colour="red"), "colour", "unknown field"),
    (lambda m: m.update(machines=[]), "machines", "at least one machine"),
])
def test_bad_models_name_the_field(edit, field, message):
    with pytest.raises(ScenarioError) as caught:
        normalize_model(broken(edit))
    assert caught.value.field == field
    assert message in caught.value.message


def test_errors_are_rooted_in_the_scenario():
    model = broken(lambda m: m["machines"][0].update(uplink=-1))
    with pytest.raises(ScenarioError, match=r"model\.machines\[0\]\.uplink: bandwidth cannot be negative"):
        run_scenario({"engine": "network", "policy": "libra", "model": model})


@pytest.mark.parametrize("params, field", [
    ({"placement": "random"}, "policy_params.placement"),
    ({"allocation": "fifo"}, "policy_params.allocation"),
    ({"candidate_fraction": 0}, "policy_params.candidate_fraction"),
])
def test_bad_policy_params(params, field):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "network", "policy": "libra", "policy_params": params, "model": fig1_model()})
    assert caught.value.field == field


def test_normalised_model_is_canonical_and_idempotent():
    model = fig1_model()
    model["machines"][0]["cpu"] = 2  # int spelling
    once = normalize_model(model)
    assert once == normalize_model(fig1_model()) == normalize_model(once)


@pytest.mark.parametrize("pattern, width, out_flows, in_flows", [
    ("all-to-all", 3, [2, 2, 2], [2, 2, 2]),
    ("one-to-one", 3, [2, 1, 1], [2, 1, 1]),
    ("many-to-many", 5, [3, 3, 0, 0, 0], [0, 0, 2, 2, 2]),
])
def test_flow_counts_per_pattern(pattern, width, out_flows, in_flows):
    out, into = flow_counts(pattern, width, np.ones(width), np.ones(width))
    assert list(out) == out_flows and list(into) == in_flows
    assert out.sum() == into.sum()  # every flow leaves one container and enters another


def test_generated_arrivals_are_poisson_and_seeded():
    model = normalize_model(fig6_model(count=200, width=4, machines=8))
    first = applications(model, np.random.default_rng(3))
    again = applications(model, np.random.default_rng(3))
    other = applications(model, np.random.default_rng(4))
    times = np.array([a.arrival for a in first])
    assert [a.arrival for a in again] == list(times) and [a.arrival for a in other] != list(times)
    assert times[0] == 0.0 and np.mean(np.diff(times)) == pytest.approx(0.1, rel=0.2)
    # many-to-many: senders only send, receivers only receive (effective demands).
    app = first[0]
    assert list(app.up) == [1.0, 1.0, 0.0, 0.0] and list(app.down) == [0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_normalise(name):
    preset = PRESETS[name]
    scenario = normalize_scenario({"engine": "network", "policy": preset["policy"],
                                   "policy_params": preset["policy_params"], "model": preset["model"]()})
    assert scenario.model["machines"]
