"""Queue orders of the site study: which waiting job comes next, by the organisation's fair share.

A queue order is the scheduling policy of a site run. It orders the waiting
jobs by progressive filling over the organisation tree: the order's next job
is the oldest waiting job of the leaf (user) the fair-sharing policy picks
given every leaf's share, and that job's demand then counts in its leaf's
share for the rest of the order (as if it ran), so a user with many jobs
does not take every place at the front. Shares are over two resources, CPUs
and memory, as fractions of the site's totals, counted on running jobs
(``half_life_s = 0``) or on their exponentially decayed usage (a half-life,
as Slurm's fair-share factor decays past usage). The fair-sharing engine's
own choosers decide (:func:`~sched_engine.fairshare.policies.hdrf_pick`,
:func:`~sched_engine.fairshare.policies.naive_pick`,
:func:`~sched_engine.fairshare.policies.mch_flat_weights`): the site engine
calls them with per-leaf views instead of identical tasks per leaf.

Orders: ``fcfs`` (arrival order: the batch engine's queue), ``drf`` (lowest
dominant share, hierarchy ignored), ``wdrf`` (lowest dominant share over the
user's own weight), ``naive-hdrf`` (descend by each department's summed
usage), ``hdrf`` (H-DRF: rescaled department shares, blocked nodes
ignored), ``mch`` (MCH's flattened weights, then weighted DRF).

Every order also carries the backfilling of the run (``none``, ``easy``,
``cons``: :mod:`.backfill`, :mod:`.conservative`) and ``backfill_depth``,
how many of the jobs after the head that could start (they meet EASY's
necessary condition) a pass examines (0: all of them, as the batch engine's
EASY does; under ``cons``, how many jobs of the order a pass plans). DRF,
weighted DRF and H-DRF also give keys (:meth:`QueueOrder.walk_keys`,
:mod:`.keyed`) from which EASY's walk reads the order's sequence without
generating it.
"""

from __future__ import annotations

from dataclasses import replace
from heapq import heapify, heappop, heappush

from ..core.registry import Param, Parametrised
from ..fairshare.model import Tree
from ..fairshare.policies import HDRFLevels, mch_flat_weights, naive_pick
from .keys import FlatKeys, HDRFKeys

BACKFILLING = ("none", "easy", "cons")
SCHEMA = {
    "backfill": Param("choice", "backfilling after the head of the order: none, EASY or conservative (CONS)",
                      choices=BACKFILLING),
    "half_life_s": Param("number", "half-life of past usage in the shares, s (0: running jobs only)", low=0),
    "backfill_depth": Param("integer", "jobs that could start after the head a pass of a fair order examines "
                            "(CONS: jobs of the order it plans; 0: all; the arrival order always examines every "
                            "job that could start)", low=0),
}


class QueueOrder(Parametrised):
    """Base of the orders: the constructor stores the run's backfilling and share parameters."""

    name = ""
    in_arrival_order = False

    def __init__(self, backfill: str = "easy", half_life_s: float = 0.0, backfill_depth: int = 1000):
        self.backfill = backfill
        self.half_life_s = half_life_s
        self.backfill_depth = backfill_depth

    def start(self, tree: Tree, wants: list[bool], shares: list[list[float]], dominant: list[float],
              vectors: list[list[float]], next_job: list[int]) -> "Picker":
        """The run's picker over these per-leaf views; the caller changes them in place and says which leaf.

        ``shares[leaf]``: its usage as fractions of the site's CPUs and
        memory, ``dominant[leaf]`` the larger of the two; ``vectors[leaf]``:
        the direction of its next job's demand (max component 1);
        ``next_job[leaf]``: that job's index (arrival order). One picker
        serves a whole run: within a pass the views move by progressive
        filling, and between passes they are set back to the leaves' true
        state (:class:`~.waiting.FairQueue`); either way :meth:`Picker.changed`
        names every leaf whose views changed before the next :meth:`Picker.pick`.
        """
        return Picker(self, tree, wants, shares, dominant, vectors, next_job)

    def pick(self, tree: Tree, wants, shares, dominant, vectors, next_job) -> int | None:
        """The leaf whose oldest waiting job comes next (``None``: no leaf wants)."""
        raise NotImplementedError

    def walk_keys(self, tree: Tree):
        """The keys that give this order's picks (:mod:`.keyed`), or ``None`` if its picks follow from no keys."""
        return None


class Picker:
    """Picks by :meth:`QueueOrder.pick` over the whole views, recomputed at each pick."""

    def __init__(self, order: QueueOrder, tree: Tree, wants, shares, dominant, vectors, next_job):
        self.order, self.tree = order, tree
        self.views = (wants, shares, dominant, vectors, next_job)

    def changed(self, leaf: int) -> None:
        """The views of ``leaf`` changed."""

    def pick(self) -> int | None:
        return self.order.pick(self.tree, *self.views)


class _LowestKeyPicker(Picker):
    """The wanting leaf of lowest key (ties: the lowest leaf), from a heap with lazy deletion.

    ``key(leaf)`` reads the views; a leaf's entry is replaced when it
    changes, so a pick costs a logarithm, not a scan of every leaf.
    """

    def __init__(self, order, tree, wants, shares, dominant, vectors, next_job):
        super().__init__(order, tree, wants, shares, dominant, vectors, next_job)
        self.version = [0] * tree.leaf_count
        self.rebuild()

    def key(self, leaf: int) -> float:
        raise NotImplementedError

    def rebuild(self) -> None:
        wants = self.views[0]
        self.heap = [(self.key(leaf), leaf, self.version[leaf]) for leaf, want in enumerate(wants) if want]
        heapify(self.heap)

    def changed(self, leaf: int) -> None:
        self.version[leaf] += 1
        if self.views[0][leaf]:
            heappush(self.heap, (self.key(leaf), leaf, self.version[leaf]))
            if len(self.heap) > 2 * len(self.version) + 16:
                version = self.version
                self.heap = [e for e in self.heap if e[2] == version[e[1]]]
                heapify(self.heap)

    def pick(self) -> int | None:
        heap, version = self.heap, self.version
        while heap and heap[0][2] != version[heap[0][1]]:
            heappop(heap)
        return heap[0][1] if heap else None


class FCFSOrder(QueueOrder):
    """Arrival order: the batch engine's queue (the baseline)."""

    name = "fcfs"
    in_arrival_order = True

    def pick(self, tree, wants, shares, dominant, vectors, next_job):
        best = None
        for leaf, want in enumerate(wants):
            if want and (best is None or next_job[leaf] < next_job[best]):
                best = leaf
        return best


def _lowest(wants, keys) -> int | None:
    best = None
    for leaf, want in enumerate(wants):
        if want and (best is None or keys[leaf] < keys[best]):
            best = leaf
    return best


class DRFOrder(QueueOrder):
    """Lowest dominant share first, the organisation ignored."""

    name = "drf"

    def pick(self, tree, wants, shares, dominant, vectors, next_job):
        return _lowest(wants, dominant)

    def walk_keys(self, tree):
        return FlatKeys(tree, weighted=False)

    def start(self, tree, wants, shares, dominant, vectors, next_job):
        return _DRFPicker(self, tree, wants, shares, dominant, vectors, next_job)


class _DRFPicker(_LowestKeyPicker):
    def key(self, leaf: int) -> float:
        return self.views[2][leaf]


class WeightedDRFOrder(QueueOrder):
    """Lowest dominant share over the user's own weight first, departments ignored."""

    name = "wdrf"

    def pick(self, tree, wants, shares, dominant, vectors, next_job):
        weight = tree.weight
        return _lowest(wants, [d / weight[node] for d, node in zip(dominant, tree.leaf_node)])

    def walk_keys(self, tree):
        return FlatKeys(tree, weighted=True)

    def start(self, tree, wants, shares, dominant, vectors, next_job):
        return _WeightedDRFPicker(self, tree, wants, shares, dominant, vectors, next_job)


class _WeightedDRFPicker(_LowestKeyPicker):
    def key(self, leaf: int) -> float:
        return self.views[2][leaf] / self.tree.weight[self.tree.leaf_node[leaf]]


class NaiveHDRFOrder(QueueOrder):
    """Naive hierarchical DRF: descend by each department's actual summed usage."""

    name = "naive-hdrf"

    def pick(self, tree, wants, shares, dominant, vectors, next_job):
        usage = [[0.0, 0.0] for _ in range(tree.node_count)]
        for leaf, node in enumerate(tree.leaf_node):
            usage[node] = list(shares[leaf])
        for a in tree.internal_postorder:
            total = usage[a]
            for c in tree.children[a]:
                total[0] += usage[c][0]
                total[1] += usage[c][1]
        return naive_pick(tree, wants, usage)


class HDRFOrder(QueueOrder):
    """H-DRF (Bhattacharya et al.): rescaled department shares, blocked nodes ignored."""

    name = "hdrf"

    def start(self, tree, wants, shares, dominant, vectors, next_job):
        return _HDRFPicker(tree, wants, dominant, vectors)

    def walk_keys(self, tree):
        return HDRFKeys(tree)


class _HDRFPicker(Picker):
    """H-DRF's node states kept from pick to pick: a changed leaf recomputes only its path."""

    def __init__(self, tree, wants, dominant, vectors):
        self.views = (wants, dominant, vectors)
        self.levels = HDRFLevels(tree, wants, dominant, vectors)

    def changed(self, leaf: int) -> None:
        wants, dominant, vectors = self.views
        self.levels.update(leaf, wants[leaf], dominant[leaf], vectors[leaf])

    def pick(self) -> int | None:
        return self.levels.pick()


class MCHOrder(QueueOrder):
    """MCH (You et al.): the tree flattened into leaf weights for the leaves that want, then weighted DRF."""

    name = "mch"

    def start(self, tree, wants, shares, dominant, vectors, next_job):
        return _MCHPicker(self, tree, wants, shares, dominant, vectors, next_job)

    @staticmethod
    def weights(tree, wants, vectors) -> list[float]:
        shaped = replace(tree, demand=tuple(tuple(v) for v in vectors))
        return mch_flat_weights(shaped, list(wants), vectors)[0]


class _MCHPicker(_LowestKeyPicker):
    """Weighted DRF by MCH's flattened weights, recomputed only when a leaf starts or stops wanting or its demand
    direction turns (then every key changes and the heap is rebuilt)."""

    def __init__(self, order, tree, wants, shares, dominant, vectors, next_job):
        self.flat = MCHOrder.weights(tree, wants, vectors) if any(wants) else [0.0] * tree.leaf_count
        self.seen = [(w, tuple(v)) for w, v in zip(wants, vectors)]
        self.stale = False
        super().__init__(order, tree, wants, shares, dominant, vectors, next_job)

    def key(self, leaf: int) -> float:
        weight = self.flat[leaf]
        return self.views[2][leaf] / weight if weight > 0 else float("inf")

    def changed(self, leaf: int) -> None:
        wants, _, _, vectors, _ = self.views
        now = (wants[leaf], tuple(vectors[leaf]))
        if now != self.seen[leaf]:
            self.seen[leaf] = now
            self.stale = True
        if not self.stale:
            super().changed(leaf)

    def pick(self) -> int | None:
        wants, _, _, vectors, _ = self.views
        if self.stale:
            if not any(wants):
                return None
            self.stale = False
            self.flat = MCHOrder.weights(self.tree, wants, vectors)
            self.version = [v + 1 for v in self.version]
            self.rebuild()
        return super().pick()


ORDERS = (FCFSOrder, DRFOrder, WeightedDRFOrder, NaiveHDRFOrder, HDRFOrder, MCHOrder)
