"""Event-driven flow simulation of a cluster's access links (Alg. 1, Sec. V-B).

Like the paper's simulator, only application arrivals and departures are
events. At every event time the simulation

1. advances every endpoint's remaining volume at the rates set at the last
   event (an endpoint whose transfer finishes in between leaves its
   allocation idle until the next event, as in the paper);
2. handles departures (CPU/RAM released, Alg. 1 lines 15-16) and arrivals;
3. admits waiting applications in arrival order when placement finds room
   for all their containers (admission control, Sec. IV-A); placement sees
   the links' demand-based load, i.e. running containers restricted to their
   guarantee (Alg. 1 lines 12-14);
4. recomputes every rate with the allocation policy (Alg. 1 line 7/17),
   dropping finished endpoints (a demand change, lines 18-19), and
   schedules each application's departure for when its last flow ends.

An endpoint is one container's traffic in one direction: it carries
``volume x flows`` Gb over the container's uplink or downlink.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import Callable

import numpy as np

from ..core.events import EventQueue, Priority
from .allocation import ALLOCATIONS, Endpoints, isolation
from .model import Application, Cluster
from .placement import ClusterState, LibraPlacer, RoundRobinPlacer

DONE = 1e-9  # an endpoint is finished when less than this share of its volume is left


@dataclass
class Running:
    """A placed application's endpoints (arrays as in :mod:`.allocation`)."""

    machines: np.ndarray
    link: np.ndarray
    demand: np.ndarray
    flows: np.ndarray
    volume: np.ndarray
    remaining: np.ndarray
    departure_seq: int = -1


def endpoints_of(app: Application, machines: np.ndarray, n_machines: int) -> Running:
    sends, receives = app.up > 0, app.down > 0
    link = np.concatenate([machines[sends], n_machines + machines[receives]])
    flows = np.concatenate([app.out_flows[sends], app.in_flows[receives]])
    volume = app.volume * flows.astype(float)
    return Running(machines, link, np.concatenate([app.up[sends], app.down[receives]]), flows, volume, volume.copy())


@dataclass
class Trace:
    """What a run records; turned into frames by :mod:`sched_engine.network`."""

    start: np.ndarray
    end: np.ndarray
    machines: list = field(default_factory=list)
    isolation_area: np.ndarray = None
    isolation_min: np.ndarray = None
    series: list = field(default_factory=list)  # (time, entity index, metric, value); entity < 0: cluster
    link_used: np.ndarray = None
    link_busy: np.ndarray = None
    placement_seconds: list = field(default_factory=list)
    end_time: float = 0.0


def make_placer(policy, rng: np.random.Generator):
    if policy.placement == "libra":
        return LibraPlacer(policy.candidate_fraction, policy.tabu_iterations)
    return RoundRobinPlacer(rng)


def simulate(cluster: Cluster, apps: list[Application], policy, rng: np.random.Generator,
             horizon: float | None = None, progress: Callable[[float], None] | None = None) -> Trace:
    """Run the applications on the cluster under ``policy`` (placement + allocation)."""
    allocate = ALLOCATIONS[policy.allocation]
    placer = make_placer(policy, rng)
    n_apps = len(apps)
    capacity = cluster.link_capacity
    n_links = len(capacity)
    trace = Trace(start=np.full(n_apps, np.nan), end=np.full(n_apps, np.nan), machines=[None] * n_apps,
                  isolation_area=np.zeros(n_apps), isolation_min=np.full(n_apps, np.nan),
                  link_used=np.zeros(n_links), link_busy=np.zeros(n_links))
    cpu_free, ram_free = cluster.cpu.copy(), cluster.ram.copy()
    queue = EventQueue()
    for i, app in enumerate(apps):
        queue.push(app.arrival, Priority.ARRIVAL, "arrival", i)
    waiting: list[int] = []
    running: dict[int, Running] = {}
    rates: dict[int, np.ndarray] = {}
    current_isolation: dict[int, float] = {}
    last_utilisation = np.full(n_links, np.nan)
    now = 0.0
    departed = 0

    while queue:
        next_time = queue.peek_time()
        if horizon is not None and next_time > horizon:
            _advance(trace, running, rates, current_isolation, now, horizon, n_links)
            now = horizon
            break
        _advance(trace, running, rates, current_isolation, now, next_time, n_links)
        now = next_time
        for event in queue.pop_instant():
            i = event.payload
            if event.kind == "departure":
                done = running.pop(i)
                np.add.at(cpu_free, done.machines, apps[i].cpu)
                np.add.at(ram_free, done.machines, apps[i].ram)
                trace.end[i] = now
                departed += 1
            else:
                waiting.append(i)
        _admit(apps, waiting, running, trace, placer, cluster, cpu_free, ram_free, capacity, now)
        rates, current_isolation = _allocate(apps, running, allocate, capacity)
        for i, app_run in running.items():
            if app_run.departure_seq >= 0:
                queue.cancel(app_run.departure_seq)
            left = app_run.remaining > DONE * app_run.volume
            finish = now + (float((app_run.remaining[left] / rates[i][left]).max()) if left.any() else 0.0)
            app_run.departure_seq = queue.push(finish, Priority.DEPARTURE, "departure", i)
        state = _state(running, apps, cluster, cpu_free, ram_free, capacity)
        bottleneck = float(max(state.up_load.max(), state.down_load.max()))
        last_utilisation = _record(trace, running, rates, current_isolation, capacity, now, last_utilisation,
                                   len(waiting), bottleneck)
        if progress is not None:
            progress(departed / max(n_apps, 1))
    trace.end_time = now
    return trace


def _advance(trace: Trace, running, rates, current_isolation, start: float, end: float, n_links: int) -> None:
    """Move every endpoint's transfer from ``start`` to ``end`` at the current rates."""
    dt = end - start
    if dt <= 0:
        return
    for i, app_run in running.items():
        left = app_run.remaining > DONE * app_run.volume
        moved = np.minimum(app_run.remaining, rates[i] * dt)
        app_run.remaining -= moved
        trace.link_used += np.bincount(app_run.link, weights=moved, minlength=n_links)
        trace.link_busy[np.unique(app_run.link[left])] += dt
        if i in current_isolation:
            trace.isolation_area[i] += current_isolation[i] * dt


def _state(running, apps, cluster: Cluster, cpu_free, ram_free, capacity) -> ClusterState:
    """Demand-based link loads (Eq. 2) of the running applications' unfinished endpoints."""
    load = np.zeros(len(capacity))
    for i, app_run in running.items():
        left = app_run.remaining > DONE * app_run.volume
        load += np.bincount(app_run.link[left], minlength=len(capacity),
                            weights=apps[i].weight * app_run.demand[left] / capacity[app_run.link[left]])
    n = cluster.size
    return ClusterState(cpu_free, ram_free, cluster.uplink, cluster.downlink, load[:n], load[n:])


def _admit(apps, waiting: list, running: dict, trace: Trace, placer, cluster: Cluster, cpu_free, ram_free,
           capacity, now: float) -> None:
    """Place waiting applications in arrival order; those that do not fit keep waiting."""
    for i in list(waiting):
        state = _state(running, apps, cluster, cpu_free, ram_free, capacity)
        started = perf_counter()
        machines = placer.place(apps[i], state)
        trace.placement_seconds.append(perf_counter() - started)
        if machines is None:
            continue
        waiting.remove(i)
        np.add.at(cpu_free, machines, -apps[i].cpu)
        np.add.at(ram_free, machines, -apps[i].ram)
        running[i] = endpoints_of(apps[i], machines, cluster.size)
        trace.start[i] = now
        trace.machines[i] = machines


def _allocate(apps, running: dict, allocate, capacity) -> tuple[dict, dict]:
    """Rates of every running application's endpoints and each one's isolation guarantee (Eq. 1)."""
    order = list(running)
    if not order:
        return {}, {}
    parts = [running[i] for i in order]
    sizes = [len(p.link) for p in parts]
    left = np.concatenate([p.remaining > DONE * p.volume for p in parts])
    app = np.repeat(np.arange(len(order)), sizes)
    weight = np.repeat([apps[i].weight for i in order], sizes)
    everything = Endpoints(np.concatenate([p.link for p in parts]), app, np.concatenate([p.demand for p in parts]),
                           weight, np.concatenate([p.flows for p in parts]))
    active = Endpoints(everything.link[left], app[left], everything.demand[left], weight[left],
                       everything.flows[left])
    rate = np.zeros(len(left))
    if len(active):
        rate[left] = allocate(active, capacity, len(order))
    guarantee = isolation(active, rate[left], len(order))
    bounds = np.cumsum([0, *sizes])
    rates = {i: rate[bounds[n]:bounds[n + 1]] for n, i in enumerate(order)}
    current = {i: float(guarantee[n]) for n, i in enumerate(order) if not np.isnan(guarantee[n])}
    return rates, current


def _record(trace: Trace, running: dict, rates: dict, current_isolation: dict, capacity, now: float,
            last_utilisation: np.ndarray, waiting: int, bottleneck: float) -> np.ndarray:
    """Append this instant's isolation per application and the links whose utilisation changed."""
    for i, value in current_isolation.items():
        trace.series.append((now, i, "isolation", value))
        trace.isolation_min[i] = value if np.isnan(trace.isolation_min[i]) else min(trace.isolation_min[i], value)
    used = np.zeros(len(capacity))
    for i, app_run in running.items():
        left = app_run.remaining > DONE * app_run.volume
        used += np.bincount(app_run.link[left], weights=rates[i][left], minlength=len(capacity))
    utilisation = used / capacity
    changed = np.flatnonzero(~np.isclose(utilisation, last_utilisation, rtol=0, atol=1e-12))
    trace.series.extend((now, n_link, "utilisation", float(utilisation[n_link])) for n_link in changed)
    trace.series.append((now, -1, "running_apps", float(len(running))))
    trace.series.append((now, -1, "waiting_apps", float(waiting)))
    trace.series.append((now, -1, "bottleneck", bottleneck))
    return utilisation
