"""Isolation guarantee per group: Libra's and HUG's definition applied to an organisation.

HUG (Chowdhury et al., NSDI 2016) and Libra (§II-A) call an allocation's
isolation guarantee the smallest, over tenants, of the progress each gets
relative to what it is owed. For the groups of a site at time ``t``:

* ``received_g(t)``: the dominant share of the group's running jobs,
  ``max_r used_g,r(t) / capacity_r`` over CPUs and memory;
* ``entitled_g(t) = w_g / sum(w_h for the groups h active at t)``, where a
  group is active while it has jobs running or waiting (shares of idle
  groups are redistributed, as every work-conserving policy does);
* ``isolation_g(t) = min(1, received_g / entitled_g)`` while the group has
  jobs waiting, and ``1`` when it has none (its demand is met);
* ``isolation(t) = min_g isolation_g(t)`` over the active groups (1 when none is).

Every value lies in [0, 1]. A group at 0.5 got half of what its weight
promised while it was kept waiting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MINIMUM = "minimum"


def isolation_guarantee(times: np.ndarray, received: np.ndarray, running: np.ndarray, waiting: np.ndarray,
                        weights: np.ndarray, groups: list[str]) -> pd.DataFrame:
    """A ``timeline`` frame of ``isolation_guarantee`` per group and for the ``minimum`` (see the module docstring).

    ``received``, ``running`` (bool) and ``waiting`` (bool) are ``T × G``
    arrays sampled at ``times`` (each row holds from its time to the next);
    ``weights`` has one entry per group.
    """
    received = np.asarray(received, dtype=float)
    running, waiting = np.asarray(running, dtype=bool), np.asarray(waiting, dtype=bool)
    weights = np.asarray(weights, dtype=float)
    active = running | waiting
    active_weight = (active * weights).sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        entitled = np.where(active, weights / np.where(active_weight > 0, active_weight, 1.0), 0.0)
        ratio = np.where(entitled > 0, received / entitled, 1.0)
    per_group = np.where(waiting, np.minimum(1.0, ratio), 1.0)
    minimum = np.where(active.any(axis=1), np.where(active, per_group, 1.0).min(axis=1), 1.0)
    count = len(times)
    frames = [pd.DataFrame({"time": times, "entity": group, "metric": "isolation_guarantee",
                            "value": per_group[:, g]}) for g, group in enumerate(groups)]
    frames.append(pd.DataFrame({"time": times, "entity": np.full(count, MINIMUM), "metric": "isolation_guarantee",
                                "value": minimum}))
    return pd.concat(frames, ignore_index=True)
