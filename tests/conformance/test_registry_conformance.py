"""Every (engine, policy) the registry lists keeps the engine contract.

Parametrised from the registry itself, so a policy added there is checked
here without a line of test code: same seed, same frames; JSON-safe
parameters that reproduce the cache key; a schema that declares exactly the
constructor's parameters and turns a bad value into a ``ScenarioError``
naming it; every job listed once, with a status from the engine's
vocabulary and times in order; capacity never exceeded, in each engine's own
terms (:data:`CAPACITY`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sched_engine import ScenarioError, normalize_scenario, run_scenario
from sched_engine.core.result import MEASURED_METRICS
from sched_engine.elastic.presets import two_job_model
from sched_engine.fairshare.presets import starter_model
from sched_engine.network.presets import fig1_model
from sched_engine.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]

#: A small model per engine, seconds to run.
MODELS = {
    "fairshare": starter_model,
    "batch": lambda: {"trace": {"path": str(ROOT / "sample_traces" / "hpc2n-excerpt.swf"), "max_jobs": 120},
                      "failures": {"kind": "synthetic"}},
    "network": fig1_model,
    "elastic": two_job_model,
    "site": lambda: {"trace": {"path": str(ROOT / "sample_traces" / "hpc2n-excerpt.swf"), "max_jobs": 120},
                     "failures": {"kind": "synthetic"}, "memory_per_machine_mb": {"cluster": 3000},
                     "job_memory_per_cpu_mb": 2000, "memory_elastic": {"enabled": True, "min_fraction": 0.6}},
}
ENTRIES = [entry for engine in REGISTRY.engines() for entry in REGISTRY.policies(engine.name)]
IDS = [f"{entry.engine}:{entry.name}" for entry in ENTRIES]

#: A value of the wrong kind for each kind of parameter.
WRONG = {"number": "abc", "integer": 1.5, "choice": "no-such-choice", "text": ""}


def scenario(entry, **extra) -> dict:
    return {"engine": entry.engine, "policy": entry.name, "model": MODELS[entry.engine](), "seed": 3, **extra}


def test_every_engine_has_a_model_here():
    assert set(MODELS) == {engine.name for engine in REGISTRY.engines()}


def simulated(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary without the scheduler's own timing (a measurement of this machine, not of the model)."""
    return summary[~summary["metric"].isin(MEASURED_METRICS)].reset_index(drop=True)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_same_seed_gives_the_same_frames(entry):
    first, second = run_scenario(scenario(entry)), run_scenario(scenario(entry))
    pd.testing.assert_frame_equal(first.jobs, second.jobs)
    pd.testing.assert_frame_equal(first.timeline, second.timeline)
    pd.testing.assert_frame_equal(simulated(first.summary), simulated(second.summary))


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_parameters_are_declared_json_safe_and_reproduce_the_cache_key(entry):
    params = REGISTRY.create(entry.engine, entry.name).get_params()
    assert set(entry.schema) == set(params), "the schema declares exactly the constructor's parameters"
    assert json.loads(json.dumps(params)) == params
    default = normalize_scenario(scenario(entry))
    explicit = normalize_scenario(scenario(entry, policy_params=params))
    assert explicit.content_hash() == default.content_hash()


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_bad_parameters_are_scenario_errors_naming_the_field(entry):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario(scenario(entry, policy_params={"no_such_parameter": 1}))
    assert caught.value.field == "policy_params.no_such_parameter"
    for name, param in entry.schema.items():
        with pytest.raises(ScenarioError) as caught:
            normalize_scenario(scenario(entry, policy_params={name: WRONG[param.kind]}))
        assert caught.value.field == f"policy_params.{name}"
        if param.kind in ("number", "integer"):
            below = (param.low if param.low_open else param.low - 1) if param.low is not None else None
            if below is not None:
                with pytest.raises(ScenarioError, match="must be"):
                    normalize_scenario(scenario(entry, policy_params={name: below}))


def levels(timeline: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A step series per entity: one row per instant any of them changes, each entity's level then (0 before)."""
    rows = timeline[timeline["metric"] == metric]
    table = rows.pivot_table(index="time", columns="entity", values="value", aggfunc="last")
    return table.sort_index().ffill().fillna(0.0)


def running_total(start, end, amount) -> float:
    """The largest sum of ``amount`` over intervals [start, end) open at once (ends before starts at one instant)."""
    started = ~np.isnan(start)
    stop = np.where(np.isnan(end), np.inf, end)
    events = sorted([(t, 1, a) for t, a in zip(start[started], amount[started])]
                    + [(t, 0, -a) for t, a in zip(stop[started], amount[started])])
    return float(max(np.cumsum([a for _, _, a in events]), default=0.0))


def fairshare_capacity(result) -> None:
    """Every resource: the running tasks' demands sum to at most its capacity, at every instant."""
    model = result.scenario["model"]
    demand = {}
    stack = [model["tree"]]
    while stack:
        node = stack.pop()
        stack.extend(node.get("children", ()))
        if "demand" in node:
            demand[node["name"]] = node["demand"]
    running = levels(result.timeline, "running_tasks")
    for resource in model["resources"]:
        per_task = pd.Series({leaf: demand[leaf].get(resource["name"], 0.0) for leaf in running.columns})
        assert (running * per_task).sum(axis=1).max() <= resource["capacity"] * (1 + 1e-9), resource["name"]
    assert levels(result.timeline, "utilisation").to_numpy().max() <= 1 + 1e-9


def batch_capacity(result) -> None:
    """Every cluster: processors of the jobs running at once at most its CPUs; used CPUs at most the CPUs up."""
    jobs = result.jobs
    cpus = result.timeline[result.timeline["metric"] == "up_cpus"].groupby("entity")["value"].max()
    for cluster, part in jobs[jobs["cluster"] != ""].groupby("cluster"):
        busy = running_total(part["start_time"].to_numpy(float), part["end_time"].to_numpy(float),
                             part["procs"].to_numpy(float))
        assert busy <= cpus[cluster], cluster
    for cluster in cpus.index:
        rows = result.timeline[result.timeline["entity"] == cluster]
        both = levels(rows, "used_cpus").join(levels(rows, "up_cpus"), how="outer", lsuffix="_used").ffill()
        assert (both[f"{cluster}_used"] <= both[cluster]).all(), cluster


def network_capacity(result) -> None:
    """Every access link carries at most its capacity (utilisation at most 1)."""
    assert levels(result.timeline, "utilisation").to_numpy().max() <= 1 + 1e-9


def elastic_capacity(result) -> None:
    """Every node holds at most its memory (all nodes one pool under a pooled policy); tasks at most the cores."""
    model = result.scenario["model"]
    nodes = [group["memory_mb"] for group in model["nodes"] for _ in range(group["count"])]
    cores = sum(group["cores"] * group["count"] for group in model["nodes"])
    held = levels(result.timeline, "job_memory_mb")
    per_node = held.T.groupby(lambda entity: int(entity.split("/")[0].removeprefix("node-"))).sum().T
    policy = REGISTRY.create("elastic", result.scenario["policy"], result.scenario["policy_params"])
    pooled_nodes = policy.nodes([1] * len(nodes), nodes)[1]   # the nodes as the policy sees them
    for node in per_node.columns:
        assert per_node[node].max() <= pooled_nodes[node], node
    assert levels(result.timeline, "memory_used_mb").to_numpy().max() <= sum(nodes)
    tasks = levels(result.timeline, "regular_tasks").join(levels(result.timeline, "elastic_tasks"), how="outer",
                                                          lsuffix="_regular").ffill().fillna(0.0)
    assert tasks.sum(axis=1).max() <= cores


def site_capacity(result) -> None:
    """CPUs of the jobs running at once at most the site's; memory held at most its memory; utilisation at most 1."""
    jobs = result.jobs
    summary = dict(zip(result.summary["metric"], result.summary["value"]))
    start, end = jobs["start_time"].to_numpy(float), jobs["end_time"].to_numpy(float)
    assert running_total(start, end, jobs["procs"].to_numpy(float)) <= summary["cpus"]
    assert running_total(start, end, jobs["memory_mb"].to_numpy(float)) <= summary["memory_mb"] * (1 + 1e-9)
    assert levels(result.timeline, "utilisation").to_numpy().max() <= 1 + 1e-9


#: Each engine's notion of capacity, checked on every run of every policy.
CAPACITY = {"fairshare": fairshare_capacity, "batch": batch_capacity, "network": network_capacity,
            "elastic": elastic_capacity, "site": site_capacity}


def test_every_engine_has_a_capacity_check():
    assert set(CAPACITY) == {engine.name for engine in REGISTRY.engines()}


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_capacity_is_never_exceeded(entry):
    result = run_scenario(scenario(entry))
    CAPACITY[entry.engine](result)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_every_job_ends_once_with_a_known_status_and_ordered_times(entry):
    result = run_scenario(scenario(entry))
    jobs = result.jobs
    assert not jobs.empty and jobs["job_id"].is_unique
    assert set(jobs["status"]) <= set(REGISTRY.engine(entry.engine).statuses)
    submit, start, end = (jobs[c].to_numpy(dtype=float) for c in ("submit_time", "start_time", "end_time"))
    started, ended = ~np.isnan(start), ~np.isnan(end)
    assert (start[started] >= submit[started] - 1e-9).all()
    assert (end[ended & started] >= start[ended & started] - 1e-9).all()


def test_only_randomised_policies_follow_the_seed():
    """On a model with no random part, a policy not declared randomised gives one schedule whatever the seed."""
    for entry in ENTRIES:
        if entry.engine == "network":
            continue   # the network model itself is drawn from the seed, whatever the policy
        fixed = scenario(entry)
        if entry.engine in ("batch", "site"):
            fixed["model"]["failures"] = {"kind": "none"}
        runs = [run_scenario({**fixed, "seed": seed}).jobs for seed in (1, 2, 3)]
        differ = any(not runs[0].equals(other) for other in runs[1:])
        if not entry.randomised:
            assert not differ, f"{entry.engine}:{entry.name} changes with the seed but is not declared randomised"
