"""What Run runs on the Site study page: one site model under every chosen queue order."""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from ..batch.sources import ref_path, trace_choice_ref
from .ids import ENGINE

MESSAGE = {"noun": "policy", "timed": True}


def site_model(uploads, trace: str | None, max_jobs, weighting: str, failures: str, elastic) -> dict:
    """The site model of the form: the chosen trace on its header's cluster, the derived organisation."""
    if not trace:
        raise ScenarioError("trace", "choose a sample trace or upload one")
    ref = trace_choice_ref(trace, uploads)
    model = {"trace": {"path": ref_path(ref, uploads), "label": ref["label"]},
             "failures": {"kind": failures or "none"}, "organisation": {"derive": weighting or "equal"},
             "memory_elastic": {"enabled": bool(elastic)}}
    if max_jobs:
        model["trace"]["max_jobs"] = max_jobs
    return model


def plan(uploads, trace, max_jobs, weighting, failures, elastic, policies, backfill, half_life) -> list[run_panel.Planned]:
    """One scenario per chosen queue order (the run panel's States, in order)."""
    if not policies:
        raise ScenarioError("policies", "choose at least one queue order")
    model = site_model(uploads, trace, max_jobs, weighting, failures, elastic)
    params = {"backfill": backfill or "easy", "half_life_s": float(half_life or 0)}
    return [run_panel.Planned({"engine": ENGINE, "policy": policy, "policy_params": params, "model": model, "seed": 1},
                              {"policy": policy, "label": REGISTRY.policy(ENGINE, policy).label})
            for policy in policies]
