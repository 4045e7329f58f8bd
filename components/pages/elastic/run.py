"""What Run runs on the Memory elasticity page: the model under every chosen scheduler, with one seed."""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from .form import build_model, form_values, number
from .ids import ENGINE


def scenarios(model: dict, policies: list[str], seed: int) -> list[run_panel.Planned]:
    """One scenario per scheduler, all with the same seed (so the same generated trace)."""
    if not policies:
        raise ScenarioError("Schedulers", "choose at least one scheduler")
    return [run_panel.Planned({"engine": ENGINE, "policy": policy, "model": model, "seed": seed},
                              {"policy": policy, "label": REGISTRY.policy(ENGINE, policy).label})
            for policy in policies]


def run_all(results, plan: list[run_panel.Planned], report) -> tuple[list[dict], str]:
    """Run every scenario through the cache (all checked first); returns ``(run records, message)``.

    ``report(done, total)`` gets progress in percent units.
    """
    return run_panel.run_many(results, plan, report)


def plan(uploads, *values) -> list[run_panel.Planned]:
    """The schedulers the form asks for (the run panel's States: the form, the seed, the loaded trace, the schedulers)."""
    *form, seed, loaded, policies = values
    model = build_model(form_values(*form), loaded, uploads)
    return scenarios(model, policies or [], number(seed, "Seed", integer=True, minimum=0))
