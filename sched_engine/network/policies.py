"""The network engine's policy: one placement and one allocation (Sec. V's schemes).

The registry lists the paper's four schemes as policies (baseline, DRF, HUG,
Libra); each is a :class:`NetworkScheme` whose parameters can be overridden
in ``policy_params``, e.g. Libra placement with DRF allocation::

    {"policy": "drf", "policy_params": {"placement": "libra"}}
"""

from __future__ import annotations

from ..core.errors import ScenarioError
from ..core.registry import Parametrised

PLACEMENTS = ("round-robin", "libra")
ALLOCATION_NAMES = ("per-flow", "drf", "hug", "libra")


class NetworkScheme(Parametrised):
    """``placement`` x ``allocation``; Libra placement uses ``candidate_fraction`` and ``tabu_iterations``.

    ``candidate_fraction`` is the share of machines in the candidate set
    (default 5.86 %, 30 of 512 machines, Sec. V-B4); ``tabu_iterations``
    bounds the tabu search of Alg. 2 line 8.
    """

    def __init__(self, placement: str = "round-robin", allocation: str = "per-flow",
                 candidate_fraction: float = 0.0586, tabu_iterations: int = 40):
        if placement not in PLACEMENTS:
            raise ScenarioError("policy_params.placement", f"unknown placement {placement!r} (known: {', '.join(PLACEMENTS)})")
        if allocation not in ALLOCATION_NAMES:
            raise ScenarioError("policy_params.allocation",
                                f"unknown allocation {allocation!r} (known: {', '.join(ALLOCATION_NAMES)})")
        if isinstance(candidate_fraction, bool) or not isinstance(candidate_fraction, (int, float)) \
                or not 0 < candidate_fraction <= 1:
            raise ScenarioError("policy_params.candidate_fraction", f"must be in (0, 1], got {candidate_fraction!r}")
        if isinstance(tabu_iterations, bool) or not isinstance(tabu_iterations, int) or tabu_iterations < 0:
            raise ScenarioError("policy_params.tabu_iterations", f"must be a whole number >= 0, got {tabu_iterations!r}")
        self.placement = placement
        self.allocation = allocation
        self.candidate_fraction = float(candidate_fraction)
        self.tabu_iterations = tabu_iterations
