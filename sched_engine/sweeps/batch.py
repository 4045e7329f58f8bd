"""``batch-ls-seeds``: Local Search (and other batch policies) over seeds on one batch scenario.

Variants are Klusáček & Rudová's §5 set-ups (machine failures, job
requirements). Engine errors are re-rooted in the sweep's own parameters.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core import validate
from ..core.errors import ScenarioError
from ..registry import REGISTRY
from ..runner import normalize_scenario, run_scenario
from .fields import check_fields, file_label, file_path, input_file, mean_std, seeds
from .kind import SweepKind

DEFAULTS = {
    "trace": "hpc2n-excerpt.swf", "jobs": 1000, "machines": "metacentrum-2009.machines",
    "failures": "metacentrum-2009.failures", "variant": "EXT-ALL", "requirement_share": 0.5,
    "estimates": "perfect", "policies": ["ls"], "seeds": 5,
}
VARIANTS = {  # name: (machine failures, job requirements) -- Klusáček & Rudová §5
    "BASIC": (False, False), "EXT-FAIL": (True, False), "EXT-REQ": (False, True), "EXT-ALL": (True, True),
}
METRICS = ("mean_response_s", "mean_slowdown", "mean_bounded_slowdown_tau10", "mean_wait_s", "killed",
           "cancelled", "scheduler_cpu_s")
#: Engine field prefix -> the sweep parameter it comes from.
FIELDS = {"model.trace": "trace", "model.machines_path": "machines", "model.failures": "failures",
          "model.synthetic_requirements": "requirement_share", "model.estimates": "estimates",
          "policy": "policies"}


def scenario(point: Mapping[str, Any]) -> dict:
    """The batch scenario of one point."""
    with_failures, with_requirements = VARIANTS[point["variant"]]
    failures = {"kind": "none"}
    if with_failures:
        failures = ({"kind": point["failures"]} if point["failures"] in ("synthetic", "none")
                    else {"kind": "trace", "path": file_path(point["failures"]), "align": "start"})
    share = point["requirement_share"]
    model = {
        "trace": {"path": file_path(point["trace"]), "label": file_label(point["trace"]), "max_jobs": point["jobs"]},
        "failures": failures,
        "requirements": with_requirements,
        "synthetic_requirements": {"share": share} if with_requirements and share else None,
        "estimates": point["estimates"],
    }
    if point["machines"]:
        model["machines_path"] = file_path(point["machines"])
    return {"engine": "batch", "policy": point["policy"], "seed": point["seed"], "model": model}


def in_sweep(exc: ScenarioError) -> ScenarioError:
    """An engine error re-rooted in the sweep's parameters (files keep their own place)."""
    if exc.source:
        return exc
    field = next((name for prefix, name in FIELDS.items() if exc.field.startswith(prefix)), exc.field)
    return ScenarioError(field, exc.message)


def normalize(spec: Mapping[str, Any]) -> dict:
    s = check_fields(spec, DEFAULTS)
    failures = s["failures"]
    variant = validate.choice(s["variant"], "variant", VARIANTS)
    normal = {
        "kind": KIND_NAME,
        "trace": input_file(s["trace"], "trace"),
        "jobs": None if s["jobs"] is None else validate.whole(s["jobs"], "jobs", minimum=1),
        "machines": input_file(s["machines"], "machines") if s["machines"] else None,
        "failures": failures if failures in ("synthetic", "none") else input_file(failures, "failures"),
        "variant": variant,
        "requirement_share": validate.number(s["requirement_share"], "requirement_share", minimum=0, maximum=1),
        "estimates": validate.choice(s["estimates"], "estimates", ("perfect", "trace")),
        "policies": validate.choices(s["policies"], "policies", [p.name for p in REGISTRY.policies("batch")]),
        "seeds": seeds(s["seeds"]),
    }
    if VARIANTS[variant][0] and normal["failures"] == "none":
        raise ScenarioError("variant", f"{variant} needs failures: name a failure trace or 'synthetic'")
    model(normal)
    return normal


def model(s: dict) -> dict:
    """The normalised batch model (checks the files; their SHA-256 joins the sweep's hash)."""
    try:
        return normalize_scenario(scenario({**s, "policy": s["policies"][0], "seed": s["seeds"][0]})).model
    except ScenarioError as exc:
        raise in_sweep(exc) from None


def inputs(s: dict) -> dict:
    """What a batch sweep reads, by content: the trace's and failure trace's SHA-256 and the clusters."""
    normal = model(s)
    return {"trace": normal["trace"]["sha256"], "failures": normal["failures"].get("sha256"),
            "clusters": normal["clusters"]}


def count(s: dict) -> int:
    return len(s["policies"]) * len(s["seeds"])


def points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("trace", "jobs", "machines", "failures", "variant", "requirement_share", "estimates")}
    return [{"policy": policy, "seed": seed, **common} for policy in s["policies"] for seed in s["seeds"]]


def run(point: Mapping[str, Any]) -> dict:
    try:
        result = run_scenario(scenario(point))
    except ScenarioError as exc:
        raise in_sweep(exc) from None
    return {name: float(result.summary_value(name)) for name in METRICS}


def parameters(point: Mapping[str, Any]) -> dict:
    return {"policy": point["policy"], "variant": point["variant"], "seed": point["seed"]}


def summary(table):
    return mean_std(table, ["policy"], METRICS)


KIND_NAME = "batch-ls-seeds"
KIND = SweepKind(KIND_NAME, "Local Search over seeds", DEFAULTS, {"jobs": 500, "seeds": 3},
                 normalize, count, points, run, parameters, summary, fingerprint=inputs)
