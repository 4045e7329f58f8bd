"""The scenario behind a permalink, its what-if variant, and the facts the page lists."""

from __future__ import annotations

from dash import html

from sched_engine import ScenarioError
from sched_engine.batch import describe_hardware
from sched_engine.registry import REGISTRY

from ...figures import catalogue
from ...services.workspace import permalink


def find_scenario(scenario_hash: str, store, results) -> dict | None:
    """The scenario behind a permalink: a saved one, else the one a cached result was run from."""
    saved = store.get(scenario_hash)
    if saved:
        return saved["scenario"]
    result = results.get(scenario_hash) if isinstance(scenario_hash, str) else None
    return dict(result.scenario) if result is not None else None


def what_if(scenario: dict, policy: str, seed) -> dict:
    """The scenario with another policy (its default parameters) and/or seed, named after its origin."""
    if not policy:
        raise ScenarioError("policy", "choose the policy of the what-if")
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ScenarioError("seed", f"must be a whole number, got {seed!r}") from None
    params = scenario.get("policy_params", {}) if policy == scenario["policy"] else {}
    base = scenario.get("name") or scenario["policy"]
    return {**scenario, "policy": policy, "policy_params": params, "seed": seed,
            "name": f"{base} · what if {policy}, seed {seed}"}


def describe(scenario: dict, scenario_hash: str, saved_name: str | None) -> list:
    entry = REGISTRY.policy(scenario["engine"], scenario["policy"])
    facts = [("Engine", REGISTRY.engine(scenario["engine"]).label), ("Policy", f"{entry.label} ({entry.name})"),
             *([("Hardware", describe_hardware(scenario["model"].get("clusters") or []))]
               if scenario["engine"] == "batch" else []),
             ("Seed", str(scenario.get("seed", 0))), ("Content hash", scenario_hash),
             ("Permalink", permalink(scenario_hash)), ("Saved as", saved_name or "not saved")]
    return [html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")]


def summary_rows(result) -> tuple[list[dict], list[dict]]:
    """The run's summary as the page shows it: catalogue names, values with units; and each name's definition.

    Returns ``(rows, tooltip_data)``: rows ``Metric | Value`` (``Value`` formatted to sensible precision
    with its unit, e.g. ``3,489 s``, ``63.5%``), and per row the metric's definition for the name's tooltip.
    """
    engine = result.scenario["engine"]
    rows, tips = [], []
    for metric, value in zip(result.summary["metric"], result.summary["value"]):
        rows.append({"Metric": catalogue.label(metric, engine), "Value": catalogue.formatted(metric, value, engine)})
        tips.append({"Metric": catalogue.tooltip(metric, engine) or metric})
    return rows, tips


def readable_comparison(table, engine: str):
    """A what-if table (``metric | unit | run | Δ% ...``) with catalogue names, units and rounded numbers."""
    metrics = list(table["metric"])
    table = table.copy()
    for column in table.columns[2:]:
        if not str(column).startswith("Δ%"):
            table[column] = [catalogue.rounded(m, v, engine) for m, v in zip(metrics, table[column])]
    table["unit"] = [catalogue.describe(m, engine).unit for m in metrics]
    table["metric"] = [catalogue.label(m, engine) for m in metrics]
    return table.rename(columns={"metric": "Metric", "unit": "Unit"})
