"""What Run runs on the Network page: the set-up under every chosen scheme."""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from .ids import ENGINE
from .setups import APP_GEN_FIELDS, MACHINE_GEN_FIELDS, build_model, preset_params

PLACEMENTS = {"paper": "as in the paper (Libra for Libra, round-robin otherwise)",
              "round-robin": "round-robin for all", "libra": "Libra placement for all"}


def scheme_label(policy: str, placement: str) -> str:
    label = REGISTRY.policy(ENGINE, policy).label
    return label if placement == "paper" else f"{label} · {placement} placement"


#: The run message counts schemes, each with the wall time of those simulated.
MESSAGE = {"noun": "scheme", "timed": True}


def schemes_plan(model: dict, schemes: list[str], placement: str, seed) -> list[run_panel.Planned]:
    """One scenario per chosen scheme, with the preset's policy parameters while the set-up is still the preset's."""
    if not schemes:
        raise ScenarioError("schemes", "choose at least one of baseline, DRF, HUG, Libra")
    params = preset_params(model) | ({} if placement == "paper" else {"placement": placement})
    return [run_panel.Planned({"engine": ENGINE, "policy": policy, "policy_params": params, "model": model,
                               "seed": int(seed or 0)},
                              {"policy": policy, "label": scheme_label(policy, placement)})
            for policy in schemes]


def run_schemes(results, model: dict, schemes: list[str], placement: str, seed, report) -> tuple[list[dict], str]:
    """Run the model under every chosen scheme; returns ``(run records, message)``."""
    return run_panel.run_many(results, schemes_plan(model, schemes, placement, seed), report, **MESSAGE)


def plan(uploads, model_draft, machine_mode, app_mode, arrivals, pattern, machine_gen, app_gen, schemes, placement,
         seed) -> list[run_panel.Planned]:
    """The schemes the form asks for (the run panel's States, in order) on the model of the page's set-up."""
    settings = {"machine_mode": machine_mode, "app_mode": app_mode, "arrivals": arrivals, "pattern": pattern,
                "machine_gen": dict(zip([k for k, _ in MACHINE_GEN_FIELDS], machine_gen)),
                "app_gen": dict(zip([k for k, _ in APP_GEN_FIELDS], app_gen))}
    return schemes_plan(build_model(settings, model_draft, uploads), schemes or [], placement, seed)
