"""Bandwidth allocation on access links (Sec. III-B, Alg. 3) and the isolation guarantee (Eq. 1).

Two views of the same traffic:

*Endpoints*, one per class of identical containers and direction with
traffic (the containers' uplink side if they send, their downlink side if
they receive). Arrays, one entry per endpoint:

    link        index of the access link (uplink of machine k is k, its downlink M + k)
    app         index of the application
    demand      one container's bandwidth demand on that link, Gbps (> 0)
    weight      the application's weight omega_i
    containers  how many identical containers the endpoint stands for (1 unless aggregated)

*Flows*, one per class of identical flows: ``sender`` and ``receiver`` are
endpoint indices (-1: the other end is outside the cluster, Fig. 1's
``external`` pattern), ``count`` how many flows the class holds. A flow
uses its sender's uplink and its receiver's downlink, and has **one rate**,
the same at both ends. A container's rate on a link is the sum of its flows'
rates (divided by ``containers`` for an aggregated endpoint).

Every allocation returns the rate of one flow of each class, in Gbps. With
the paper's machine-normalised quantities, a container's rate / capacity is
alpha_ij^k (uplink) or beta_ij^k (downlink).

A container's demand is spread evenly over its flows: a flow's *share* of
its application's demand is ``min(u_s / flows_s, d_r / flows_r)`` over the
ends it has (``flows_e`` = the container's unfinished flows), so an
allocation of ``p x share`` to every flow of an application never gives a
container more than ``p`` times its demand at either end. When an
application's demands match its pattern (the paper's set-ups: every sender
and receiver of a many-to-many shuffle asks for the same), this is exactly
``p x demand`` at every container.

Congestion happens only at access links (Sec. II-A). Demands are elastic: a
container may receive more than its demand when a link has spare bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EPS = 1e-12
OUTSIDE = -1


@dataclass(frozen=True)
class Endpoints:
    link: np.ndarray
    app: np.ndarray
    demand: np.ndarray
    weight: np.ndarray
    containers: np.ndarray = field(default=None)

    def __post_init__(self):
        if self.containers is None:
            object.__setattr__(self, "containers", np.ones(len(self.link)))

    def __len__(self) -> int:
        return len(self.link)


@dataclass(frozen=True)
class Flows:
    sender: np.ndarray
    receiver: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.sender)

    @classmethod
    def external(cls, ep: Endpoints, n_links: int, flows: np.ndarray | None = None) -> "Flows":
        """Each endpoint's containers exchange ``flows`` flows each (default 1) with outside the cluster."""
        index = np.arange(len(ep))
        up = ep.link < n_links // 2
        per_container = np.ones(len(ep)) if flows is None else np.asarray(flows, dtype=float)
        return cls(np.where(up, index, OUTSIDE), np.where(up, OUTSIDE, index), per_container * ep.containers)


def link_sum(values: np.ndarray, link: np.ndarray, n_links: int) -> np.ndarray:
    return np.bincount(link, weights=values, minlength=n_links)


def link_load(ep: Endpoints, capacity: np.ndarray) -> np.ndarray:
    """U^k and D^k of Eq. 2: the weighted, machine-normalised demand on every link."""
    return link_sum(ep.weight * ep.demand * ep.containers / capacity[ep.link], ep.link, len(capacity))


def _at_endpoints(ep: Endpoints, fl: Flows, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` (one per flow class, per flow) over each endpoint's flows, per container."""
    total = np.zeros(len(ep))
    for end in (fl.sender, fl.receiver):
        inside = end != OUTSIDE
        total += np.bincount(end[inside], weights=(fl.count * values)[inside], minlength=len(ep))
    return total / ep.containers


def container_rates(ep: Endpoints, fl: Flows, rate: np.ndarray) -> np.ndarray:
    """Each endpoint's rate per container (Gbps): the sum of its flows' rates."""
    return _at_endpoints(ep, fl, rate)


def link_rates(ep: Endpoints, fl: Flows, rate: np.ndarray, n_links: int) -> np.ndarray:
    """Gbps carried on every link."""
    return link_sum(container_rates(ep, fl, rate) * ep.containers, ep.link, n_links)


def _one_end(fl: Flows) -> np.ndarray:
    return np.where(fl.sender != OUTSIDE, fl.sender, fl.receiver)


def flow_app(ep: Endpoints, fl: Flows) -> np.ndarray:
    return ep.app[_one_end(fl)]


def flow_weight(ep: Endpoints, fl: Flows) -> np.ndarray:
    return ep.weight[_one_end(fl)]


def flow_share(ep: Endpoints, fl: Flows) -> np.ndarray:
    """One flow's share of its application's demand: min over its ends of demand / the container's flows."""
    per_container = _at_endpoints(ep, fl, np.ones(len(fl)))
    per_flow = ep.demand / per_container
    share = np.full(len(fl), np.inf)
    for end in (fl.sender, fl.receiver):
        inside = end != OUTSIDE
        share[inside] = np.minimum(share[inside], per_flow[end[inside]])
    return share


def isolation(ep: Endpoints, rate: np.ndarray, n_apps: int) -> np.ndarray:
    """Eq. 1 per application from each endpoint's rate per container: min of rate / demand, capped at 1.

    The cap reads the guarantee as the share of demand that is met: an
    application whose every container receives its full demand has
    isolation 1, bandwidth beyond demand being utilisation, not isolation.
    Applications without endpoints get NaN.
    """
    out = np.full(n_apps, np.inf)
    np.minimum.at(out, ep.app, rate / ep.demand)
    out[np.isinf(out)] = np.nan
    return np.minimum(out, 1.0)


def _members(ep: Endpoints, fl: Flows, n_links: int) -> np.ndarray:
    """The links each flow crosses, as a (flows, 2) array; ``n_links`` stands for 'no link' (outside)."""
    return np.column_stack([np.where(end != OUTSIDE, ep.link[end], n_links) for end in (fl.sender, fl.receiver)])


def fill(base: np.ndarray, growth: np.ndarray, count: np.ndarray, members: np.ndarray,
         limit: np.ndarray) -> np.ndarray:
    """Weighted progressive filling over flow classes (max-min when ``growth`` is 1 and ``base`` is 0).

    Flow f's rate is ``base[f] + growth[f] * t``; t rises for every flow
    together, and a flow freezes when any constraint it belongs to
    saturates. ``members[f]`` lists f's constraints (index ``len(limit)``:
    none); constraint c holds ``sum(count[f] * rate[f]) <= limit[c]`` over
    its members. ``base`` must already respect every limit; a constraint it
    fills is saturated from the start. Returns each class's rate per flow.

    Each round saturates at least one constraint, so there are at most
    ``len(limit)`` rounds; flows are reached through a constraint -> flows
    index, so a round costs the flows it freezes, not all of them.
    """
    n_flows, width = members.shape
    n_cons = len(limit)
    flat = members.ravel()
    frozen = growth <= 0
    slope = np.bincount(flat, weights=np.repeat(np.where(frozen, 0.0, count * growth), width), minlength=n_cons + 1)
    used = np.bincount(flat, weights=np.repeat(count * base, width), minlength=n_cons + 1)
    slope, used = slope[:n_cons], used[:n_cons]
    small = np.int16 if n_cons < np.iinfo(np.int16).max else np.int64  # NumPy radix-sorts 16-bit keys
    order = np.argsort(flat.astype(small), kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(n_cons + 1))
    rate = base.astype(float).copy()
    stamp = np.zeros(n_flows, dtype=np.int64)
    level = 0.0
    scale = np.maximum(limit, 1.0) * 1e-9
    while True:
        active = slope > EPS
        if not active.any():
            break
        step = np.full(n_cons, np.inf)
        step[active] = (limit[active] - used[active]) / slope[active]
        dt = max(float(step.min()), 0.0)
        level += dt
        used += slope * dt
        saturated = np.flatnonzero(active & ((limit - used <= scale) | (step <= dt)))
        lengths = bounds[saturated + 1] - bounds[saturated]
        offsets = np.repeat(bounds[saturated] - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        hit = order[offsets] // width
        hit = hit[~frozen[hit]]
        stamp[hit] = np.arange(len(hit))
        hit = hit[stamp[hit] == np.arange(len(hit))]  # each flow once (the last of its copies)
        rate[hit] = base[hit] + growth[hit] * level
        frozen[hit] = True
        slope -= np.bincount(members[hit].ravel(), weights=np.repeat(count[hit] * growth[hit], width),
                             minlength=n_cons + 1)[:n_cons]
        slope[saturated] = 0.0
    loose = ~frozen
    rate[loose] = base[loose] + growth[loose] * level
    return rate


def per_flow(ep: Endpoints, fl: Flows, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """Per-flow fairness (the paper's baseline): max-min over flows by progressive filling.

    Every flow rises at the same rate from 0; a flow freezes when its
    sender's uplink or its receiver's downlink saturates. No rate limits,
    so an application's share of a link is its number of flows there.
    """
    n_links = len(capacity)
    return fill(np.zeros(len(fl)), np.ones(len(fl)), fl.count, _members(ep, fl, n_links), capacity)


def guarantee(ep: Endpoints, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """Eq. 3: every application's guaranteed progress ``omega_i / B``, B the largest U^k or D^k (Eq. 2).

    One system bottleneck for all applications (the ``B*`` of Alg. 3 line
    2-5 and Eq. 5b): an application that does not use the bottleneck link
    still gets only ``omega_i / B`` of its demand. 0 for applications
    without endpoints. See ``docs/readings.md``, "Libra: DRF".
    """
    progress = np.zeros(n_apps)
    if len(ep):
        progress[ep.app] = ep.weight / float(link_load(ep, capacity).max())
    return progress


def drf(ep: Endpoints, fl: Flows, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """DRF as Libra reads it (Eq. 3, §II-B): every flow of application i gets ``omega_i / B x share``.

    Every application progresses at the same (weighted) rate, set by the
    single most loaded link, and nothing more is handed out: not work
    conserving, a link's bandwidth beyond that stays idle (Fig. 4: 0.375
    Gbps of DL2 in Fig. 1(b)).
    """
    return guarantee(ep, capacity, n_apps)[flow_app(ep, fl)] * flow_share(ep, fl)


def hug(ep: Endpoints, fl: Flows, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """HUG (Chowdhury et al., NSDI 2016): DRF's optimal isolation, then strategy-proof backfilling.

    Stage 1 is :func:`drf`: every flow of application i gets ``P_i x share``,
    ``P_i = omega_i / B`` (HUG's optimal isolation guarantee P*, Eq. 3).
    Stage 2 fills each link's spare bandwidth, every flow growing in
    proportion to its weighted share, under HUG's one restriction: no
    application's allocation on a link exceeds ``P_i`` times the link's
    capacity. Demands are elastic (Libra §II-A), so a container may receive
    more than its stated demand. On the paper's Fig. 1(b) this fills DL2
    (c21 at its cap 0.625 Gbps, c12 at 0.375), where the paper reports
    0.125 Gbps idle; see ``tests/test_network_exact.py`` for the arithmetic.
    """
    n_links = len(capacity)
    progress = guarantee(ep, capacity, n_apps)
    app = flow_app(ep, fl)
    share = flow_share(ep, fl)
    links = _members(ep, fl, n_links)
    # One extra constraint per (application, link): P_i x capacity. Index n_links + position; 'none' stays last.
    pairs = np.where(links < n_links, app[:, None] * n_links + links, -1)
    present = np.bincount(pairs[pairs >= 0], minlength=n_apps * n_links) > 0
    keys = np.flatnonzero(present)
    position = np.cumsum(present) - 1
    app_links = np.where(pairs >= 0, position[np.maximum(pairs, 0)], -1)
    n_cons = n_links + len(keys)
    limit = np.concatenate([capacity, progress[keys // n_links] * capacity[keys % n_links]])
    members = np.column_stack([np.where(links < n_links, links, n_cons),
                               np.where(app_links >= 0, n_links + app_links, n_cons)])
    return fill(progress[app] * share, flow_weight(ep, fl) * share, fl.count, members, limit)


def libra(ep: Endpoints, fl: Flows, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """Alg. 3: bottleneck B*, proportional guarantee omega_i / B* (Eq. 3, 5b), work-conserving backfill.

    Every flow first gets ``omega_i x share / B*`` (B* the largest U^k or D^k
    of Eq. 2), then the spare bandwidth is backfilled over flows, each
    growing in proportion to its weighted share, until every flow crosses a
    full link (§IV-C: backfilled bandwidth "still proportional to the
    weighted demands"). A flow keeps one rate at both ends, so a sender is
    never credited more than its receivers take, and every flow ends on a
    full link: the allocation is work conserving (Fig. 4: no idle bandwidth
    where traffic can use it).
    """
    n_links = len(capacity)
    share = flow_share(ep, fl)
    return fill(guarantee(ep, capacity, n_apps)[flow_app(ep, fl)] * share, flow_weight(ep, fl) * share, fl.count,
                _members(ep, fl, n_links), capacity)


ALLOCATIONS = {"per-flow": per_flow, "drf": drf, "hug": hug, "libra": libra}
