"""A site's organisation tree, derived from its workload log or given as JSON.

The tree is the fair-sharing engine's shape without jobs at the leaves:
departments have ``children``, leaves are users and name the log's user id
they stand for::

    {"name": "root", "children": [
        {"name": "group 3", "weight": 1.0, "children": [
            {"name": "user 17", "weight": 1.0, "user": "17"},
            {"name": "user 42", "weight": 1.0, "user": "42"}]}]}

Derived from a log (:func:`organisation_from_jobs`): root -> groups -> users.
Groups are the log's group ids (SWF field 13) when it records them, else its
queues (field 15), else its partitions (field 16), else one group ``all``.
Weights are equal, or proportional to the CPU-hours each node's jobs asked
for (``procs × run_time / 3600``), as a site that funds departments by past
usage would set them.

A job belongs to the leaf naming its user; jobs of users the tree does not
name belong to a leaf ``other users`` that :func:`assign_jobs` adds under the
root, counted in its report (never dropped silently).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core.errors import ScenarioError

WEIGHTINGS = ("equal", "cpu_hours")
GROUPING_COLUMNS = ("group", "queue", "partition")
OTHER_USERS = "other users"
MAX_DEPTH = 8


def _recorded(values: pd.Series) -> bool:
    """A log column records something when it has values other than missing, empty, or SWF's -1."""
    text = values.astype("string").fillna("").str.strip()
    return bool((~text.isin(["", "-1", "nan"])).any())


def grouping_column(jobs: pd.DataFrame) -> str | None:
    """The first of group, queue, partition the log records, or None."""
    for column in GROUPING_COLUMNS:
        if column in jobs.columns and _recorded(jobs[column]):
            return column
    return None


def organisation_from_jobs(jobs: pd.DataFrame, weighting: str = "equal") -> dict:
    """Root -> groups -> users from a workload frame (``user``, optional group/queue/partition, procs, run_time)."""
    if weighting not in WEIGHTINGS:
        raise ScenarioError("organisation.weighting", f"must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    if "user" not in jobs.columns:
        raise ScenarioError("organisation", "the log names no users, so no organisation can be derived from it")
    column = grouping_column(jobs)
    frame = pd.DataFrame({
        "user": jobs["user"].astype("string").fillna("unknown"),
        "group": jobs[column].astype("string").fillna("unknown") if column else "all",
        "cpu_hours": (jobs["procs"].to_numpy(float) * jobs["run_time"].to_numpy(float) / 3600.0
                      if {"procs", "run_time"} <= set(jobs.columns) else np.ones(len(jobs))),
    })
    label = {"group": "group", "queue": "queue", "partition": "partition", None: "group"}[column]
    groups = []
    for group, members in frame.groupby("group", sort=True):
        users = members.groupby("user", sort=True)["cpu_hours"].sum()
        children = [{"name": f"user {user}", "weight": _weight(hours, weighting), "user": str(user)}
                    for user, hours in users.items()]
        groups.append({"name": f"{label} {group}" if column else "all",
                       "weight": _weight(users.sum(), weighting), "children": children})
    return {"name": "root", "children": groups}


def _weight(cpu_hours: float, weighting: str) -> float:
    # A node whose jobs asked for no CPU time still gets a small positive weight, so it is never starved outright.
    return 1.0 if weighting == "equal" else max(round(float(cpu_hours), 3), 0.001)


def normalize_organisation(tree: Any, field: str = "organisation") -> dict:
    """Check a tree (names, positive finite weights, each user in one leaf) and return its canonical form."""
    seen_users: dict[str, str] = {}

    def walk(node: Any, path: str, depth: int) -> dict:
        if depth > MAX_DEPTH:
            raise ScenarioError(path, f"the tree is deeper than {MAX_DEPTH} levels")
        if not isinstance(node, Mapping):
            raise ScenarioError(path, "must be an object with a name and either children or a user")
        name = node.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ScenarioError(f"{path}.name", "must be a non-empty name")
        weight = node.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < float("inf"):
            raise ScenarioError(f"{path}.weight", f"must be a positive number, got {weight!r}")
        children, user = node.get("children"), node.get("user")
        if (children is None) == (user is None):
            raise ScenarioError(path, f"{name!r} must have either children (a department) or a user (a leaf)")
        if user is not None:
            user = str(user).strip()
            if user in seen_users:
                raise ScenarioError(f"{path}.user", f"user {user} is already the leaf {seen_users[user]!r}")
            seen_users[user] = name.strip()
            return {"name": name.strip(), "weight": float(weight), "user": user}
        if not isinstance(children, list) or not children:
            raise ScenarioError(f"{path}.children", f"department {name!r} needs at least one member")
        return {"name": name.strip(), "weight": float(weight),
                "children": [walk(child, f"{path}.children[{i}]", depth + 1) for i, child in enumerate(children)]}

    return walk(tree, field, 0)


def leaves(tree: Mapping) -> list[tuple[tuple[str, ...], Mapping]]:
    """Every leaf with the names on its path from the root (root excluded), in tree order."""
    found = []

    def walk(node: Mapping, path: tuple[str, ...]) -> None:
        if "user" in node:
            found.append((path, node))
        for child in node.get("children", ()):
            walk(child, (*path, child["name"]))

    walk(tree, ())
    return found


def assign_jobs(tree: Mapping, users: pd.Series) -> tuple[dict, np.ndarray, int]:
    """The tree (with an ``other users`` leaf when needed), each job's leaf index, and how many jobs went there."""
    index = {leaf["user"]: i for i, (_, leaf) in enumerate(leaves(tree))}
    codes = users.astype("string").fillna("").map(index)
    unknown = codes.isna().to_numpy()
    tree = dict(tree)
    if unknown.any():
        tree["children"] = [*tree["children"], {"name": OTHER_USERS, "weight": 1.0, "user": "\0other"}]
        codes = codes.fillna(len(index))
    return tree, codes.to_numpy(dtype=np.int64), int(unknown.sum())
