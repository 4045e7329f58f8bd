"""Batch scheduling policies (Klusáček & Rudová §5), one module per family.

Every policy implements one narrow protocol, driven by
:class:`~sched_engine.batch.simulate.BatchSimulation`; each hook returns the
policy's decisions as data (:mod:`.decisions`: ``Start``, ``Cancel``,
``Reserve``, ``Wake``), which the engine applies one by one as they come:

``bind(sim)``                       start of a run: per-run state; ``sim`` is read, never called
``arrive(job, now)``                a job entered the queue
``job_ended(cluster, now, early)``  a job completed (``early``: before its estimate)
``capacity_changed(cluster, now)``  a machine failed or restarted
``schedule(now)``                   one pass after the instant's events: queue order and backfill selection
``choose(fits)``                    cluster choice for a job that fits now on each of ``fits``

A policy that starts only the oldest waiting job, as soon as it fits now on
one of its clusters (FCFS, FCFS-LB), says so with ``starts_in_order = True``;
on clusters that never fail the simulation then runs a loop with one step
per job that calls only ``bind`` and ``choose`` (same results, far less work
per job).

Constructors only store parameters (``get_params`` reads them back); all
per-run state is created in ``bind``, so one policy object can run twice
and give identical results.

Multi-cluster rule (§5): a job goes to the cluster where it can start
earliest; among equal starts the fastest cluster, then the larger one
(total CPUs), then the first listed -- ``sim.candidates[job]`` is already in
that order.

Modules: :mod:`.queue` (the arrival-ordered queue), :mod:`.fcfs` (FCFS,
FCFS-LB), :mod:`.easy`, :mod:`.conservative`, :mod:`.local_search`,
:mod:`.recorded` (the log as it ran).
"""

from .conservative import Conservative
from .decisions import Cancel, Decision, Reserve, Start, Wake
from .easy import EASY
from .fcfs import FCFS, FCFSLB
from .local_search import LocalSearch
from .queue import NO_RESERVATION, QueuePolicy
from .recorded import Recorded

__all__ = ["Cancel", "Conservative", "Decision", "EASY", "FCFS", "FCFSLB", "LocalSearch", "NO_RESERVATION",
           "QueuePolicy", "Recorded", "Reserve", "Start", "Wake"]
