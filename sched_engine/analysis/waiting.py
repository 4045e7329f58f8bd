"""Why jobs waited, per group: the share of each group's waiting time that each pending reason covers.

A batch run's ``pending`` frame (:mod:`sched_engine.batch.pending`) tiles
every job's wait with reason intervals. Summed per group of the jobs
(``group``, ``user``, ``queue``: any column of the ``jobs`` frame), the
lengths give, for group ``g`` and reason ``r``,

    seconds(g, r) = Σ over the intervals of g's jobs with reason r of (to_time - from_time)
    share(g, r)   = seconds(g, r) / Σ_r' seconds(g, r')

so each group's shares add up to 1 (groups whose jobs never waited have no
row). The page draws it as one stacked bar per group.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..batch.pending import job_positions

COLUMNS = ("key", "reason", "seconds", "share")


def waiting_share_by_reason(pending: pd.DataFrame, jobs: pd.DataFrame, by: str = "group") -> pd.DataFrame:
    """``key, reason, seconds, share`` rows, groups by total waiting time (largest first), reasons by name.

    ``pending``: ``job_id, from_time, to_time, reason``; ``jobs``: ``job_id``
    and the column ``by`` (an empty value is its own group, shown as ``""``).
    """
    if by not in jobs.columns:
        raise KeyError(f"the jobs frame has no column {by!r}")
    # Codes per interval, never a string per interval (a log's reasons run to tens of millions of rows).
    keys = pd.Categorical(np.append(jobs[by].astype("string").fillna("").to_numpy(object), ""))   # last: no job
    reasons = pending["reason"].astype("category")
    reasons = reasons.cat.reorder_categories(sorted(reasons.cat.categories))   # by name
    frame = pd.DataFrame({
        "key": pd.Categorical.from_codes(keys.codes[job_positions(jobs["job_id"], pending["job_id"])],
                                         dtype=keys.dtype),
        "reason": reasons.array,
        "seconds": (pending["to_time"] - pending["from_time"]).to_numpy(dtype=float),
    })
    if frame.empty:
        return pd.DataFrame({name: pd.Series(dtype="float64" if name in ("seconds", "share") else "string")
                             for name in COLUMNS})
    table = frame.groupby(["key", "reason"], sort=True, observed=True)["seconds"].sum().reset_index()
    table = table.astype({"key": str, "reason": str})
    totals = table.groupby("key")["seconds"].transform("sum")
    table["share"] = table["seconds"] / totals
    order = table.groupby("key")["seconds"].sum().sort_values(ascending=False, kind="stable")
    table["rank"] = table["key"].map({key: index for index, key in enumerate(order.index)})
    table = table.sort_values(["rank", "reason"], kind="stable").drop(columns="rank").reset_index(drop=True)
    return table.astype({"key": "string", "reason": "string"})[list(COLUMNS)]
