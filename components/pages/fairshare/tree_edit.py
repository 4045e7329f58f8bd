"""Pure edits of a fair-sharing draft model (the tree editor's logic; the generic part is :mod:`components.widgets.tree_editor`).

Every function takes the draft (plain JSON data) and returns a new one; the
input is never modified. Invalid form input raises
:class:`~sched_engine.ScenarioError` so the caller can show it and keep the
previous draft.
"""

from __future__ import annotations

import copy
from typing import Any

from sched_engine import ScenarioError
from sched_engine.fairshare import normalize_model

from ...widgets import tree_editor


def find(node: dict, name: str) -> dict | None:
    return tree_editor.find(node, name)


def is_job(node: dict) -> bool:
    return "demand" in node


def add_department(draft: dict, selected: str | None) -> tuple[dict, str]:
    tree, _, name = tree_editor.add_department(draft["tree"], selected, is_job, noun="job")
    return {**copy.deepcopy(draft), "tree": tree}, name


def add_job(draft: dict, selected: str | None) -> tuple[dict, str]:
    new = copy.deepcopy(draft)
    parent = tree_editor.department_for(new["tree"], selected, is_job, "job")
    name = tree_editor.fresh_name(new["tree"], "job")
    first = new["resources"][0]["name"]
    parent.setdefault("children", []).append(
        {"name": name, "weight": 1.0, "demand": {first: 1.0}, "tasks": 100, "duration": 30.0,
         "arrival": 0.0, "departure": None}
    )
    return new, name


def remove(draft: dict, selected: str | None) -> dict:
    return {**copy.deepcopy(draft), "tree": tree_editor.without(draft["tree"], selected)}


def apply_form(draft: dict, selected: str, form: dict[str, Any]) -> dict:
    """Apply the side form to the selected node; the result must validate."""
    new = copy.deepcopy(draft)
    node = find(new["tree"], selected)
    if node is None:
        raise ScenarioError("selection", f"no node named {selected!r}")
    node["name"] = form.get("name")
    node["weight"] = form.get("weight")
    if is_job(node):
        node["demand"] = {r["name"]: form.get("demand", {}).get(r["name"]) or 0 for r in new["resources"]}
        for field in ("tasks", "duration", "arrival"):
            node[field] = form.get(field)
        node["departure"] = form.get("departure")
    return normalize_model(new, require_jobs=False)


def set_resources(draft: dict, rows: list[dict]) -> dict:
    """Replace the cluster's resources with the capacity table's rows."""
    new = copy.deepcopy(draft)
    new["resources"] = [
        {"name": row.get("name"), "capacity": row.get("capacity"), "unit": row.get("unit") or ""} for row in rows
    ]
    return normalize_model(new, require_jobs=False)


def form_values(draft: dict, selected: str | None) -> dict[str, Any]:
    """The side form's fields for the selected node (empty when none)."""
    node = find(draft["tree"], selected) if selected else None
    if node is None:
        return {}
    values = {"name": node["name"], "weight": node.get("weight", 1.0), "job": is_job(node)}
    if is_job(node):
        values.update(
            demand={r["name"]: node["demand"].get(r["name"], 0.0) for r in draft["resources"]},
            tasks=node["tasks"], duration=node["duration"], arrival=node.get("arrival", 0.0),
            departure=node.get("departure"),
        )
    return values
