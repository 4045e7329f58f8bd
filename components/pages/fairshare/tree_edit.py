"""Pure edits of a fair-sharing draft model (the tree editor's logic).

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


def find(node: dict, name: str) -> dict | None:
    if node["name"] == name:
        return node
    for child in node.get("children", ()):
        found = find(child, name)
        if found is not None:
            return found
    return None


def is_job(node: dict) -> bool:
    return "demand" in node


def _fresh_name(tree: dict, stem: str) -> str:
    index = 1
    while find(tree, f"{stem}{index}") is not None:
        index += 1
    return f"{stem}{index}"


def _department_for(draft: dict, selected: str | None) -> dict:
    target = find(draft["tree"], selected) if selected else None
    if target is None:
        return draft["tree"]
    if is_job(target):
        raise ScenarioError("selection", f"{selected!r} is a job; select a department to add under it")
    return target


def add_department(draft: dict, selected: str | None) -> tuple[dict, str]:
    new = copy.deepcopy(draft)
    parent = _department_for(new, selected)
    name = _fresh_name(new["tree"], "dept")
    parent.setdefault("children", []).append({"name": name, "weight": 1.0, "children": []})
    return new, name


def add_job(draft: dict, selected: str | None) -> tuple[dict, str]:
    new = copy.deepcopy(draft)
    parent = _department_for(new, selected)
    name = _fresh_name(new["tree"], "job")
    first = new["resources"][0]["name"]
    parent.setdefault("children", []).append(
        {"name": name, "weight": 1.0, "demand": {first: 1.0}, "tasks": 100, "duration": 30.0,
         "arrival": 0.0, "departure": None}
    )
    return new, name


def remove(draft: dict, selected: str | None) -> dict:
    if not selected or selected == draft["tree"]["name"]:
        raise ScenarioError("selection", "select a department or job to remove (the root stays)")
    new = copy.deepcopy(draft)

    def prune(node: dict) -> bool:
        children = node.get("children", [])
        for i, child in enumerate(children):
            if child["name"] == selected:
                del children[i]
                return True
            if prune(child):
                return True
        return False

    if not prune(new["tree"]):
        raise ScenarioError("selection", f"no node named {selected!r}")
    return new


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
