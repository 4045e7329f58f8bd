"""Flat policies: one weighted share per leaf, the lowest gets the next task (DRF, weighted DRF, C-CH/M-CH, CH + DRF, MCH)."""

from __future__ import annotations

import heapq
from typing import Callable

from ...core.errors import ScenarioError
from ...core.registry import Parametrised
from ..model import Tree
from ..state import ShareState
from .weights import collapsed_weights, mch_flat_weights, normalized_demands


def pareto_minimal(vectors: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """The vectors not dominated (componentwise >=) by another one, deduplicated."""
    frontier: list[tuple[float, ...]] = []
    for vector in sorted(set(vectors), key=sum):
        if not any(all(a <= b for a, b in zip(kept, vector)) for kept in frontier):
            frontier.append(vector)
    return frontier


class FlatChooser:
    """Weighted progressive filling over leaves with a heap.

    Picks the active leaf with the lowest ``running_i * increment_i / w_i``
    whose next task fits; ties go to the leaf that comes first in the tree.
    Heap entries are ``(key, leaf, version)``; an entry is stale when its
    version is not the leaf's current one.
    """

    def __init__(self, tree: Tree, increment: list[float], weigh: Callable[[ShareState], list[float]]):
        self._demand = tree.demand
        self._increment = increment
        self._weigh = weigh
        self._weights = [1.0] * tree.leaf_count
        self._version = [0] * tree.leaf_count
        self._heap: list[tuple[float, int, int]] = []
        # Entries popped because their task did not fit, parked per resource
        # ``j`` that blocked them as ``(amount needed, entry)``: the leaf
        # cannot fit before free_j reaches that amount, which only a release
        # can bring about, so a release wakes exactly those whose threshold
        # it passed (and large tasks are not re-examined on every pass).
        self._parked: list[list[tuple[float, tuple[float, int, int]]]] = [[] for _ in tree.capacity]
        # Pareto-minimal demand vectors of the active leaves: some active
        # leaf fits iff one of these fits, so "nothing fits" costs
        # O(|frontier| m) instead of a scan of every leaf.
        self._frontier: list[tuple[float, ...]] = []
        # Free capacity when a pass last found nothing that fits, and the
        # activity epoch then: while free <= that snapshot and no leaf became
        # active, nothing can fit.
        self._blocked_free: list[float] | None = None
        self._blocked_epoch = -1

    def _key(self, state: ShareState, leaf: int) -> float:
        return state.running[leaf] * self._increment[leaf] / self._weights[leaf]

    def _push(self, state: ShareState, leaf: int) -> None:
        self._version[leaf] += 1
        heapq.heappush(self._heap, (self._key(state, leaf), leaf, self._version[leaf]))

    def activity_changed(self, state: ShareState) -> None:
        self._weights = self._weigh(state)
        self._version = [v + 1 for v in self._version]
        version = self._version
        self._heap = [
            (self._key(state, leaf), leaf, version[leaf])
            for leaf in range(len(version))
            if state.pending[leaf] > 0
        ]
        heapq.heapify(self._heap)
        self._parked = [[] for _ in self._parked]
        self._frontier = pareto_minimal([self._demand[leaf] for leaf in range(len(version)) if state.pending[leaf] > 0])
        self._blocked_free = None

    def _anything_fits(self, state: ShareState) -> bool:
        free, slack = state.free, state.slack
        for demand in self._frontier:
            for j, amount in enumerate(demand):
                if free[j] + slack[j] < amount:
                    break
            else:
                return True
        return False

    def pick(self, state: ShareState) -> int | None:
        free = state.free
        snapshot = self._blocked_free
        if snapshot is not None and self._blocked_epoch == state.activity_epoch:
            if all(f <= s for f, s in zip(free, snapshot)):
                return None
        if not self._anything_fits(state):
            self._blocked_free = list(free)
            self._blocked_epoch = state.activity_epoch
            return None
        heap, version, pending = self._heap, self._version, state.pending
        while heap:
            entry = heap[0]
            leaf = entry[1]
            if entry[2] != version[leaf] or pending[leaf] == 0:
                heapq.heappop(heap)
            elif not self._park_if_blocked(state, entry):
                return leaf
            else:
                heapq.heappop(heap)
        return None

    def _park_if_blocked(self, state: ShareState, entry: tuple[float, int, int]) -> bool:
        """Park ``entry`` under the first resource its task lacks; False if it fits."""
        free, slack = state.free, state.slack
        for j, amount in state.needs[entry[1]]:
            if free[j] + slack[j] < amount:
                heapq.heappush(self._parked[j], (amount, entry))
                return True
        return False

    def allocated(self, state: ShareState, leaf: int) -> None:
        if state.pending[leaf] > 0:
            self._push(state, leaf)

    def released(self, state: ShareState, leaf: int) -> None:
        free, slack, version = state.free, state.slack, self._version
        for j, parked in enumerate(self._parked):
            limit = free[j] + slack[j]
            while parked and parked[0][0] <= limit:
                entry = heapq.heappop(parked)[1]
                if entry[2] == version[entry[1]] and not self._park_if_blocked(state, entry):
                    heapq.heappush(self._heap, entry)
        if state.pending[leaf] > 0:
            self._push(state, leaf)

    def flat_weights(self) -> list[float]:
        return list(self._weights)


def _active(state: ShareState) -> list[bool]:
    return [p > 0 for p in state.pending]


class DRF(Parametrised):
    """Dominant Resource Fairness over the leaves, hierarchy ignored."""

    label = "DRF"

    def chooser(self, tree: Tree) -> FlatChooser:
        return FlatChooser(tree, list(ShareState(tree).mu), lambda state: [1.0] * tree.leaf_count)


class WeightedDRF(Parametrised):
    """DRF with each leaf's own weight, hierarchy ignored."""

    label = "Weighted DRF"

    def chooser(self, tree: Tree) -> FlatChooser:
        leaf_weights = [tree.weight[node] for node in tree.leaf_node]
        return FlatChooser(tree, list(ShareState(tree).mu), lambda state: list(leaf_weights))


class MCH(Parametrised):
    """Multi-resource Collapsed Hierarchies: flattened weights + weighted DRF."""

    label = "MCH"

    def chooser(self, tree: Tree) -> FlatChooser:
        leaf_vectors = normalized_demands(tree)
        return FlatChooser(
            tree, list(ShareState(tree).mu), lambda state: mch_flat_weights(tree, _active(state), leaf_vectors)[0]
        )


class CollapsedHierarchy(Parametrised):
    """Collapsed hierarchy: entitlement weights, one share compared.

    ``resource`` names the resource whose share is compared (``cpu`` for
    C-CH, ``mem`` for M-CH); ``None`` compares dominant shares, the naive
    multi-resource extension of CH that the MCH paper (§I) shows breaking the
    hierarchical share guarantee (spec vector F3: 7/3/3). A cluster without
    the named resource is rejected with a :class:`ScenarioError`.
    """

    label = "Collapsed hierarchy"

    def __init__(self, resource: str | None = "cpu"):
        self.resource = resource

    def chooser(self, tree: Tree) -> FlatChooser:
        if self.resource is None:
            increment = list(ShareState(tree).mu)
        elif self.resource in tree.resources:
            j = tree.resources.index(self.resource)
            increment = [row[j] / tree.capacity[j] for row in tree.demand]
        else:
            raise ScenarioError(
                "policy_params.resource",
                f"this collapsed hierarchy compares shares of {self.resource!r}, "
                f"which the cluster does not define (it has {', '.join(tree.resources)})",
            )
        return FlatChooser(tree, increment, lambda state: collapsed_weights(tree, _active(state)))
