"""The network engine's policy: one placement and one allocation (Sec. V's schemes).

The registry lists the paper's four schemes as policies (baseline, DRF, HUG,
Libra); each is a :class:`NetworkScheme` whose parameters can be overridden
in ``policy_params``, e.g. Libra placement with DRF allocation::

    {"policy": "drf", "policy_params": {"placement": "libra"}}
"""

from __future__ import annotations

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
        self.placement = placement
        self.allocation = allocation
        self.candidate_fraction = candidate_fraction
        self.tabu_iterations = tabu_iterations
