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
``departed`` (left before its tasks ran), or ``unfinished`` (the horizon
came first).

``timeline`` metrics: ``dominant_share`` for every node (departments: the
dominant share of the summed usage of their subtree, ``max_j U_j / c_j``),
``running_tasks`` per leaf, ``utilization`` per resource (entity = resource
name), ``flat_weight`` per active leaf for policies that flatten the tree
(recorded when the weights are recomputed).

``summary`` metrics: ``makespan``, ``decisions`` (tasks handed out),
``scheduler_seconds`` (wall time inside the policy and its bookkeeping),
``decisions_per_second``, ``weight_recomputations``, ``tasks_completed``,
``tasks_killed``, and ``mean_utilization_<resource>`` (time-weighted over
``[0, makespan]``).
"""

from __future__ import annotations

from time import perf_counter
from typing import Callable

import numpy as np
import pandas as pd

from ..core.events import EventQueue, Priority
from ..core.result import summary_frame, timeline_frame
from .model import Tree
from .state import DecisionCounter, ShareState, fill

ProgressFn = Callable[[float], None]


class _Recorder:
    """Appends timeline rows for values that changed since their last row."""

    def __init__(self, tree: Tree):
        self.tree = tree
        self.times: list[float] = []
        self.entities: list[str] = []
        self.metrics: list[str] = []
        self.values: list[float] = []
        p, q = tree.leaf_count, tree.node_count
        membership = np.zeros((q, p))
        for leaf, node in enumerate(tree.leaf_node):
            membership[node, leaf] = 1.0
            for ancestor in tree.ancestors(node):
                membership[ancestor, leaf] = 1.0
        # shares_matrix[n, i] = contribution of one task of leaf i to node n,
        # per resource; dominant share of n = max_j (M @ (t * D))_nj / c_j.
        self._membership = membership
        self._demand_share = np.asarray(tree.demand, dtype=float) / np.asarray(tree.capacity)
        self._last_share = np.full(q, np.nan)
        self._last_running = np.full(p, -1)
        self._last_util = np.full(len(tree.capacity), np.nan)

    def _append(self, time: float, entity: str, metric: str, value: float) -> None:
        self.times.append(time)
        self.entities.append(entity)
        self.metrics.append(metric)
        self.values.append(value)

    def record(self, time: float, state: ShareState) -> None:
        tree = self.tree
        running = np.asarray(state.running, dtype=float)
        shares = (self._membership @ (running[:, None] * self._demand_share)).max(axis=1)
        changed = np.flatnonzero(~np.isclose(shares, self._last_share, rtol=0, atol=1e-12))
        for node in changed:
            self._append(time, tree.names[node], "dominant_share", float(shares[node]))
        self._last_share = shares
        counts = np.asarray(state.running)
        for leaf in np.flatnonzero(counts != self._last_running):
            self._append(time, tree.names[tree.leaf_node[leaf]], "running_tasks", float(counts[leaf]))
        self._last_running = counts
        util = 1.0 - np.asarray(state.free) / np.asarray(tree.capacity)
        for j in np.flatnonzero(~np.isclose(util, self._last_util, rtol=0, atol=1e-12)):
            self._append(time, tree.resources[j], "utilization", float(util[j]))
        self._last_util = util

    def record_weights(self, time: float, weights: list[float], state: ShareState) -> None:
        tree = self.tree
        for leaf, weight in enumerate(weights):
            if state.pending[leaf] > 0:
                self._append(time, tree.names[tree.leaf_node[leaf]], "flat_weight", float(weight))

    def frame(self) -> pd.DataFrame:
        return timeline_frame(self.times, self.entities, self.metrics, self.values)


def simulate(tree: Tree, policy, *, progress: ProgressFn | None = None, record: bool = True):
    """Run ``policy`` on ``tree``; returns ``(jobs, timeline, summary)`` frames.

    With ``record=False`` the timeline stays empty (benchmarks measure the
    decision cost without the recording overhead).
    """
    state = ShareState(tree)
    chooser = policy.chooser(tree)
    counter = DecisionCounter()
    queue = EventQueue()
    p = tree.leaf_count
    for leaf in range(p):
        queue.push(tree.arrival[leaf], Priority.ARRIVAL, "arrival", leaf)
        if tree.departure[leaf] is not None:
            queue.push(tree.departure[leaf], Priority.DEPARTURE, "departure", leaf)

    running_events: list[set[int]] = [set() for _ in range(p)]
    start_time = [np.nan] * p
    end_time = [np.nan] * p
    status = ["unfinished"] * p
    completed = [0] * p
    killed = [0] * p
    not_run = [0] * p
    epoch = [-1]
    recorder = _Recorder(tree) if record else None
    total_tasks = sum(tree.tasks) or 1
    done_tasks = 0
    reported = -1.0
    util_area = [0.0] * len(tree.capacity)
    last_time = 0.0
    horizon = tree.horizon
    clock = perf_counter

    def release(leaf: int) -> None:
        t0 = clock()
        state.release(leaf)
        chooser.released(state, leaf)
        counter.seconds += clock() - t0

    while queue:
        now = queue.peek_time()
        if horizon is not None and now > horizon:
            now = horizon
        for j, (free, cap) in enumerate(zip(state.free, tree.capacity)):
            util_area[j] += (now - last_time) * (cap - free) / cap
        last_time = now
        if now == horizon and queue.peek_time() > horizon:
            break
        for event in queue.pop_instant():
            leaf = event.payload
            if event.kind == "completion":
                running_events[leaf].discard(event.seq)
                release(leaf)
                completed[leaf] += 1
                done_tasks += 1
                if state.pending[leaf] == 0 and state.running[leaf] == 0 and status[leaf] == "unfinished":
                    status[leaf] = "finished"
                    end_time[leaf] = now
            elif event.kind == "arrival":
                state.add_pending(leaf, tree.tasks[leaf])
            elif event.kind == "departure":
                if status[leaf] != "unfinished":
                    continue
                not_run[leaf] = state.drop_pending(leaf)
                for seq in sorted(running_events[leaf]):
                    queue.cancel(seq)
                    release(leaf)
                    killed[leaf] += 1
                running_events[leaf].clear()
                done_tasks += killed[leaf] + not_run[leaf]
                status[leaf] = "departed"
                end_time[leaf] = now
        activity_before = epoch[0]
        started = fill(state, chooser, counter, epoch)
        for leaf in started:
            if np.isnan(start_time[leaf]):
                start_time[leaf] = now
            running_events[leaf].add(queue.push(now + tree.duration[leaf], Priority.COMPLETION, "completion", leaf))
        if recorder is not None:
            if epoch[0] != activity_before:
                weights = chooser.flat_weights()
                if weights is not None:
                    recorder.record_weights(now, weights, state)
            recorder.record(now, state)
        if progress is not None:
            fraction = done_tasks / total_tasks
            if fraction - reported >= 0.01:
                reported = fraction
                progress(min(fraction, 1.0))

    end = last_time
    for leaf in range(p):
        if status[leaf] == "unfinished":
            not_run[leaf] = state.pending[leaf]

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
        ("makespan", end, "s"),
        ("decisions", counter.decisions, "tasks"),
        ("scheduler_seconds", counter.seconds, "s"),
        ("decisions_per_second", counter.decisions / counter.seconds if counter.seconds > 0 else 0.0, "1/s"),
        ("weight_recomputations", counter.activity_changes, "count"),
        ("tasks_completed", sum(completed), "tasks"),
        ("tasks_killed", sum(killed), "tasks"),
    ]
    for resource, area in zip(tree.resources, util_area):
        rows.append((f"mean_utilization_{resource}", area / end if end > 0 else 0.0, "fraction"))
    timeline = recorder.frame() if recorder is not None else timeline_frame([], [], [], [])
    return jobs, timeline, summary_frame(rows)
