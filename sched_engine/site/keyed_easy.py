"""EASY's walk after the head in a fair order read by keys (:class:`~.keyed.KeyedWalk`).

Merges, leaf by leaf, only the waiting jobs meeting EASY's necessary
condition, in the order's sequence, and never generates the jobs in
between (see :mod:`.keyed` and :mod:`.keys`).
"""

from __future__ import annotations

from bisect import bisect_right
from heapq import heappop, heappush

import numpy as np

from .keyed import CANDIDATE, EVENT
from .waiting import WAITING


def after_head(walk, head: int, first):
    """The waiting jobs after ``head`` that meet EASY's condition, in the order's sequence, lazily.

    ``first(queue, low)``: the position in a leaf's
    :class:`~.waiting.ArrivalQueue` of its first job at or after ``low``
    meeting the condition as it stands when asked (-1: none). A leaf's
    jobs meeting it come in its arrival order, which is its keys' order,
    so each leaf offers one item at a time: its next job meeting the
    condition, or its next job whose pick may move a ``top`` (H-DRF's
    events: its last job; under a root's child with a memory-dominant
    job waiting, also each job after which the leaf's direction turns),
    whichever comes first (the job first when they are the same). When
    at most one leaf has a job meeting the condition at the walk's start
    (most walks), its jobs are the walk, in its arrival order: no key.
    """
    keys, sim = walk.keys, walk.sim
    status, leaf_of = sim.status, sim.leaf
    head_leaf = leaf_of[head]
    found: dict[int, int] = {}     # leaf -> position in its queue of its next job meeting the condition (-1: none)
    pending = [0]   # leaves with a job that could start ahead

    def search(leaf: int, low: int) -> None:
        queue = walk.queues[leaf]
        position = first(queue, low)
        if position >= 0 and queue.jobs[position] == head:
            position = first(queue, position + 1)
        pending[0] += (position >= 0) - (found.get(leaf, -1) >= 0)
        found[leaf] = position

    offering = [leaf for leaf in sorted(walk.wanting) if walk.leaves[leaf].waiting - (leaf == head_leaf) > 0]
    for leaf in offering:
        search(leaf, 0)
    if pending[0] <= 1:
        # At most one leaf has a job meeting the condition, and each start only tightens it (no other leaf gains
        # one): the walk is that leaf's jobs meeting it, in its arrival order, which is its keys' order. No key
        # is read, no event can reorder anything.
        for leaf, position in found.items():
            queue = walk.queues[leaf]
            while position >= 0:
                yield queue.jobs[position]
                search(leaf, position + 1)
                position = found[leaf]
        return
    mixed = not walk.cpu_dominant(head)
    directed: dict[int, list[int]] = {}   # leaf following its directions -> its slots, this pass's
    events: dict[int, list[int]] = {}     # leaf -> slots of the jobs whose pick may move a top, ascending
    if mixed:
        branches = walk._directed_branches(walk.wanting)
        vectors: dict[int, list[float]] = {}
        for leaf in sorted(walk.wanting):
            if keys.branch(leaf) not in branches:
                continue
            jobs, slots = walk.leaves[leaf], walk._slots(leaf)
            begin = 0   # the jobs before it were started or cancelled ahead of the head (or are the head)
            while begin < len(slots) and (status[jobs.jobs[slots[begin]]] != WAITING
                                          or jobs.jobs[slots[begin]] == head):
                begin += 1
            if begin == len(slots):
                continue
            directed[leaf], events[leaf] = slots, turns(walk, leaf, slots, begin)
            vectors[leaf] = walk._direction(leaf, slots[begin])
        closed = head_leaf not in vectors and keys.branch(head_leaf) in branches
        state = keys.mixed_state(vectors, closed=[head_leaf] if closed else [])
        if walk.leaves[head_leaf].waiting == 1 and not closed:
            keys.close(head_leaf, state)   # the head was its leaf's last job
    else:
        state = keys.walk_state() if keys.events else None
        if keys.events and walk.leaves[head_leaf].waiting == 1:
            keys.exhaust(head_leaf, state)   # the head was its leaf's last job
    offered: dict[int, tuple[int, int, int]] = {}  # leaf -> (slot, kind, position in its queue) on the heap
    version: dict[int, int] = {}
    cursor: dict[int, int] = {}    # leaf -> its next event, an index into events[leaf]
    heap = []

    def offer(leaf: int) -> None:
        """Put the leaf's next item on the heap: its next job meeting the condition or its next event."""
        position, queue = found[leaf], walk.queues[leaf]
        candidate = walk.slot[queue.jobs[position]] if position >= 0 else None
        turns, at = events.get(leaf), cursor.get(leaf, 0)
        event = turns[at] if turns is not None and at < len(turns) else None
        if candidate is not None and (event is None or candidate <= event):
            item = (candidate, CANDIDATE, position)
        elif event is not None:
            item = (event, EVENT, -1)
        else:
            return
        offered[leaf] = item
        push(leaf)

    def push(leaf: int) -> None:
        """The leaf's offered item on the heap, keyed by the walk's state now."""
        slot, kind, _ = offered[leaf]
        heappush(heap, (keys.key(leaf, walk._dominant(leaf, slot), state), kind, leaf, version[leaf]))

    for leaf in offering:
        jobs = walk.leaves[leaf]
        if keys.events and leaf not in directed and keys.may_move(leaf, state, mixed):
            slot, listed = jobs.count - 1, jobs.jobs
            while not (jobs.live[slot] and status[listed[slot]] == WAITING and listed[slot] != head):
                slot -= 1
            events[leaf] = [slot]
        version[leaf] = 0
        offer(leaf)
    while heap:
        _, kind, leaf, seen = heappop(heap)
        if seen != version[leaf]:
            continue
        position = offered.pop(leaf)[2]
        if kind == CANDIDATE:
            yield walk.queues[leaf].jobs[position]
            search(leaf, position + 1)
            offer(leaf)
            if not pending[0]:
                return
            continue
        at = cursor[leaf] = cursor.get(leaf, 0) + 1
        if leaf in directed:
            slots = directed[leaf]
            after = bisect_right(slots, events[leaf][at - 1])   # the job the leaf offers next, if any
            moved = keys.turn(leaf, walk._direction(leaf, slots[after]) if after < len(slots) else None, state)
            offer(leaf)
        elif mixed:
            moved = keys.close(leaf, state)
        else:
            moved = keys.exhaust(leaf, state)
        if moved is None:
            continue
        for other in keys.leaves_under[moved]:   # the leaves under the moved department: keyed again
            if other in offered:
                version[other] += 1
                push(other)


def turns(walk, leaf: int, slots: list[int], begin: int) -> list[int]:
    """The slots, from ``slots[begin]`` on, of the leaf's jobs after which its direction turns (as
    :func:`~.waiting.direction` computes each), and of its last job."""
    jobs = walk.leaves[leaf]
    listed = np.asarray(slots[begin:], dtype=np.int64)
    cpu, memory = jobs.cpu[listed], jobs.memory[listed]
    top = np.maximum(cpu, memory)
    along, across = cpu / top, memory / top
    turned = np.flatnonzero((along[1:] != along[:-1]) | (across[1:] != across[:-1]))
    return listed[turned].tolist() + [slots[-1]]
