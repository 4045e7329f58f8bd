"""Bandwidth allocation on access links (Sec. III-B, Alg. 3) and the isolation guarantee (Eq. 1).

Everything works on *endpoints*: one per container and direction with
traffic (a container's uplink side if it sends, its downlink side if it
receives). Arrays, one entry per endpoint:

    link    index of the access link (uplink of machine k is k, its downlink M + k)
    app     index of the application
    demand  the container's bandwidth demand on that link, Gbps (> 0)
    weight  the application's weight omega_i
    flows   how many flows of the container cross that link

``capacity`` holds each link's capacity in Gbps. An allocation returns each
endpoint's rate in Gbps; with the machine-normalised quantities of the paper,
``rate / capacity`` is alpha_ij^k (uplink) or beta_ij^k (downlink).

Congestion happens only at access links (Sec. II-A). Demands are elastic: a
container may receive more than its demand when a link has spare bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-12


@dataclass(frozen=True)
class Endpoints:
    link: np.ndarray
    app: np.ndarray
    demand: np.ndarray
    weight: np.ndarray
    flows: np.ndarray

    def __len__(self) -> int:
        return len(self.link)


def link_sum(values: np.ndarray, link: np.ndarray, n_links: int) -> np.ndarray:
    return np.bincount(link, weights=values, minlength=n_links)


def link_load(ep: Endpoints, capacity: np.ndarray) -> np.ndarray:
    """U^k and D^k of Eq. 2: the weighted, machine-normalised demand on every link."""
    return link_sum(ep.weight * ep.demand / capacity[ep.link], ep.link, len(capacity))


def isolation(ep: Endpoints, rate: np.ndarray, n_apps: int) -> np.ndarray:
    """Eq. 1 per application: min over its endpoints of allocation / demand, capped at 1.

    The cap reads the guarantee as the share of demand that is met: an
    application whose every container receives its full demand has
    isolation 1, bandwidth beyond demand being utilisation, not isolation.
    Applications without endpoints get NaN.
    """
    out = np.full(n_apps, np.inf)
    np.minimum.at(out, ep.app, rate / ep.demand)
    out[np.isinf(out)] = np.nan
    return np.minimum(out, 1.0)


def per_flow(ep: Endpoints, capacity: np.ndarray) -> np.ndarray:
    """Per-flow fairness (the paper's baseline): each link split equally among the flows on it."""
    flows = link_sum(ep.flows.astype(float), ep.link, len(capacity))
    return capacity[ep.link] * ep.flows / flows[ep.link]


def _progressive_filling(ep: Endpoints, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """Weighted max-min progress (DRF, equal progress): application i's progress is omega_i * t.

    Every endpoint of application i receives ``progress_i * demand``. t grows
    until a link saturates; the applications on it freeze; repeat. Returns
    the progress of every application.
    """
    n_links = len(capacity)
    use = ep.weight * ep.demand / capacity[ep.link]  # link share per unit of t
    progress = np.zeros(n_apps)
    frozen = np.zeros(n_apps, dtype=bool)
    frozen[np.setdiff1d(np.arange(n_apps), ep.app)] = True
    used = np.zeros(n_links)
    t = 0.0
    while not frozen.all():
        active = ~frozen[ep.app]
        slope = link_sum(np.where(active, use, 0.0), ep.link, n_links)
        residual = 1.0 - used
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(slope > EPS, residual / slope, np.inf)
        dt = max(float(step.min()), 0.0)
        t += dt
        used += slope * dt
        saturated = (slope > EPS) & (used >= 1.0 - 1e-9)
        hit = np.unique(ep.app[active & saturated[ep.link]])
        progress[hit] = t
        frozen[hit] = True
    app_weight = np.zeros(n_apps)
    app_weight[ep.app] = ep.weight
    return progress * app_weight


def drf(ep: Endpoints, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """DRF on the network: equal (weighted) progress, max-min by progressive filling.

    Not work conserving: a link's bandwidth beyond what the correlated
    demands of its applications can use stays idle (Fig. 4: 0.375 Gbps of
    DL2 in Fig. 1(b)).
    """
    return _progressive_filling(ep, capacity, n_apps)[ep.app] * ep.demand


def _backfill(ep: Endpoints, capacity: np.ndarray, rate: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Share each link's spare bandwidth in proportion to weighted demand, each endpoint up to ``cap``.

    Water-filling: endpoints that reach their cap drop out and the rest of
    the spare goes round again, so a link ends full unless every endpoint on
    it is capped.
    """
    n_links = len(capacity)
    rate = rate.copy()
    share = ep.weight * ep.demand
    while True:
        spare = capacity - link_sum(rate, ep.link, n_links)
        open_ = rate < cap - EPS
        pool = link_sum(np.where(open_, share, 0.0), ep.link, n_links)
        give = open_ & (spare[ep.link] > EPS * capacity[ep.link]) & (pool[ep.link] > 0)
        if not give.any():
            return rate
        extra = np.where(give, spare[ep.link] * share / np.where(pool[ep.link] > 0, pool[ep.link], 1.0), 0.0)
        rate = np.minimum(rate + extra, np.maximum(cap, rate))


def hug(ep: Endpoints, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """HUG (Chowdhury et al., NSDI 2016): DRF's optimal isolation, then strategy-proof backfilling.

    Stage 1 is :func:`drf`: every application reaches the progress P_i of
    progressive filling (P* for all when one link bounds them all). Stage 2
    hands out each link's spare bandwidth (in proportion to weighted demand)
    under HUG's one restriction: no application's allocation on a link
    exceeds P_i times the link's capacity. Demands are elastic (Libra
    §II-A), so a container may receive more than its stated demand. On the
    paper's Fig. 1(b) this fills DL2 (c21 at its cap 0.625 Gbps, c12 at
    0.375), where the paper reports 0.125 Gbps idle; see
    ``tests/test_network_exact.py`` for the arithmetic.
    """
    progress = _progressive_filling(ep, capacity, n_apps)
    rate = progress[ep.app] * ep.demand
    key = ep.app.astype(np.int64) * len(capacity) + ep.link
    _, group = np.unique(key, return_inverse=True)
    app_demand_on_link = np.bincount(group, weights=ep.demand)[group]
    app_cap = progress[ep.app] * capacity[ep.link] * ep.demand / app_demand_on_link
    return _backfill(ep, capacity, rate, np.maximum(app_cap, rate))


def libra(ep: Endpoints, capacity: np.ndarray, n_apps: int) -> np.ndarray:
    """Alg. 3: bottleneck B*, proportional guarantee omega_i / B* (Eq. 3, 5b), work-conserving backfill.

    Every endpoint first gets ``omega_i * demand / B*`` (B* the largest U^k or
    D^k of Eq. 2), then each link's remainder is backfilled in proportion to
    weighted demand without caps, so every link that carries traffic is fully
    allocated (Fig. 4: no idle bandwidth).
    """
    bottleneck = float(link_load(ep, capacity).max())
    rate = ep.weight * ep.demand / bottleneck
    return _backfill(ep, capacity, rate, np.full(len(ep), np.inf))


ALLOCATIONS = {"per-flow": lambda ep, cap, n: per_flow(ep, cap), "drf": drf, "hug": hug, "libra": libra}
