"""The network engine's policy: one placement and one allocation (Sec. V's schemes).

Placers (:data:`.placement.PLACERS`) and allocators
(:data:`.allocation.ALLOCATIONS`) are registered separately, each by name;
a :class:`NetworkScheme` composes one of each by name. The registry lists the paper's four schemes as policies (baseline, DRF, HUG,
Libra); each is a :class:`NetworkScheme` whose parameters can be overridden
in ``policy_params``, e.g. Libra placement with DRF allocation::

    {"policy": "drf", "policy_params": {"placement": "libra"}}
"""

from __future__ import annotations

import numpy as np

from ..core.registry import Parametrised
from .allocation import ALLOCATIONS
from .placement import PLACERS

PLACEMENTS = tuple(PLACERS)
ALLOCATION_NAMES = tuple(ALLOCATIONS)


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

    def placer(self, rng: np.random.Generator):
        """The placer named by ``placement``, built for one run."""
        return PLACERS[self.placement](self, rng)

    def allocator(self):
        """The allocation named by ``allocation``: ``(endpoints, flows, capacity, n_apps) -> rates``."""
        return ALLOCATIONS[self.allocation]
