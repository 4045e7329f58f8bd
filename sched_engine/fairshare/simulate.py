"""Task-level discrete-event simulation of hierarchical fair sharing.

Events (core heap, :class:`~sched_engine.core.Priority` order at equal
times): a job leaves (DEPARTURE: pending tasks dropped, running tasks killed
and their resources freed), a task ends (COMPLETION), a job arrives
(ARRIVAL). After all events of an instant, one scheduling pass hands free
resources out one task at a time to the leaf the policy picks
(:func:`~.state.fill`), then every node's dominant share is recorded.

``jobs`` columns (beyond the common ones): ``path``, ``parent``, ``weight``,
``demand`` (text), ``tasks``, ``tasks_completed``, ``tasks_killed``,
``tasks_not_run``. ``status`` is ``finished`` (every task ran),
``departed`` (left before its tasks ran), or, when the horizon came first,
``running`` (it had started) or ``waiting`` (it had not).

``timeline`` metrics: ``dominant_share`` for every node (departments: the
dominant share of the summed usage of their subtree, ``max_j U_j / c_j``),
``running_tasks`` per leaf, ``utilisation`` per resource (entity = resource
name), ``flat_weight`` per active leaf for policies that flatten the tree
(recorded when the weights are recomputed).

``summary`` metrics: ``makespan_s``, ``decisions`` (tasks handed out),
``scheduler_cpu_s`` (CPU time inside the policy and its bookkeeping),
``decisions_per_second``, ``weight_recomputations``, ``tasks_completed``,
``tasks_killed``, and ``utilisation_<resource>`` (time-weighted over
``[0, makespan_s]``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from scipy import sparse

from ..core.events import Priority
from ..core.loop import Simulation, scheduler_clock
from ..core.observers import INSTANT, TimelineRows
from ..core.result import summary_frame, timeline_frame
from .model import Tree
from .state import DecisionCounter, ShareState, fill

ProgressFn = Callable[[float], None]
OPEN = "open"  # a job that has not ended yet; it ends the run as running or waiting


class ShareRecorder:
    """Observer of every instant: timeline rows for the values that changed since their last row."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.rows = TimelineRows()
        p, q = tree.leaf_count, tree.node_count
        nodes, leaves = [], []
        for leaf, node in enumerate(tree.leaf_node):
            for member in (node, *tree.ancestors(node)):
                nodes.append(member)
                leaves.append(leaf)
        # M[n, i] = 1 when leaf i is in node n's subtree; dominant share of n = max_j (M @ (t * D))_nj / c_j.
        # Sparse: a leaf is in its depth's few subtrees, so one instant costs O(leaves x depth), not O(nodes x
        # leaves) (a 1,024-job, 5-level tree: 31 s -> a few seconds per run, most of it this product).
        self._membership = sparse.csr_array((np.ones(len(nodes)), (nodes, leaves)), shape=(q, p))
        self._demand_share = np.asarray(tree.demand, dtype=float) / np.asarray(tree.capacity)
        self._leaf_names = [tree.names[node] for node in tree.leaf_node]
        self._last_share = np.full(q, np.nan)
        self._last_running = np.full(p, np.nan)
        self._last_util = np.full(len(tree.capacity), np.nan)
        self._epoch = -1  # the chooser's activity epoch at the last instant

    def __call__(self, sim: "FairShareSimulation", time: float) -> None:
        if sim.epoch[0] != self._epoch:  # the pass recomputed the weights
            self._epoch = sim.epoch[0]
            weights = sim.chooser.flat_weights()
            if weights is not None:
                self._record_weights(time, weights, sim.state)
        self._record(time, sim.state)

    def _record(self, time: float, state: ShareState) -> None:
        tree, rows = self.tree, self.rows
        running = np.asarray(state.running, dtype=float)
        shares = (self._membership @ (running[:, None] * self._demand_share)).max(axis=1)
        self._last_share = rows.changed(time, tree.names, "dominant_share", shares, self._last_share)
        self._last_running = rows.changed(time, self._leaf_names, "running_tasks", running, self._last_running)
        util = 1.0 - np.asarray(state.free) / np.asarray(tree.capacity)
        self._last_util = rows.changed(time, tree.resources, "utilisation", util, self._last_util)

    def _record_weights(self, time: float, weights: list[float], state: ShareState) -> None:
        for leaf, weight in enumerate(weights):
            if state.pending[leaf] > 0:
                self.rows.append(time, self._leaf_names[leaf], "flat_weight", float(weight))


class FairShareSimulation(Simulation):
    """One run of a share policy on a tree: leaves' task state and counters.

    Handlers: ``arrival`` (a leaf's tasks become pending), ``departure``
    (pending tasks dropped, running ones killed), ``completion`` (one task
    ends). After each instant one :func:`~.state.fill` pass; the timeline is
    recorded by :class:`ShareRecorder`, an observer of every instant.
    """

    def __init__(self, tree: Tree, policy, *, progress: ProgressFn | None):
        super().__init__(horizon=tree.horizon, progress=progress, total_work=sum(tree.tasks))
        p = tree.leaf_count
        self.tree = tree
        self.state = ShareState(tree)
        self.chooser = policy.chooser(tree)
        self.counter = DecisionCounter()
        self.running_events: list[set[int]] = [set() for _ in range(p)]
        self.start_time = [np.nan] * p
        self.end_time = [np.nan] * p
        self.status = [OPEN] * p
        self.completed = [0] * p
        self.killed = [0] * p
        self.not_run = [0] * p
        self.epoch = [-1]
        self.done_tasks = 0
        self.util_area = [0.0] * len(tree.capacity)
        self.on("arrival", self._arrival)
        self.on("departure", self._departure)
        self.on("completion", self._completion)
        for leaf in range(p):
            self.schedule(tree.arrival[leaf], Priority.ARRIVAL, "arrival", leaf)
            if tree.departure[leaf] is not None:
                self.schedule(tree.departure[leaf], Priority.DEPARTURE, "departure", leaf)

    def _release(self, leaf: int) -> None:
        t0 = scheduler_clock()
        self.state.release(leaf)
        self.chooser.released(self.state, leaf)
        self.counter.seconds += scheduler_clock() - t0

    def advance(self, time: float) -> None:
        state, capacity, area, dt = self.state, self.tree.capacity, self.util_area, time - self.now
        for j, (free, cap) in enumerate(zip(state.free, capacity)):
            area[j] += dt * (cap - free) / cap

    def _arrival(self, event) -> None:
        self.state.add_pending(event.payload, self.tree.tasks[event.payload])

    def _completion(self, event) -> None:
        leaf = event.payload
        self.running_events[leaf].discard(event.seq)
        self._release(leaf)
        self.completed[leaf] += 1
        self.done_tasks += 1
        state = self.state
        if state.pending[leaf] == 0 and state.running[leaf] == 0 and self.status[leaf] == OPEN:
            self.status[leaf] = "finished"
            self.end_time[leaf] = self.now

    def _departure(self, event) -> None:
        leaf = event.payload
        if self.status[leaf] != OPEN:
            return
        self.not_run[leaf] = self.state.drop_pending(leaf)
        for seq in sorted(self.running_events[leaf]):
            self.cancel_event(seq)
            self._release(leaf)
            self.killed[leaf] += 1
        self.running_events[leaf].clear()
        self.done_tasks += self.killed[leaf] + self.not_run[leaf]
        self.status[leaf] = "departed"
        self.end_time[leaf] = self.now

    def after_instant(self, time: float) -> None:
        duration = self.tree.duration
        for leaf in fill(self.state, self.chooser, self.counter, self.epoch):
            if np.isnan(self.start_time[leaf]):
                self.start_time[leaf] = time
            self.running_events[leaf].add(self.schedule(time + duration[leaf], Priority.COMPLETION, "completion",
                                                        leaf))
        self.progress.update(self.done_tasks)


def simulate(tree: Tree, policy, *, progress: ProgressFn | None = None, record: bool = True):
    """Run ``policy`` on ``tree``; returns ``(jobs, timeline, summary)`` frames.

    With ``record=False`` the timeline stays empty (benchmarks measure the
    decision cost without the recording overhead).
    """
    sim = FairShareSimulation(tree, policy, progress=progress)
    recorder = ShareRecorder(tree) if record else None
    if recorder is not None:
        sim.subscribe(INSTANT, recorder)
    sim.run()
    state, counter, p = sim.state, sim.counter, tree.leaf_count
    status, completed, killed, not_run = sim.status, sim.completed, sim.killed, sim.not_run
    start_time, end_time, util_area = sim.start_time, sim.end_time, sim.util_area
    end = sim.now
    for leaf in range(p):
        if status[leaf] == OPEN:
            not_run[leaf] = state.pending[leaf]
            status[leaf] = "waiting" if np.isnan(start_time[leaf]) else "running"

    jobs = pd.DataFrame(
        {
            "job_id": pd.Series([tree.names[n] for n in tree.leaf_node], dtype="string"),
            "path": pd.Series([tree.path(n) for n in tree.leaf_node], dtype="string"),
            "parent": pd.Series([tree.names[tree.parent[n]] for n in tree.leaf_node], dtype="string"),
            "weight": [tree.weight[n] for n in tree.leaf_node],
            "demand": pd.Series(
                [
                    ", ".join(f"{r}={d:g}" for r, d in zip(tree.resources, row) if d > 0)
                    for row in tree.demand
                ],
                dtype="string",
            ),
            "submit_time": np.asarray(tree.arrival, dtype=float),
            "start_time": np.asarray(start_time, dtype=float),
            "end_time": np.asarray(end_time, dtype=float),
            "status": pd.Series(status, dtype="string"),
            "tasks": np.asarray(tree.tasks, dtype=int),
            "tasks_completed": np.asarray(completed, dtype=int),
            "tasks_killed": np.asarray(killed, dtype=int),
            "tasks_not_run": np.asarray(not_run, dtype=int),
        }
    )
    rows = [
        ("makespan_s", end, "s"),
        ("decisions", counter.decisions, "tasks"),
        ("scheduler_cpu_s", counter.seconds, "s"),
        ("decisions_per_second", counter.decisions / counter.seconds if counter.seconds > 0 else 0.0, "1/s"),
        ("weight_recomputations", counter.activity_changes, "count"),
        ("tasks_completed", sum(completed), "tasks"),
        ("tasks_killed", sum(killed), "tasks"),
    ]
    for resource, area in zip(tree.resources, util_area):
        rows.append((f"utilisation_{resource}", area / end if end > 0 else 0.0, "share"))
    timeline = recorder.rows.frame() if recorder is not None else timeline_frame([], [], [], [])
    return jobs, timeline, summary_frame(rows)
