"""The site engine's scheduling pass: the queue order's heads, EASY's reservation and walk, or CONS's plans.

One pass per backfilling (:data:`PASSES`), chosen once per run: each a
generator over the site policy's state (:class:`~.policy.SitePolicy`),
run once after the events of each instant, yielding its decisions
(``Start``, ``Cancel``, ``Wake``), which the batch kernel applies before it
goes on. ``sim`` in each is the site's policy.
"""

from __future__ import annotations

from ..batch.policies.decisions import Cancel
from .backfill import backfill_easy
from .conservative import backfill_conservative
from .waiting import WAITING

NO_RESERVATION = "no reservation possible on the machines that are up"


def pass_without_backfilling(sim, now: float):
    """Start the order's jobs while they fit; the first that does not (``sim.head``) blocks every later one."""
    sim.head = (yield from sim.start_heads(sim.in_order())) if sim.waiting else None
    sim.resources_changed = False


def pass_conservative(sim, now: float):
    """Plan every job of the order afresh (:mod:`.conservative`) when something was freed or arrived."""
    if sim.waiting and (sim.resources_changed or sim.new_arrivals):
        yield from backfill_conservative(sim, sim.in_order(), now)
    sim.resources_changed = False


def pass_easy(sim, now: float):
    """Start the order's jobs while they fit, reserve for the first that does not (the head) and backfill around
    it; a pass with nothing freed reads only what may have changed (see below and :mod:`.backfill`)."""
    settled, sim.settled = sim.settled, False
    if not sim.waiting:
        sim.resources_changed = False
        return
    if sim.keyed is not None:
        sim.keyed.begin_pass()
    in_arrival_order = sim.order.in_arrival_order
    kept, fitting = sim.reservation, None
    if not sim.resources_changed and sim.reservation is not None and in_arrival_order:
        # Nothing freed: the jobs already examined still cannot start; a newcomer can become the head
        # only if the queue had none (then the reservation is None).
        candidates = iter([job for job in sim.new_arrivals if sim.status[job] == WAITING])
    else:
        if not in_arrival_order and not sim.resources_changed and sim.reservation is not None:
            fitting = [job for job in sim.new_arrivals if sim.status[job] == WAITING and sim.fit_now(job)]
            if not fitting:
                # Nothing was freed and no newcomer fits now: the jobs the last pass left waiting still cannot
                # start (the order moves only by the newcomers' place in it), so the pass is skipped. A
                # newcomer may still be examined by a later walk: the bound on what one examines grows.
                sim.settled, sim.settled_examined = settled, sim.settled_examined + len(sim.new_arrivals)
                return
        candidates = sim.in_order()
        running = sim.running_count()
        head = yield from sim.start_heads(candidates)
        # Under a fair order a job ahead of a head kept from an earlier pass may start now and hold CPUs past
        # the head's shadow time: the reservation is computed again (in arrival order no job overtakes a head).
        sim.reservation_stale |= sim.running_count() != running
        if sim.reservation_stale or head is None or sim.reservation is None or sim.reservation[0] != head:
            sim.reservation = None
        while head is not None and sim.reservation is None:
            sim.reservation = sim.reserve(head)
            if sim.reservation is not None:
                sim.reservation_stale = False
                break
            yield Cancel(head, NO_RESERVATION)
            head = yield from sim.start_heads(candidates)
        if head is None:
            sim.resources_changed = False
            return
        if in_arrival_order:
            candidates = None  # backfill_easy reads the arrival order by class
    sim.resources_changed = False
    newcomers = None
    if settled and fitting is not None and not sim.elastic["enabled"] and sim.spares(kept):
        newcomers = tuple(job for job in fitting if sim.status[job] == WAITING)
        depth = sim.order.backfill_depth
        if len({sim.leaf[job] for job in newcomers}) > 1 or \
                (depth and sim.settled_examined + len(sim.new_arrivals) > depth):
            newcomers = None
    if newcomers is not None:
        # The last walk was settled, nothing was freed since and the reservation spares no more than
        # it did: of the waiting jobs only the newcomers that fit may start, one user's, whose order is
        # their arrival order (backfill_easy's docstring).
        examined = sim.settled_examined + ((yield from backfill_easy(sim, newcomers, now)) if newcomers else 0)
    else:
        if sim.keyed is not None:
            candidates = sim.keyed   # the rest of the order read by key (sched_engine/site/keyed.py)
        examined = yield from backfill_easy(sim, candidates, now)
    # A walk cut short examined more than backfill_depth: the bound keeps the next pass from the newcomers.
    sim.settled, sim.settled_examined = True, examined


#: The pass of each backfilling (:data:`.order.BACKFILLING`).
PASSES = {"none": pass_without_backfilling, "easy": pass_easy, "cons": pass_conservative}
