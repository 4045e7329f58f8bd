"""Hierarchical multi-resource fair sharing (DRF family, H-DRF, CH, MCH)."""

from __future__ import annotations

from typing import Any, Mapping

from ..core.registry import EngineEntry, Param, PolicyEntry
from .model import Tree, normalize_model
from .policies import DRF, HDRF, MCH, CollapsedHierarchy, NaiveHierarchicalDRF, WeightedDRF
from .presets import (
    FIG4_AFTER_N12_AT,
    FIG4_ALL_ACTIVE_AT,
    FIG4_PAPER_SHARES,
    FIG4_PAPER_WEIGHTS,
    fig4_model,
    starter_model,
)
from .simulate import simulate

ENGINE_NAME = "fairshare"


def run(model: Mapping[str, Any], policy, rng=None, progress=None):
    """Engine entry point: ``(jobs, timeline, summary)`` for a normalised model.

    The simulation is deterministic; ``rng`` is accepted for the common
    engine signature and not used.
    """
    return simulate(Tree.from_model(model), policy, progress=progress)


ENGINE = EngineEntry(
    name=ENGINE_NAME,
    label="Fair sharing",
    normalize_model=normalize_model,
    run=run,
    description="Hierarchical multi-resource fair sharing: dominant shares per node over time.",
    statuses=("finished", "departed", "running", "waiting"),
)

#: The one parameter of a collapsed hierarchy: the resource whose shares it compares (none: dominant shares).
COLLAPSED_SCHEMA = {"resource": Param("text", "resource compared (a name of the cluster's resources)", optional=True)}

POLICIES = [
    PolicyEntry(ENGINE_NAME, "drf", "DRF", DRF, "Dominant Resource Fairness over the jobs; hierarchy ignored."),
    PolicyEntry(ENGINE_NAME, "wdrf", "Weighted DRF", WeightedDRF, "DRF with each job's own weight; hierarchy ignored."),
    PolicyEntry(
        ENGINE_NAME, "naive-hdrf", "Naive H-DRF", NaiveHierarchicalDRF,
        "DRF at every level on summed usage (Hadoop Fair Scheduler); can starve jobs.",
    ),
    PolicyEntry(ENGINE_NAME, "hdrf", "H-DRF", HDRF, "Hierarchical DRF: rescaling to the minimum, blocked nodes ignored."),
    PolicyEntry(
        ENGINE_NAME, "c-ch", "C-CH", CollapsedHierarchy,
        "Collapsed hierarchy compared on CPU share only.", {"resource": "cpu"}, COLLAPSED_SCHEMA,
    ),
    PolicyEntry(
        ENGINE_NAME, "m-ch", "M-CH", CollapsedHierarchy,
        "Collapsed hierarchy compared on memory share only.", {"resource": "mem"}, COLLAPSED_SCHEMA,
    ),
    PolicyEntry(
        ENGINE_NAME, "ch-drf", "CH + DRF", CollapsedHierarchy,
        "Collapsed-hierarchy weights with dominant shares (naive multi-resource CH).", {"resource": None},
        COLLAPSED_SCHEMA,
    ),
    PolicyEntry(ENGINE_NAME, "mch", "MCH", MCH, "Multi-resource collapsed hierarchies: flattened weights + weighted DRF."),
]

__all__ = [
    "ENGINE", "POLICIES", "Tree", "normalize_model", "simulate",
    # presets (the pages' buttons and the paper's Fig. 4 numbers)
    "FIG4_AFTER_N12_AT", "FIG4_ALL_ACTIVE_AT", "FIG4_PAPER_SHARES", "FIG4_PAPER_WEIGHTS", "fig4_model", "starter_model",
]
