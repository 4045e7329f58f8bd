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

Every order also carries the backfilling of the run (``none``, ``easy``)
and ``backfill_depth``, how many jobs after the head a pass examines (0: all
of them, as the batch engine's EASY does).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.registry import Param, Parametrised
from ..fairshare.model import Tree
from ..fairshare.policies import HDRFLevels, mch_flat_weights, naive_pick

BACKFILLING = ("none", "easy")
SCHEMA = {
    "backfill": Param("choice", "backfilling after the head of the order: none or EASY", choices=BACKFILLING),
    "half_life_s": Param("number", "half-life of past usage in the shares, s (0: running jobs only)", low=0),
    "backfill_depth": Param("integer", "jobs after the head a pass examines for backfilling (0: all)", low=0),
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
        """A picker over these per-leaf views for one pass; the caller changes them in place and says which leaf.

        ``shares[leaf]``: its usage as fractions of the site's CPUs and
        memory, ``dominant[leaf]`` the larger of the two; ``vectors[leaf]``:
        the direction of its next job's demand (max component 1);
        ``next_job[leaf]``: that job's index (arrival order).
        """
        return Picker(self, tree, wants, shares, dominant, vectors, next_job)

    def pick(self, tree: Tree, wants, shares, dominant, vectors, next_job) -> int | None:
        """The leaf whose oldest waiting job comes next (``None``: no leaf wants)."""
        raise NotImplementedError


class Picker:
    """One pass's picks: the order's :meth:`QueueOrder.pick` over views the caller keeps up to date."""

    def __init__(self, order: QueueOrder, tree: Tree, wants, shares, dominant, vectors, next_job):
        self.order, self.tree = order, tree
        self.views = (wants, shares, dominant, vectors, next_job)

    def changed(self, leaf: int) -> None:
        """The views of ``leaf`` changed (its next job started or was passed over)."""

    def pick(self) -> int | None:
        return self.order.pick(self.tree, *self.views)


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


class WeightedDRFOrder(QueueOrder):
    """Lowest dominant share over the user's own weight first, departments ignored."""

    name = "wdrf"

    def pick(self, tree, wants, shares, dominant, vectors, next_job):
        weight = tree.weight
        return _lowest(wants, [d / weight[node] for d, node in zip(dominant, tree.leaf_node)])


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


class _MCHPicker(Picker):
    """MCH's flattened weights, recomputed only when a leaf starts or stops wanting or its demand direction turns."""

    def __init__(self, order, tree, wants, shares, dominant, vectors, next_job):
        super().__init__(order, tree, wants, shares, dominant, vectors, next_job)
        self.flat = MCHOrder.weights(tree, wants, vectors) if any(wants) else []
        self.seen = [(w, tuple(v)) for w, v in zip(wants, vectors)]
        self.stale = False

    def changed(self, leaf: int) -> None:
        wants, _, _, vectors, _ = self.views
        now = (wants[leaf], tuple(vectors[leaf]))
        if now != self.seen[leaf]:
            self.seen[leaf] = now
            self.stale = True

    def pick(self) -> int | None:
        wants, _, dominant, vectors, _ = self.views
        if not any(wants):
            return None
        if self.stale:
            self.flat = MCHOrder.weights(self.tree, wants, vectors)
            self.stale = False
        return _lowest(wants, [d / w if w > 0 else float("inf") for d, w in zip(dominant, self.flat)])


ORDERS = (FCFSOrder, DRFOrder, WeightedDRFOrder, NaiveHDRFOrder, HDRFOrder, MCHOrder)
