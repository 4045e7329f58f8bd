"""Allocation state shared by the simulator and every share policy.

Leaves are jobs of identical tasks; the state counts each leaf's running and
pending tasks and the cluster's free capacity. Policies read it; only
:meth:`ShareState.allocate` / :meth:`ShareState.release` change it, so the
capacity invariant ``sum_i running_i * d_ij <= c_j`` (paper §II-A, the
capacity constraint) is enforced in one place.
"""

from __future__ import annotations

from typing import Protocol

from ..core.loop import scheduler_clock
from .model import Tree

# Relative slack when comparing a demand with free capacity, so repeated
# float additions and subtractions of the same amounts cannot block a task
# that exactly fits.
FIT_TOLERANCE = 1e-9


class ShareState:
    """Running/pending task counts per leaf and free capacity per resource."""

    __slots__ = ("tree", "free", "running", "pending", "activity_epoch", "needs", "slack", "mu")

    def __init__(self, tree: Tree):
        self.tree = tree
        self.free = list(tree.capacity)
        self.running = [0] * tree.leaf_count
        self.pending = [0] * tree.leaf_count
        # Bumped whenever a leaf gains or loses all its pending tasks: the
        # set of leaves that want resources ("active" leaves) changed.
        self.activity_epoch = 0
        self.slack = [FIT_TOLERANCE * c for c in tree.capacity]
        # Per leaf, the (resource index, amount) pairs it actually needs.
        self.needs = [tuple((j, d) for j, d in enumerate(row) if d > 0) for row in tree.demand]
        # Per-task dominant share mu_i = max_j d_ij / c_j (paper §II-B.1).
        self.mu = [max(d / c for d, c in zip(row, tree.capacity)) for row in tree.demand]

    def fits(self, leaf: int) -> bool:
        """True when one more task of ``leaf`` fits in the free capacity."""
        free, slack = self.free, self.slack
        for j, amount in self.needs[leaf]:
            if free[j] + slack[j] < amount:
                return False
        return True

    def wants(self, leaf: int) -> bool:
        """True when ``leaf`` has a task waiting and that task fits now."""
        return self.pending[leaf] > 0 and self.fits(leaf)

    def is_active(self, leaf: int) -> bool:
        return self.pending[leaf] > 0

    def add_pending(self, leaf: int, count: int) -> None:
        if count <= 0:
            return
        if self.pending[leaf] == 0:
            self.activity_epoch += 1
        self.pending[leaf] += count

    def drop_pending(self, leaf: int) -> int:
        """Remove every pending task of ``leaf``; returns how many."""
        dropped = self.pending[leaf]
        if dropped:
            self.pending[leaf] = 0
            self.activity_epoch += 1
        return dropped

    def allocate(self, leaf: int) -> None:
        """Start one pending task of ``leaf`` (it must fit)."""
        if self.pending[leaf] <= 0 or not self.fits(leaf):
            raise RuntimeError(f"leaf {self.tree.names[self.tree.leaf_node[leaf]]!r} cannot start a task now")
        free = self.free
        for j, amount in self.needs[leaf]:
            free[j] -= amount
        self.running[leaf] += 1
        self.pending[leaf] -= 1
        if self.pending[leaf] == 0:
            self.activity_epoch += 1

    def release(self, leaf: int, count: int = 1) -> None:
        """End ``count`` running tasks of ``leaf`` and return their resources."""
        if count > self.running[leaf]:
            raise RuntimeError("releasing more tasks than are running")
        free = self.free
        for j, amount in self.needs[leaf]:
            free[j] += amount * count
        self.running[leaf] -= count

    def dominant_share(self, leaf: int) -> float:
        return self.running[leaf] * self.mu[leaf]


class ShareChooser(Protocol):
    """Per-run decision maker of a share-allocation policy.

    The simulator calls :meth:`pick` repeatedly; each returned leaf gets one
    task. ``allocated``/``released`` report changes so incremental policies
    can keep their indexes; ``activity_changed`` reports that the set of
    leaves with pending tasks changed (MCH re-flattens its tree then).
    """

    def pick(self, state: ShareState) -> int | None: ...

    def allocated(self, state: ShareState, leaf: int) -> None: ...

    def released(self, state: ShareState, leaf: int) -> None: ...

    def activity_changed(self, state: ShareState) -> None: ...

    def flat_weights(self) -> list[float] | None: ...


class DecisionCounter:
    """Total decisions and the time spent inside a chooser (decision cost)."""

    __slots__ = ("decisions", "seconds", "activity_changes")

    def __init__(self) -> None:
        self.decisions = 0
        self.seconds = 0.0
        self.activity_changes = 0


def fill(state: ShareState, chooser: ShareChooser, counter: DecisionCounter, epoch: list[int]) -> list[int]:
    """Give free resources away one task at a time until no task fits.

    ``epoch`` is a one-element list holding the activity epoch the chooser
    last saw; it is updated in place. Returns the leaves that received a
    task, in order (a leaf appears once per task).
    """
    started = []
    clock = scheduler_clock
    t0 = clock()
    if epoch[0] != state.activity_epoch:
        chooser.activity_changed(state)
        counter.activity_changes += 1
        epoch[0] = state.activity_epoch
    while True:
        leaf = chooser.pick(state)
        if leaf is None:
            break
        state.allocate(leaf)
        chooser.allocated(state, leaf)
        if epoch[0] != state.activity_epoch:
            chooser.activity_changed(state)
            counter.activity_changes += 1
            epoch[0] = state.activity_epoch
        started.append(leaf)
    counter.seconds += clock() - t0
    counter.decisions += len(started)
    return started


def progressive_filling(tree: Tree, policy) -> ShareState:
    """Static allocation: every job's tasks pending at once, one fill pass.

    This is the progressive-filling setting of the DRF and H-DRF papers (no
    task ever ends); returns the final state.
    """
    state = ShareState(tree)
    for leaf, count in enumerate(tree.tasks):
        state.add_pending(leaf, count)
    fill(state, policy.chooser(tree), DecisionCounter(), [-1])
    return state
