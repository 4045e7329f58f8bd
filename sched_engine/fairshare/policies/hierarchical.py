"""Hierarchical policies: a descent from the root to a leaf at every pick (H-DRF, naive H-DRF)."""

from __future__ import annotations

from ...core.registry import Parametrised
from ..model import Tree
from ..state import ShareState
from .weights import normalized_demands


class HDRF(Parametrised):
    """Hierarchical DRF with rescaling to the minimum and blocked-node handling."""

    label = "H-DRF"

    def chooser(self, tree: Tree) -> "HDRFChooser":
        return HDRFChooser(tree)


class RecomputingChooser:
    """Base of choosers that recompute their view on every pick.

    They keep no index, so allocation, release and activity notifications
    need no work, and they do not flatten the tree (no weights to show).
    """

    def allocated(self, state: ShareState, leaf: int) -> None:
        pass

    def released(self, state: ShareState, leaf: int) -> None:
        pass

    def activity_changed(self, state: ShareState) -> None:
        pass

    def flat_weights(self) -> None:
        return None


class HDRFChooser(RecomputingChooser):
    """Recomputes every department's rescaled share per decision: O(q m)."""

    def __init__(self, tree: Tree):
        self._tree = tree
        self._vectors = normalized_demands(tree)
        self._postorder = tree.internal_postorder

    def pick(self, state: ShareState) -> int | None:
        tree = self._tree
        weight, children = tree.weight, tree.children
        n, m = tree.node_count, len(tree.capacity)
        blocked = [True] * n
        share = [0.0] * n
        vectors: list[list[float] | None] = [None] * n
        for leaf, node in enumerate(tree.leaf_node):
            if state.wants(leaf):
                blocked[node] = False
                share[node] = state.running[leaf] * state.mu[leaf]
                vectors[node] = self._vectors[leaf]
        for a in self._postorder:
            lowest = None
            raw = [0.0] * m
            for c in children[a]:
                if blocked[c]:
                    continue
                level = share[c] / weight[c]
                if lowest is None or level < lowest:
                    lowest = level
                wc, vc = weight[c], vectors[c]
                for j in range(m):
                    raw[j] += wc * vc[j]
            if lowest is None:
                continue
            blocked[a] = False
            top = max(raw)
            share[a] = lowest * top
            vectors[a] = [x / top for x in raw]
        if blocked[0]:
            return None
        node = 0
        while not tree.is_leaf(node):
            node = min(
                (c for c in children[node] if not blocked[c]),
                key=lambda c: share[c] / weight[c],
            )
        return tree.leaf_of_node[node]


class NaiveHierarchicalDRF(Parametrised):
    """Hadoop Fair Scheduler style: DRF at every level on actual summed usage."""

    label = "Naive hierarchical DRF"

    def chooser(self, tree: Tree) -> "NaiveChooser":
        return NaiveChooser(tree)


class NaiveChooser(RecomputingChooser):
    """Keeps each department's summed usage up to date; descends by its share."""

    def __init__(self, tree: Tree):
        self._tree = tree
        self._usage = [[0.0] * len(tree.capacity) for _ in range(tree.node_count)]
        self._postorder = tree.internal_postorder
        self._paths = [[tree.leaf_node[leaf], *tree.ancestors(tree.leaf_node[leaf])] for leaf in range(tree.leaf_count)]

    def _share(self, node: int) -> float:
        capacity = self._tree.capacity
        return max(u / c for u, c in zip(self._usage[node], capacity)) / self._tree.weight[node]

    def _add(self, leaf: int, sign: float) -> None:
        demand = self._tree.demand[leaf]
        for node in self._paths[leaf]:
            usage = self._usage[node]
            for j, d in enumerate(demand):
                usage[j] += sign * d

    def pick(self, state: ShareState) -> int | None:
        tree = self._tree
        blocked = [True] * tree.node_count
        for leaf, node in enumerate(tree.leaf_node):
            blocked[node] = not state.wants(leaf)
        for a in self._postorder:
            blocked[a] = all(blocked[c] for c in tree.children[a])
        if blocked[0]:
            return None
        node = 0
        while not tree.is_leaf(node):
            node = min((c for c in tree.children[node] if not blocked[c]), key=self._share)
        return tree.leaf_of_node[node]

    def allocated(self, state: ShareState, leaf: int) -> None:
        self._add(leaf, 1.0)

    def released(self, state: ShareState, leaf: int) -> None:
        self._add(leaf, -1.0)
