"""Hierarchical policies: a descent from the root to a leaf at every pick (H-DRF, naive H-DRF)."""

from __future__ import annotations

from heapq import heapify, heappop, heappush

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
        wants = [state.wants(leaf) for leaf in range(tree.leaf_count)]
        shares = [state.running[leaf] * state.mu[leaf] for leaf in range(tree.leaf_count)]
        return hdrf_pick(tree, wants, shares, self._vectors)


def hdrf_pick(tree: Tree, wants, shares, vectors) -> int | None:
    """H-DRF's choice of leaf from per-leaf views: the protocol the fair-sharing and site engines share.

    ``wants[leaf]``: the leaf is not blocked (it has something to run that
    fits); ``shares[leaf]``: its dominant share (of its running tasks, or
    of its running jobs and decayed past usage); ``vectors[leaf]``: its
    normalised demand direction (max component 1). Departments rescale
    their non-blocked children to the smallest weighted share among them
    (see the package docstring). Returns ``None`` when every leaf is blocked.
    """
    return HDRFLevels(tree, wants, shares, vectors).pick()


def summed_directions(tree: Tree, a: int, blocked, vectors) -> list[float]:
    """``sum_c w_c s_c`` over department ``a``'s non-blocked children, summed in their order: the vector whose
    largest component rescales ``a``'s share in H-DRF. Shared by :class:`HDRFLevels` and the site engine's keys,
    so both compute it with the same floating-point sums."""
    raw = [0.0] * len(tree.capacity)
    weight = tree.weight
    for c in tree.children[a]:
        if blocked[c]:
            continue
        wc = weight[c]
        for j, v in enumerate(vectors[c]):
            raw[j] += wc * v
    return raw


class HDRFLevels:
    """Every node's H-DRF state (blocked, rescaled share, demand direction), kept up to date leaf by leaf.

    Built from per-leaf views as :func:`hdrf_pick` takes them; after
    :meth:`update` of one leaf only the departments on its path are
    recomputed, so a sequence of picks (a queue order) costs the path's
    departments per pick, not the whole tree.

    Each department keeps its non-blocked children in a heap by weighted
    share ``share_c / w_c`` (ties: the child listed first), so its lowest
    child -- the one a descent takes, and its rescaling level -- is the
    heap's top; entries a later update superseded are skipped when they
    surface (lazy deletion, a version per node). The sum of its children's
    weighted directions ``sum_c w_c s_c`` is recomputed, in the children's
    order, only when a child's direction or blocked state changed; a change
    of share alone, the usual step of a queue order, costs a heap push per
    level. Values are those of a recomputation from scratch, bit for bit.
    """

    def __init__(self, tree: Tree, wants, shares, vectors):
        self.tree = tree
        n = tree.node_count
        self.blocked = [True] * n
        self.share = [0.0] * n
        self.vectors: list[list[float] | None] = [None] * n
        self.version = [0] * n
        self.heaps: list[list[tuple[float, int, int, int]]] = [[] for _ in range(n)]
        self.raw: list[list[float] | None] = [None] * n  # sum_c w_c s_c over non-blocked children
        self.top = [0.0] * n  # max_j raw[a][j], as of the last direction computed
        self.position = tree.sibling_index
        for leaf, node in enumerate(tree.leaf_node):
            if wants[leaf]:
                self.blocked[node] = False
                self.share[node] = shares[leaf]
                self.vectors[node] = vectors[leaf]
        weight = tree.weight
        for a in tree.internal_postorder:
            heap = self.heaps[a] = [(self.share[c] / weight[c], self.position[c], c, 0)
                                    for c in tree.children[a] if not self.blocked[c]]
            heapify(heap)
            self._sum_directions(a)
            self._department(a)
        self._paths: dict[int, list[int]] = {}

    def _sum_directions(self, a: int) -> None:
        """``raw[a]``: the weighted directions of ``a``'s non-blocked children, summed in their order."""
        self.raw[a] = summed_directions(self.tree, a, self.blocked, self.vectors)

    def _lowest(self, a: int) -> tuple[float, int, int, int] | None:
        """The heap entry of ``a``'s non-blocked child of lowest weighted share (stale entries dropped)."""
        heap, version = self.heaps[a], self.version
        while heap and heap[0][3] != version[heap[0][2]]:
            heappop(heap)
        return heap[0] if heap else None

    def _department(self, a: int, directions_changed: bool = True) -> None:
        """Department ``a`` from its children: children at their smallest weighted share, summed.

        ``directions_changed``: ``raw[a]`` may have changed since the last
        call; when it has not, the direction and its largest component are
        those computed then (a change of a child's share moves only the share).
        """
        lowest = self._lowest(a)
        if lowest is None:
            self.blocked[a], self.share[a], self.vectors[a] = True, 0.0, None
            return
        if directions_changed or self.vectors[a] is None:
            raw = self.raw[a]
            top = self.top[a] = max(raw)
            vector = [x / top for x in raw]
            if vector != self.vectors[a]:
                self.vectors[a] = vector
        self.blocked[a], self.share[a] = False, lowest[0] * self.top[a]

    def _changed(self, node: int, parent: int) -> None:
        """``node``'s share or blocked state changed: a fresh entry in its parent's heap."""
        self.version[node] += 1
        if not self.blocked[node]:
            heap = self.heaps[parent]
            heappush(heap, (self.share[node] / self.tree.weight[node], self.position[node], node,
                            self.version[node]))
            if len(heap) > 2 * len(self.tree.children[parent]) + 16:
                version = self.version
                self.heaps[parent] = [e for e in heap if e[3] == version[e[2]]]
                heapify(self.heaps[parent])

    def update(self, leaf: int, wants: bool, share: float, vector) -> None:
        """One leaf's view changed: recompute it and the departments above it, up to the first that keeps its state."""
        tree, blocked, shares, vectors = self.tree, self.blocked, self.share, self.vectors
        node = tree.leaf_node[leaf]
        # "turned": blocked state or direction changed, so the parent's summed directions must be recomputed.
        turned = blocked[node] == wants or (wants and vector != vectors[node])
        blocked[node] = not wants
        shares[node] = share if wants else 0.0
        vectors[node] = vector if wants else None
        path = self._paths.get(leaf)
        if path is None:
            path = self._paths[leaf] = tree.ancestors(node)
        for a in path:
            self._changed(node, a)
            before = (blocked[a], shares[a], vectors[a])
            if turned:
                self._sum_directions(a)
            self._department(a, turned)
            turned = before[0] != blocked[a] or before[2] != vectors[a]
            if not turned and before[1] == shares[a]:
                return   # the departments above see no change
            node = a

    def pick(self) -> int | None:
        """The leaf H-DRF serves next: descend into the non-blocked child of lowest weighted share."""
        tree = self.tree
        if self.blocked[0]:
            return None
        node = 0
        while not tree.is_leaf(node):
            node = self._lowest(node)[2]
        return tree.leaf_of_node[node]


def naive_pick(tree: Tree, wants, usage) -> int | None:
    """Naive hierarchical DRF's choice of leaf: descend by each node's weighted dominant share of ``usage``.

    ``usage[node]`` is the node's summed usage per resource (a department:
    its subtree's); ``wants[leaf]`` as in :func:`hdrf_pick`. Shared by the
    fair-sharing and site engines.
    """
    capacity, weight = tree.capacity, tree.weight
    blocked = [True] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        blocked[node] = not wants[leaf]
    for a in tree.internal_postorder:
        blocked[a] = all(blocked[c] for c in tree.children[a])
    if blocked[0]:
        return None

    def level(node: int) -> float:
        return max(u / c for u, c in zip(usage[node], capacity)) / weight[node]

    node = 0
    while not tree.is_leaf(node):
        node = min((c for c in tree.children[node] if not blocked[c]), key=level)
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

    def _add(self, leaf: int, sign: float) -> None:
        demand = self._tree.demand[leaf]
        for node in self._paths[leaf]:
            usage = self._usage[node]
            for j, d in enumerate(demand):
                usage[j] += sign * d

    def pick(self, state: ShareState) -> int | None:
        return naive_pick(self._tree, [state.wants(leaf) for leaf in range(self._tree.leaf_count)], self._usage)

    def allocated(self, state: ShareState, leaf: int) -> None:
        self._add(leaf, 1.0)

    def released(self, state: ShareState, leaf: int) -> None:
        self._add(leaf, -1.0)
