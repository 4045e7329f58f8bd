"""What Run runs on the Fair sharing page: the draft hierarchy under every chosen policy."""

from __future__ import annotations

from sched_engine import ScenarioError
from sched_engine.core import content_hash
from sched_engine.fairshare import normalize_model
from sched_engine.registry import REGISTRY

from ...widgets import run_panel
from .ids import ENGINE


def plan(draft: dict, policies: list[str] | None) -> list[run_panel.Planned]:
    """One scenario per chosen policy on the normalised draft (seed 0: the engine is deterministic).

    Each record keeps the policy, its label and the model's hash (the
    paper's table is shown only for runs of the Fig. 4 model).
    """
    if not policies:
        raise ScenarioError("policy", "choose at least one policy")
    model = normalize_model(draft)
    model_hash = content_hash(model)
    return [run_panel.Planned({"engine": ENGINE, "policy": policy, "model": model, "seed": 0},
                              {"policy": policy, "label": REGISTRY.policy(ENGINE, policy).label,
                               "model_hash": model_hash})
            for policy in policies]


#: The run message counts runs without their wall time (a fair-sharing run takes milliseconds).
MESSAGE = {"noun": "run", "timed": False}


def run_policies(results, draft, policies, report) -> tuple[list[dict], str]:
    """Run every chosen policy on the draft; returns ``(run records, message)`` (see :func:`run_panel.run_many`).

    ``report(done, total)`` is called with progress in percent units. A
    :class:`ScenarioError` stops before anything is replaced.
    """
    return run_panel.run_many(results, plan(draft, policies), report, **MESSAGE)
