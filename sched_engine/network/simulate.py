"""Event-driven flow simulation of a cluster's access links (Alg. 1, Sec. V-B).

Like the paper's simulator, only application arrivals and departures are
events. At every event time the simulation

1. advances every flow's remaining volume at the rates set at the last
   event (a flow that finishes in between leaves its allocation idle until
   the next event, as in the paper);
2. handles departures (CPU/RAM released, Alg. 1 lines 15-16) and arrivals;
3. admits waiting applications in arrival order when placement finds room
   for all their containers (admission control, Sec. IV-A); placement sees
   the links' demand-based load, i.e. running containers restricted to their
   guarantee (Alg. 1 lines 12-14);
4. recomputes every rate with the allocation policy (Alg. 1 line 7/17),
   dropping finished flows (a demand change, lines 18-19), and
   schedules each application's departure for when its last flow ends.

A flow carries the application's ``volume`` Gb from its sender's uplink to
its receiver's downlink at one rate (Sec. V-B: the simulator "updates the
rate and remaining volume of each flow"); an endpoint is one container's
side of its flows on one link (see :mod:`.allocation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.events import Priority
from ..core.loop import Simulation
from ..core.observers import INSTANT
from .allocation import OUTSIDE, Endpoints, Flows, container_rates, isolation
from .model import Application, Cluster, flow_pairs
from .placement import ClusterState

DONE = 1e-9  # an endpoint is finished when less than this share of its volume is left


@dataclass
class Running:
    """A placed application's endpoints and flows (arrays as in :mod:`.allocation`, indices local to it).

    Containers of the application that are interchangeable (same machine
    and demand vector; every pattern but ``one-to-one``, whose pairs tell
    containers apart) share one endpoint per direction and their flows one
    flow class per (sender endpoint, receiver endpoint): by symmetry they
    get the same rates, so the class carries them at once. ``flow_link``
    holds each flow class's (uplink, downlink), -1 for an end outside.
    """

    machines: np.ndarray
    link: np.ndarray
    demand: np.ndarray
    containers: np.ndarray
    sender: np.ndarray
    receiver: np.ndarray
    count: np.ndarray
    flow_link: np.ndarray
    volume: float
    remaining: np.ndarray
    departure_seq: int = -1

    def unfinished(self) -> np.ndarray:
        return self.remaining > DONE * self.volume

    def active_endpoints(self, left: np.ndarray) -> np.ndarray:
        """Endpoints with at least one unfinished flow (``left``: the unfinished flow classes)."""
        active = np.zeros(len(self.link), dtype=bool)
        for end in (self.sender, self.receiver):
            active[end[left & (end != OUTSIDE)]] = True
        return active


def endpoints_of(app: Application, machines: np.ndarray, n_machines: int) -> Running:
    """The endpoints and flow classes of ``app`` placed on ``machines`` (a flow needs demand at both ends)."""
    sender, receiver = flow_pairs(app.pattern, app.width, app.up, app.down)
    sends = (sender < 0) | (app.up[np.maximum(sender, 0)] > 0)
    keep = sends & ((receiver < 0) | (app.down[np.maximum(receiver, 0)] > 0))
    sender, receiver = sender[keep], receiver[keep]
    if app.pattern == "one-to-one":
        kind = np.arange(app.width)
    else:
        rows = np.column_stack([machines, app.cpu, app.ram, app.up, app.down])
        _, kind = np.unique(rows, axis=0, return_inverse=True)
        kind = kind.ravel()
    kinds = int(kind.max()) + 1
    size = np.bincount(kind, minlength=kinds)
    first = np.full(kinds, app.width)
    np.minimum.at(first, kind, np.arange(app.width))
    send_kind = np.where(sender >= 0, kind[np.maximum(sender, 0)], -1)
    receive_kind = np.where(receiver >= 0, kind[np.maximum(receiver, 0)], -1)
    sends, receives = np.zeros(kinds, dtype=bool), np.zeros(kinds, dtype=bool)
    sends[send_kind[send_kind >= 0]] = True
    receives[receive_kind[receive_kind >= 0]] = True
    n_up = int(sends.sum())
    up_id, down_id = np.full(kinds + 1, OUTSIDE), np.full(kinds + 1, OUTSIDE)  # entry -1 maps outside to outside
    up_id[:kinds][sends] = np.arange(n_up)
    down_id[:kinds][receives] = n_up + np.arange(int(receives.sum()))
    link = np.concatenate([machines[first[sends]], n_machines + machines[first[receives]]])
    demand = np.concatenate([app.up[first[sends]], app.down[first[receives]]])
    containers = np.concatenate([size[sends], size[receives]]).astype(float)
    ends = len(link) + 1
    key = (up_id[send_kind] + 1) * ends + (down_id[receive_kind] + 1)
    key, count = np.unique(key, return_counts=True)
    flow_sender, flow_receiver = key // ends - 1, key % ends - 1
    flow_link = np.column_stack([np.where(end >= 0, link[np.maximum(end, 0)], -1)
                                 for end in (flow_sender, flow_receiver)])
    return Running(machines, link, demand, containers, flow_sender, flow_receiver, count.astype(float), flow_link,
                   app.volume, np.full(len(key), app.volume))


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
    end_time: float = 0.0


def make_placer(policy, rng: np.random.Generator):
    """The scheme's placer for one run (tests put a fixed placement in its place)."""
    return policy.placer(rng)


class NetworkSimulation(Simulation):
    """Applications' arrivals and departures on the kernel's loop (the steps of the module docstring).

    Handlers: ``arrival`` (the application waits), ``departure`` (its CPU and
    RAM are released). :meth:`advance` moves the flows; :meth:`after_instant`
    admits, allocates and re-schedules each application's departure;
    :class:`LinkRecorder`, an observer of every instant, records.
    """

    def __init__(self, cluster: Cluster, apps: list[Application], policy, placer, horizon: float | None,
                 progress: Callable[[float], None] | None) -> None:
        super().__init__(horizon=horizon, progress=progress, total_work=len(apps))
        self.cluster, self.apps, self.placer = cluster, apps, placer
        self.allocate = policy.allocator()
        n_apps, n_links = len(apps), len(cluster.link_capacity)
        self.trace = Trace(start=np.full(n_apps, np.nan), end=np.full(n_apps, np.nan), machines=[None] * n_apps,
                           isolation_area=np.zeros(n_apps), isolation_min=np.full(n_apps, np.nan),
                           link_used=np.zeros(n_links), link_busy=np.zeros(n_links))
        self.cpu_free, self.ram_free = cluster.cpu.copy(), cluster.ram.copy()
        self.waiting: list[int] = []
        self.running: dict[int, Running] = {}
        self.rates: dict[int, np.ndarray] = {}
        self.current_isolation: dict[int, float] = {}
        self.departed = 0
        self.on("arrival", self._arrival)
        self.on("departure", self._departure)
        for i, app in enumerate(apps):
            self.schedule(app.arrival, Priority.ARRIVAL, "arrival", i)

    def advance(self, time: float) -> None:
        _advance(self.trace, self.running, self.rates, self.current_isolation, self.now, time,
                 len(self.cluster.link_capacity))

    def _arrival(self, event) -> None:
        self.waiting.append(event.payload)

    def _departure(self, event) -> None:
        i = event.payload
        done = self.running.pop(i)
        np.add.at(self.cpu_free, done.machines, self.apps[i].cpu)
        np.add.at(self.ram_free, done.machines, self.apps[i].ram)
        self.trace.end[i] = self.now
        self.departed += 1

    def after_instant(self, now: float) -> None:
        apps, running, cluster, capacity = self.apps, self.running, self.cluster, self.cluster.link_capacity
        _admit(apps, self.waiting, running, self.trace, self.placer, cluster, self.cpu_free, self.ram_free,
               capacity, now)
        self.rates, self.current_isolation = _allocate(apps, running, self.allocate, capacity)
        for i, app_run in running.items():
            if app_run.departure_seq >= 0:
                self.cancel_event(app_run.departure_seq)
            left = app_run.unfinished()
            finish = now + (float((app_run.remaining[left] / self.rates[i][left]).max()) if left.any() else 0.0)
            app_run.departure_seq = self.schedule(finish, Priority.DEPARTURE, "departure", i)
        self.progress.update(self.departed)


def simulate(cluster: Cluster, apps: list[Application], policy, rng: np.random.Generator,
             horizon: float | None = None, progress: Callable[[float], None] | None = None) -> Trace:
    """Run the applications on the cluster under ``policy`` (placement + allocation)."""
    sim = NetworkSimulation(cluster, apps, policy, make_placer(policy, rng), horizon, progress)
    sim.subscribe(INSTANT, LinkRecorder(len(cluster.link_capacity)))
    sim.run()
    sim.trace.end_time = sim.now
    return sim.trace


def _advance(trace: Trace, running, rates, current_isolation, start: float, end: float, n_links: int) -> None:
    """Move every flow's transfer from ``start`` to ``end`` at the current rates.

    A link is busy for as long as any flow on it is still sending (a flow
    that finishes before ``end`` stops there), counted once however many
    applications use the link.
    """
    dt = end - start
    if dt <= 0:
        return
    busy = np.zeros(n_links)
    for i, app_run in running.items():
        rate = rates[i]
        left = app_run.unfinished() & (rate > 0)
        sending = np.zeros(len(rate))
        sending[left] = np.minimum(dt, app_run.remaining[left] / rate[left])
        moved = np.minimum(app_run.remaining, rate * dt)
        app_run.remaining -= moved
        for column in app_run.flow_link.T:
            inside = column >= 0
            trace.link_used += np.bincount(column[inside], weights=(app_run.count * moved)[inside], minlength=n_links)
            np.maximum.at(busy, column[inside], sending[inside])
        if i in current_isolation:
            trace.isolation_area[i] += current_isolation[i] * dt
    trace.link_busy += busy


def _state(running, apps, cluster: Cluster, cpu_free, ram_free, capacity) -> ClusterState:
    """Demand-based link loads (Eq. 2) of the running applications' endpoints with unfinished flows."""
    load = np.zeros(len(capacity))
    for i, app_run in running.items():
        active = app_run.active_endpoints(app_run.unfinished())
        link = app_run.link[active]
        demand = app_run.demand[active] * app_run.containers[active]
        load += np.bincount(link, weights=apps[i].weight * demand / capacity[link], minlength=len(capacity))
    n = cluster.size
    return ClusterState(cpu_free, ram_free, cluster.uplink, cluster.downlink, load[:n], load[n:])


def _admit(apps, waiting: list, running: dict, trace: Trace, placer, cluster: Cluster, cpu_free, ram_free,
           capacity, now: float) -> None:
    """Place waiting applications in arrival order; those that do not fit keep waiting.

    The cluster state changes only when an application is placed, so it is
    computed once per placement, not once per waiting application.
    """
    state = None
    for i in list(waiting):
        if state is None:
            state = _state(running, apps, cluster, cpu_free, ram_free, capacity)
        machines = placer.place(apps[i], state)
        if machines is None:
            continue
        waiting.remove(i)
        np.add.at(cpu_free, machines, -apps[i].cpu)
        np.add.at(ram_free, machines, -apps[i].ram)
        running[i] = endpoints_of(apps[i], machines, cluster.size)
        state = None
        trace.start[i] = now
        trace.machines[i] = machines


def _allocate(apps, running: dict, allocate, capacity) -> tuple[dict, dict]:
    """Rates of every running application's flow classes and each one's isolation guarantee (Eq. 1).

    Only unfinished flows, and the endpoints they use, take part (a
    finished flow is a demand change, Alg. 1 lines 18-19).
    """
    order = list(running)
    if not order:
        return {}, {}
    parts = [running[i] for i in order]
    flows_left = [p.unfinished() for p in parts]
    active = [p.active_endpoints(left) for p, left in zip(parts, flows_left)]
    renumber, offset = [], 0
    for mask in active:  # local endpoint index -> index among all active endpoints (entry -1: outside)
        ids = np.full(len(mask) + 1, OUTSIDE)
        ids[:-1][mask] = offset + np.arange(int(mask.sum()))
        renumber.append(ids)
        offset += int(mask.sum())
    endpoints = Endpoints(
        link=np.concatenate([p.link[m] for p, m in zip(parts, active)]),
        app=np.concatenate([np.full(int(m.sum()), n) for n, m in enumerate(active)]).astype(int),
        demand=np.concatenate([p.demand[m] for p, m in zip(parts, active)]),
        weight=np.concatenate([np.full(int(m.sum()), apps[i].weight) for i, m in zip(order, active)]),
        containers=np.concatenate([p.containers[m] for p, m in zip(parts, active)]),
    )
    def ends(name):
        return np.concatenate([ids[getattr(p, name)[left]] for p, ids, left in zip(parts, renumber, flows_left)])

    flows = Flows(ends("sender").astype(int), ends("receiver").astype(int),
                  np.concatenate([p.count[left] for p, left in zip(parts, flows_left)]))
    rate = allocate(endpoints, flows, capacity, len(order)) if len(flows) else np.zeros(0)
    guarantee = isolation(endpoints, container_rates(endpoints, flows, rate), len(order))
    bounds = np.cumsum([0, *[int(left.sum()) for left in flows_left]])
    rates = {}
    for n, (i, left) in enumerate(zip(order, flows_left)):
        full = np.zeros(len(left))
        full[left] = rate[bounds[n]:bounds[n + 1]]
        rates[i] = full
    current = {i: float(guarantee[n]) for n, i in enumerate(order) if not np.isnan(guarantee[n])}
    return rates, current


class LinkRecorder:
    """Observer of every instant: each application's isolation, the links whose utilisation changed,
    the running and waiting applications and the bottleneck's demand-based load, into ``trace.series``."""

    def __init__(self, n_links: int) -> None:
        self.last_utilisation = np.full(n_links, np.nan)

    def __call__(self, sim: NetworkSimulation, now: float) -> None:
        running, capacity = sim.running, sim.cluster.link_capacity
        state = _state(running, sim.apps, sim.cluster, sim.cpu_free, sim.ram_free, capacity)
        bottleneck = float(max(state.up_load.max(), state.down_load.max()))
        self.last_utilisation = _record(sim.trace, running, sim.rates, sim.current_isolation, capacity, now,
                                        self.last_utilisation, len(sim.waiting), bottleneck)


def _record(trace: Trace, running: dict, rates: dict, current_isolation: dict, capacity, now: float,
            last_utilisation: np.ndarray, waiting: int, bottleneck: float) -> np.ndarray:
    """Append this instant's isolation per application and the links whose utilisation changed."""
    for i, value in current_isolation.items():
        trace.series.append((now, i, "isolation", value))
        trace.isolation_min[i] = value if np.isnan(trace.isolation_min[i]) else min(trace.isolation_min[i], value)
    used = np.zeros(len(capacity))
    for i, app_run in running.items():
        carried = np.where(app_run.unfinished(), app_run.count * rates[i], 0.0)
        for column in app_run.flow_link.T:
            inside = column >= 0
            used += np.bincount(column[inside], weights=carried[inside], minlength=len(capacity))
    utilisation = used / capacity
    changed = np.flatnonzero(~np.isclose(utilisation, last_utilisation, rtol=0, atol=1e-12))
    trace.series.extend((now, n_link, "utilisation", float(utilisation[n_link])) for n_link in changed)
    trace.series.append((now, -1, "running_apps", float(len(running))))
    trace.series.append((now, -1, "waiting_apps", float(waiting)))
    trace.series.append((now, -1, "bottleneck", bottleneck))
    return utilisation
