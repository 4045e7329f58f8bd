"""What Run runs on the Site study page: one site model under every chosen queue order, and the second site's too.

The site's model takes the page's organisation tree and hardware table as
they are on screen; the second site (when one is chosen, to compare) runs
the same orders with the same parameters on its own trace, its header's
hardware (this site's table when its header gives no CPUs) and the
organisation derived from it with the same weighting. Each run record says
which site it is (``site``: ``A`` or ``B``) and where its hardware comes
from (``hardware``).
"""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from ..batch.sources import ref_path, trace_choice_ref
from . import hardware, organisation
from .ids import ENGINE

MESSAGE = {"noun": "run", "timed": True}


def site_model(uploads, trace: str | None, max_jobs, failures: str, elastic, org: dict | None,
               hw: dict | None, default_memory) -> dict:
    """The site model of the form: the chosen trace on the table's clusters, under the organisation on screen."""
    if not trace:
        raise ScenarioError("trace", "choose a sample trace or upload one")
    ref = trace_choice_ref(trace, uploads)
    model = {"trace": {"path": ref_path(ref, uploads), "label": ref["label"],
                       **({"timezone": ref["timezone"]} if "timezone" in ref else {}),   # its log's local times
                       **({"skip_malformed": True} if ref.get("skip_malformed") else {})},   # read as uploaded
             "failures": {"kind": failures or "none"}, "organisation": organisation.model_organisation(org),
             "memory_elastic": {"enabled": bool(elastic)},
             **hardware.hardware_model((hw or {}).get("rows"), default_memory)}
    if max_jobs:
        model["trace"]["max_jobs"] = max_jobs
    return model


def second_model(uploads, second: str, max_jobs, weighting, failures: str, elastic, hw: dict | None,
                 default_memory) -> tuple[dict, str]:
    """The second site's model and where its hardware comes from: its header's, else this site's table."""
    org = organisation.derived(uploads, second, max_jobs, weighting)
    try:
        own = hardware.header_draft(uploads, second)
    except ScenarioError:   # no MaxProcs line: the second workload on this site's machines
        own = {**(hw or {}), "origin": "this site's table (its header gives no CPUs)"}
    return site_model(uploads, second, max_jobs, failures, elastic, org, own, default_memory), own["origin"]


def plan(uploads, trace, max_jobs, weighting, failures, elastic, policies, backfill, half_life, org, hw,
         default_memory, second) -> list[run_panel.Planned]:
    """One scenario per chosen queue order and site (the run panel's States, in order)."""
    if not policies:
        raise ScenarioError("policies", "choose at least one queue order")
    if org and "for" in org and org["for"] != [trace, max_jobs]:
        # Run uses what the page shows: an organisation derived for another trace or cut is still being replaced.
        raise ScenarioError("organisation", "still being derived for the trace and first jobs chosen; "
                            "press Run again when the tree shows them")
    org = organisation.as_shown(org, uploads, trace, max_jobs, weighting)   # a new weighting still being applied
    params = {"backfill": backfill or "easy", "half_life_s": float(half_life or 0)}
    sites = [("A", site_model(uploads, trace, max_jobs, failures, elastic, org, hw, default_memory),
              (hw or {}).get("origin", "the table"))]
    if second:
        try:
            sites.append(("B", *second_model(uploads, second, max_jobs, weighting, failures, elastic, hw,
                                             default_memory)))
        except ScenarioError as exc:
            raise ScenarioError(f"second site: {exc.field}", exc.message, source=exc.source) from None
    return [run_panel.Planned({"engine": ENGINE, "policy": policy, "model": model, "seed": 1,
                               "policy_params": {k: v for k, v in params.items()   # those the policy takes
                                                 if k in REGISTRY.policy(ENGINE, policy).schema}},
                              {"policy": policy, "label": REGISTRY.policy(ENGINE, policy).label, "site": site,
                               "hardware": origin,
                               "trace": model["trace"]["label"], "max_jobs": max_jobs},   # the inputs shown
                              origin=None if site == "A" else "second site")
            for site, model, origin in sites for policy in policies]


def backfilling_choices(policies: list[str] | None = None) -> list[dict]:
    """The backfilling choices the engine's registry declares for its orders (a new one appears by itself)."""
    names = policies or [entry.name for entry in REGISTRY.policies(ENGINE)]
    choices: list[str] = []
    for name in names:
        backfill = REGISTRY.policy(ENGINE, name).schema.get("backfill")   # the log as recorded has none
        for choice in backfill.choices if backfill is not None else ():
            if choice not in choices:
                choices.append(choice)
    return [{"label": "none" if choice == "none" else choice.upper(), "value": choice} for choice in choices]
