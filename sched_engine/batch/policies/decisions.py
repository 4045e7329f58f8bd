"""What a batch policy decides, as data: the engine applies each record as the policy yields it.

A policy's hooks return an iterable of these records (usually a
generator); :meth:`sched_engine.batch.simulate.BatchSimulation.apply`
carries each one out before the policy goes on, so the policy reads the
clusters as its earlier decisions left them. Policies never call the
simulation.
"""

from __future__ import annotations

from typing import NamedTuple, Union


class Start(NamedTuple):
    """Start ``job`` now on cluster ``cluster`` (it fits there now), holding ``fraction`` of its memory (below 1: a
    memory-elastic start, which runs longer by the run's penalty model)."""

    job: int
    cluster: int
    fraction: float = 1.0


class Cancel(NamedTuple):
    """Drop waiting ``job`` from the queue for good, for ``reason``."""

    job: int
    reason: str


class Reserve(NamedTuple):
    """``job`` is planned to start at ``start`` on ``cluster`` (EASY: the head's shadow time).

    A record of the plan; the engine keeps it in its decision log when
    asked to. A pass at that time is asked for with :class:`Wake`.
    """

    job: int
    start: float
    cluster: int


class Preempt(NamedTuple):
    """Kill running best-effort ``job`` now, for good, to free its CPUs (:mod:`sched_engine.batch.queues`)."""

    job: int


class Wake(NamedTuple):
    """Make a scheduling pass at ``time`` even if nothing else happens then."""

    time: float


Decision = Union[Start, Cancel, Reserve, Wake, Preempt]
NO_DECISIONS: tuple[Decision, ...] = ()
