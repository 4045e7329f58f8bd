"""What Run runs on the Batch page: one scenario per (scenario kind, policy, seed) of the matrix."""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from .clusters import clusters_from_rows, hardware_text, next_run_hardware
from .ids import ENGINE
from .sources import parse_trace, ref_path

SCENARIO_KINDS = {
    # name: (machine failures, job requirements) -- Klusáček & Rudová §5
    "BASIC": (False, False),
    "EXT-FAIL": (True, False),
    "EXT-REQ": (False, True),
    "EXT-ALL": (True, True),
}
FAILURE_PARAMS = (
    ("afc", "Failures per machine-day (AFC)"),
    ("duration_shape", "Duration Weibull shape"),
    ("duration_scale_s", "Duration Weibull scale (s)"),
    ("interarrival_shape", "Inter-arrival Weibull shape"),
    ("burst_probability", "Burst probability"),
)


def scenario_models(draft: dict, settings: dict, uploads) -> dict[str, dict]:
    """One batch model per chosen scenario kind (BASIC, EXT-FAIL, EXT-REQ, EXT-ALL).

    ``settings``: ``max_jobs``, ``failure_kind`` (none|trace|synthetic),
    ``align``, ``failure_params``, ``req_share``, ``estimates``,
    ``load_factor``, ``scenarios``. Raises :class:`ScenarioError` naming the field at fault.
    """
    if not settings["scenarios"]:
        raise ScenarioError("scenarios", "choose at least one of BASIC, EXT-FAIL, EXT-REQ, EXT-ALL")
    trace = draft["trace"]
    base = {
        "trace": {"path": ref_path(trace, uploads), "label": trace["label"], "format": trace.get("format", "auto"),
                  "skip_malformed": bool(trace.get("skip_malformed")), "max_jobs": settings.get("max_jobs") or None,
                  "timezone": trace.get("timezone", "UTC")},
        "clusters": clusters_from_rows(draft["clusters"]),
        "estimates": settings.get("estimates") or "perfect",
        "load_factor": settings.get("load_factor") or 1.0,
    }
    kind = settings.get("failure_kind") or "none"
    if kind == "trace":
        failures = {"kind": "trace", "path": ref_path(draft["failure_trace"], uploads),
                    "align": settings.get("align") or "start"}
    elif kind == "synthetic":
        failures = {"kind": "synthetic", **{k: v for k, v in settings.get("failure_params", {}).items() if v is not None}}
    else:
        failures = {"kind": "none"}
    share = settings.get("req_share") or 0
    models = {}
    for name in [s for s in SCENARIO_KINDS if s in settings["scenarios"]]:
        with_failures, with_requirements = SCENARIO_KINDS[name]
        if with_failures and kind == "none":
            raise ScenarioError("failures", f"{name} needs failures: choose a failure trace or synthetic failures")
        models[name] = {
            **base,
            "failures": failures if with_failures else {"kind": "none"},
            "requirements": with_requirements,
            "synthetic_requirements": {"share": share} if with_requirements and share else None,
        }
    return models


def matrix_plan(models: dict[str, dict], policies: list[str], seeds, hardware: str = "") -> list[run_panel.Planned]:
    """One scenario per (scenario kind, policy, seed) of the matrix, named after what it runs.

    ``hardware`` (see :func:`hardware_text`) is kept in every record and in
    the scenarios' names, so the summary and the permalinks say what ran.
    Randomised policies (FCFS-LB, LS) and scenarios with synthetic parts run
    once per seed ``1..seeds``; deterministic ones once, with seed 1.
    """
    if not policies:
        raise ScenarioError("policy", "choose at least one policy")
    seeds = max(1, int(seeds or 1))
    plan = []
    for name, model in models.items():
        seeded = model["failures"]["kind"] == "synthetic" or bool(model["synthetic_requirements"])
        for policy in policies:
            label = REGISTRY.policy(ENGINE, policy).label
            for seed in range(1, (seeds if seeded or REGISTRY.policy(ENGINE, policy).randomised else 1) + 1):
                title = " · ".join(part for part in (name, model["trace"]["label"], hardware) if part)
                plan.append(run_panel.Planned(
                    {"engine": ENGINE, "policy": policy, "model": model, "seed": seed, "name": title},
                    {"scenario": name, "policy": policy, "label": label, "seed": seed, "hardware": hardware},
                    origin=name))
    return plan


def run_matrix(results, models: dict[str, dict], policies: list[str], seeds: int, report,
               hardware: str = "") -> tuple[list[dict], str]:
    """Run every (scenario kind, policy, seed) of :func:`matrix_plan`; returns ``(run records, message)``.

    ``report(done, total)`` gets progress in percent units. Every scenario
    is validated before the first run, and an error stops the matrix; the
    caller keeps its previous records either way.
    """
    return run_panel.run_many(results, matrix_plan(models, policies, seeds, hardware), report)


def plan(uploads, draft, max_jobs, failure_kind, align, param_values, param_ids, share, estimates, load_factor,
         policies, scenarios, seeds) -> list[run_panel.Planned]:
    """The matrix the form asks for (the run panel's States, in order), on the hardware the page states."""
    settings = {"max_jobs": max_jobs, "failure_kind": failure_kind, "align": align,
                "failure_params": {i["name"]: v for i, v in zip(param_ids, param_values)}, "req_share": share,
                "estimates": estimates, "load_factor": load_factor, "scenarios": scenarios or []}
    models = scenario_models(draft, settings, uploads)
    hardware = hardware_text(*next_run_hardware(draft, parse_trace(draft["trace"], uploads)))
    return matrix_plan(models, policies or [], seeds, hardware)
