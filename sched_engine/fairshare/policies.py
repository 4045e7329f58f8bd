"""Share-allocation policies for hierarchical multi-resource fair sharing.

Every policy is a small parameter-only object whose :meth:`chooser` builds the
per-run decision maker (:class:`~.state.ShareChooser`). All of them allocate
one task at a time to the leaf they pick; they differ in how they pick.

Readings of the papers (documented because the papers leave room):

* **DRF** (Ghodsi et al., NSDI'11): lowest dominant share ``mu_i t_i`` among
  leaves whose next task fits; the hierarchy is ignored.
* **Weighted DRF**: lowest ``mu_i t_i / w_i`` with ``w_i`` the leaf's own
  weight; the hierarchy is ignored.
* **Naive hierarchical DRF** (Hadoop Fair Scheduler style, H-DRF paper §4):
  from the root, descend into the child with the lowest weighted dominant
  share of its *actual summed* usage, skipping children with no leaf that can
  take a task. Starves dove-tailing leaves (spec vector F5).
* **H-DRF** (Bhattacharya et al., SoCC'13): the same descent, but a
  department's share is computed by *rescaling* its non-blocked children to
  the smallest weighted share among them and summing the rescaled
  consumption; *blocked* nodes (a leaf whose task does not fit or that has
  nothing pending; a department whose children are all blocked) are ignored.
  For a leaf the consumption direction is its normalised demand
  ``s_i = d_i / (c mu_i)``, so a department's share is
  ``min_c(D_c / w_c) * max_j sum_c w_c s_c^j``.
* **C-CH / M-CH** (collapsed hierarchies, Chandra & Shenoy, as named in the
  MCH paper §IV-B): each active leaf's weight is its entitlement
  ``prod (w_a / sum of active sibling weights)`` along its path; the leaf with
  the lowest *single-resource* share (CPU for C-CH, memory for M-CH) divided
  by that weight gets the task. **CH + DRF** compares dominant shares
  instead: the naive multi-resource CH of the MCH paper's introduction.
* **MCH** (You et al., IEEE Comm. Letters 2019, §III-A): flatten the tree into
  leaf weights (:func:`mch_flat_weights`), then weighted DRF. The flattening
  is recomputed whenever the set of active leaves changes.
"""

from __future__ import annotations

import heapq
from typing import Callable

from ..core.errors import ScenarioError
from ..core.registry import Parametrised
from .model import Tree
from .state import ShareState


def normalized_demands(tree: Tree) -> list[list[float]]:
    """Per leaf, ``s_i^j = d_i^j / (c_j mu_i)`` (MCH paper §III-A.2); max component 1."""
    result = []
    for row in tree.demand:
        shares = [d / c for d, c in zip(row, tree.capacity)]
        mu = max(shares)
        result.append([x / mu for x in shares])
    return result


def _department_vectors(tree: Tree, live: list[bool], leaf_vectors: list[list[float]]):
    """Bottom-up Eq. (2): a department's normalised demand and its ``mu``.

    For every department ``a`` with a live child, ``raw_a = sum over live
    children c of w_c * s_c`` (weights generalise the paper's equal-weight
    case), ``mu_a = max_j raw_a^j`` and ``s_a = raw_a / mu_a``. ``live`` is
    updated in place for departments. Returns ``(s, mu, raw_root)``.
    """
    node_count, m = tree.node_count, len(tree.capacity)
    vectors: list[list[float] | None] = [None] * node_count
    mu = [0.0] * node_count
    for leaf, node in enumerate(tree.leaf_node):
        if live[node]:
            vectors[node] = leaf_vectors[leaf]
            mu[node] = 1.0
    raw_root = [0.0] * m
    weight = tree.weight
    for a in tree.internal_postorder:
        raw = None
        for c in tree.children[a]:
            if live[c]:
                wc = weight[c]
                if raw is None:
                    raw = [wc * v for v in vectors[c]]
                else:
                    raw = [r + wc * v for r, v in zip(raw, vectors[c])]
        if raw is None:
            live[a] = False
            continue
        live[a] = True
        top = max(raw)
        mu[a] = top
        vectors[a] = [x / top for x in raw]
        if a == 0:
            raw_root = raw
    return vectors, mu, raw_root


def mch_flat_weights(
    tree: Tree, active: list[bool], leaf_vectors: list[list[float]] | None = None
) -> tuple[list[float], int]:
    """MCH's flattened weights for the active leaves (paper §III-A.3).

    Returns ``(weights, k_prime)``: one weight per leaf (0 for inactive
    leaves) and the index of the resource taken as the first to saturate.
    ``leaf_vectors`` (from :func:`normalized_demands`) may be passed to avoid
    recomputing them.

    * ``k'`` is read as the resource with the largest aggregate normalised
      demand at the root, ``argmax_j sum_c w_c s_c^j``: when siblings grow
      their dominant shares at equal (weighted) speed, Eq. (1), that resource
      is consumed fastest and saturates first. Ties go to the first resource.
    * A leaf that demands ``k'`` (a full-type job, or a partial-type job whose
      resource is ``k'``: Case 1 and Case 2 sub-case 2) gets
      ``w_i = w_leaf * prod_{a ancestor, a != root} w_a / mu_a``, which is the
      paper's ``prod_{h=1}^{H-1} 1/mu_{P^h(i)}`` when every weight is 1.
    * A leaf that does not demand ``k'`` (Case 2 sub-case 1) only competes
      once ``k'`` is saturated, against the other leaves not demanding ``k'``;
      its weight uses the same product with ``mu'_a`` computed over that
      sub-hierarchy. In the paper's minimal case (Fig. 3, and Fig. 4) every
      such ``mu'_a`` is 1 and this is the paper's ``w_i = 1``; with several
      such siblings it keeps their parent's share split among them as H-DRF
      does, where a literal ``w_i = 1`` would not.
    """
    if leaf_vectors is None:
        leaf_vectors = normalized_demands(tree)
    live = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live[node] = active[leaf]
    _, mu, raw_root = _department_vectors(tree, live, leaf_vectors)
    k_prime = max(range(len(raw_root)), key=lambda j: (raw_root[j], -j))

    live_rest = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live_rest[node] = active[leaf] and tree.demand[leaf][k_prime] == 0
    if any(live_rest):
        _, mu_rest, _ = _department_vectors(tree, live_rest, leaf_vectors)
    else:
        mu_rest = mu  # no leaf lacks k': the second product is never used

    scale = [1.0] * tree.node_count  # product of w_a / mu_a from the root's children down
    scale_rest = [1.0] * tree.node_count
    for node in range(1, tree.node_count):  # pre-order: parents first
        if tree.is_leaf(node):
            continue
        p, w = tree.parent[node], tree.weight[node]
        scale[node] = scale[p] * w / mu[node] if live[node] else 0.0
        scale_rest[node] = scale_rest[p] * w / mu_rest[node] if live_rest[node] else 0.0
    weights = [0.0] * tree.leaf_count
    for leaf, node in enumerate(tree.leaf_node):
        if not active[leaf]:
            continue
        parent = tree.parent[node]
        factor = scale[parent] if tree.demand[leaf][k_prime] > 0 else scale_rest[parent]
        weights[leaf] = tree.weight[node] * factor
    return weights, k_prime


def collapsed_weights(tree: Tree, active: list[bool]) -> list[float]:
    """Collapsed-hierarchy entitlements: ``prod w_a / sum_{active siblings} w``."""
    live = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live[node] = active[leaf]
    for a in tree.internal_postorder:
        live[a] = any(live[c] for c in tree.children[a])
    share = [0.0] * tree.node_count
    share[0] = 1.0
    for node in range(tree.node_count):
        kids = [c for c in tree.children[node] if live[c]]
        total = sum(tree.weight[c] for c in kids)
        for c in kids:
            share[c] = share[node] * tree.weight[c] / total
    return [share[node] if active[leaf] else 0.0 for leaf, node in enumerate(tree.leaf_node)]


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
