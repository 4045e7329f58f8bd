"""The fair-sharing model: an organisation tree over a multi-resource cluster.

Scenario ``model`` format (JSON)::

    {
      "resources": [{"name": "cpu", "capacity": 200, "unit": "cores"},
                    {"name": "mem", "capacity": 200, "unit": "GB"}],
      "tree": {"name": "root", "children": [
          {"name": "n1", "weight": 1, "children": [
              {"name": "n11", "demand": {"cpu": 1}, "tasks": 2000,
               "duration": 50, "arrival": 0, "departure": null}]}]},
      "horizon": null
    }

A node with a ``demand`` is a leaf (a job: identical tasks, each needing
``demand``); any other node is a department whose ``children`` may be empty.
``weight`` defaults to 1; ``departure`` (optional) is when the job leaves,
killing its running tasks; ``horizon`` (optional) ends the simulation early.

:func:`normalize_model` checks everything a user can get wrong and names the
field (``tree.children[0].children[1].demand.cpu``) in its
:class:`~sched_engine.core.ScenarioError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

from ..core import validate
from ..core.errors import ScenarioError

NODE_KEYS = {"name", "weight", "children", "demand", "tasks", "duration", "arrival", "departure"}
#: Bounds on a tree (the engine counts tasks, it never builds one object per task).
MAX_TREE_NODES = 100_000
MAX_TASKS_PER_JOB = 10**9


def _normalize_resources(raw: Any) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("resources", "the cluster needs at least one resource type with a capacity")
    resources, seen = [], set()
    for index, item in enumerate(raw):
        field = f"resources[{index}]"
        if not isinstance(item, Mapping):
            raise ScenarioError(field, "must be an object with name and capacity")
        name = validate.name(item.get("name"), f"{field}.name")
        if name in seen:
            raise ScenarioError(f"{field}.name", f"resource {name!r} is listed twice")
        seen.add(name)
        capacity = validate.number_text(item.get("capacity"), f"{field}.capacity", above=0)
        unit = item.get("unit", "")
        if not isinstance(unit, str):
            raise ScenarioError(f"{field}.unit", "must be text")
        resources.append({"name": name, "capacity": capacity, "unit": unit})
    return resources


def _normalize_node(raw: Any, field: str, resources: list[dict], names: set[str], depth: int) -> dict:
    if depth > 64:
        raise ScenarioError(field, "the tree is deeper than 64 levels")
    if not isinstance(raw, Mapping):
        raise ScenarioError(field, "must be an object (a department or a job)")
    unknown = sorted(set(raw) - NODE_KEYS)
    if unknown:
        raise ScenarioError(f"{field}.{unknown[0]}", f"unknown field (known: {', '.join(sorted(NODE_KEYS))})")
    name = validate.name(raw.get("name"), f"{field}.name")
    if len(names) >= MAX_TREE_NODES:
        raise ScenarioError(f"{field}.name", f"the tree has more than {MAX_TREE_NODES:,} nodes")
    if name in names:
        raise ScenarioError(f"{field}.name", f"node name {name!r} is used twice; names must be unique")
    names.add(name)
    weight = validate.number_text(raw.get("weight", 1), f"{field}.weight", above=0)
    if "demand" not in raw:
        children = raw.get("children", [])
        if not isinstance(children, list):
            raise ScenarioError(f"{field}.children", "must be a list of nodes")
        return {
            "name": name,
            "weight": weight,
            "children": [
                _normalize_node(child, f"{field}.children[{i}]", resources, names, depth + 1)
                for i, child in enumerate(children)
            ],
        }
    if raw.get("children"):
        raise ScenarioError(f"{field}.children", f"{name!r} has a demand, so it is a job and cannot have children")
    demand_raw = raw["demand"]
    if not isinstance(demand_raw, Mapping):
        raise ScenarioError(f"{field}.demand", "must map resource names to per-task amounts")
    known = {r["name"]: r for r in resources}
    demand = {}
    for resource_name, amount in demand_raw.items():
        dfield = f"{field}.demand.{resource_name}"
        if resource_name not in known:
            raise ScenarioError(dfield, f"the cluster has no resource {resource_name!r} (it has {', '.join(known)})")
        value = validate.number_text(amount, dfield, minimum=0.0)
        capacity = known[resource_name]["capacity"]
        if value > capacity:
            raise ScenarioError(
                dfield, f"one task needs {value:g} {resource_name} but the whole cluster has {capacity:g}"
            )
        if value > 0:
            demand[resource_name] = value
    if not demand:
        raise ScenarioError(f"{field}.demand", f"job {name!r} demands nothing; give at least one resource a positive amount")
    arrival = validate.number_text(raw.get("arrival", 0), f"{field}.arrival", minimum=0.0)
    departure = raw.get("departure")
    if departure is not None and departure != "":
        departure = validate.number_text(departure, f"{field}.departure")
        if departure <= arrival:
            raise ScenarioError(f"{field}.departure", f"must be after the arrival ({arrival:g} s), got {departure:g}")
    else:
        departure = None
    return {
        "name": name,
        "weight": weight,
        "demand": {r["name"]: demand[r["name"]] for r in resources if r["name"] in demand},
        "tasks": validate.number_text(raw.get("tasks"), f"{field}.tasks", above=0, maximum=MAX_TASKS_PER_JOB,
                                      integer=True),
        "duration": validate.number_text(raw.get("duration"), f"{field}.duration", above=0),
        "arrival": arrival,
        "departure": departure,
    }


def normalize_model(model: Mapping[str, Any], *, require_jobs: bool = True) -> dict:
    """Validate a fair-sharing model and return its canonical JSON form.

    ``require_jobs=False`` accepts a tree without jobs (a draft being edited);
    a model to simulate needs at least one.
    """
    if not isinstance(model, Mapping):
        raise ScenarioError("model", "must be a JSON object with resources and tree")
    unknown = sorted(set(model) - {"resources", "tree", "horizon"})
    if unknown:
        raise ScenarioError(unknown[0], "unknown model field (known: resources, tree, horizon)")
    resources = _normalize_resources(model.get("resources"))
    if "tree" not in model:
        raise ScenarioError("tree", "the model needs a tree (the root department)")
    tree = _normalize_node(model["tree"], "tree", resources, set(), 0)
    if "demand" in tree:
        raise ScenarioError("tree", "the root must be a department, not a job")
    if require_jobs and not any(True for _ in _iter_leaves(tree)):
        raise ScenarioError("tree", "the tree is empty: add at least one job under the root")
    horizon = model.get("horizon")
    if horizon is not None:
        horizon = validate.number_text(horizon, "horizon", above=0)
    return {"resources": resources, "tree": tree, "horizon": horizon}


def _iter_leaves(node: dict):
    if "demand" in node:
        yield node
    for child in node.get("children", ()):
        yield from _iter_leaves(child)


@dataclass(frozen=True)
class Tree:
    """Array form of a normalised model, indexed for fast simulation.

    Nodes are numbered in pre-order (root = 0), so every node's subtree is
    the contiguous range ``[index, index + size)``. Leaves (jobs) are also
    numbered 0..p-1 in pre-order; ``leaf_node[i]`` is leaf ``i``'s node.
    """

    resources: tuple[str, ...]
    units: tuple[str, ...]
    capacity: tuple[float, ...]
    names: tuple[str, ...]
    parent: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    weight: tuple[float, ...]
    size: tuple[int, ...]
    depth: tuple[int, ...]
    leaf_of_node: tuple[int, ...]  # node -> leaf number, -1 for departments
    leaf_node: tuple[int, ...]
    demand: tuple[tuple[float, ...], ...]  # leaf -> per-task demand per resource
    tasks: tuple[int, ...]
    duration: tuple[float, ...]
    arrival: tuple[float, ...]
    departure: tuple[float | None, ...]
    horizon: float | None

    @property
    def node_count(self) -> int:
        return len(self.names)

    @property
    def leaf_count(self) -> int:
        return len(self.leaf_node)

    def is_leaf(self, node: int) -> bool:
        return self.leaf_of_node[node] >= 0

    def path(self, node: int) -> str:
        parts = []
        while node >= 0:
            parts.append(self.names[node])
            node = self.parent[node]
        return "/".join(reversed(parts))

    def ancestors(self, node: int) -> list[int]:
        """Strict ancestors of ``node``, nearest first, root last."""
        result = []
        node = self.parent[node]
        while node >= 0:
            result.append(node)
            node = self.parent[node]
        return result

    @cached_property
    def sibling_index(self) -> tuple[int, ...]:
        """Each node's index among its parent's children (the root: 0): H-DRF's tie-break between siblings."""
        index = [0] * self.node_count
        for a in self.internal_postorder:
            for i, c in enumerate(self.children[a]):
                index[c] = i
        return tuple(index)

    @cached_property
    def internal_postorder(self) -> tuple[int, ...]:
        """Departments in post-order (every child before its parent)."""
        return tuple(n for n in reversed(range(self.node_count)) if not self.is_leaf(n))

    @classmethod
    def from_model(cls, model: Mapping[str, Any]) -> "Tree":
        """Build from a model already checked by :func:`normalize_model`."""
        resources = [r["name"] for r in model["resources"]]
        names, parent, children, weight, size, depth, leaf_of_node = [], [], [], [], [], [], []
        leaf_node, demand, tasks, duration, arrival, departure = [], [], [], [], [], []

        def visit(node: dict, parent_index: int, level: int) -> int:
            index = len(names)
            names.append(node["name"])
            parent.append(parent_index)
            children.append([])
            weight.append(float(node.get("weight", 1.0)))
            size.append(1)
            depth.append(level)
            if "demand" in node:
                leaf_of_node.append(len(leaf_node))
                leaf_node.append(index)
                demand.append(tuple(float(node["demand"].get(r, 0.0)) for r in resources))
                tasks.append(int(node["tasks"]))
                duration.append(float(node["duration"]))
                arrival.append(float(node.get("arrival", 0.0)))
                departure.append(node.get("departure"))
            else:
                leaf_of_node.append(-1)
                for child in node.get("children", ()):
                    child_index = visit(child, index, level + 1)
                    children[index].append(child_index)
                    size[index] += size[child_index]
            return index

        visit(model["tree"], -1, 0)
        return cls(
            resources=tuple(resources),
            units=tuple(r.get("unit", "") for r in model["resources"]),
            capacity=tuple(float(r["capacity"]) for r in model["resources"]),
            names=tuple(names),
            parent=tuple(parent),
            children=tuple(tuple(c) for c in children),
            weight=tuple(weight),
            size=tuple(size),
            depth=tuple(depth),
            leaf_of_node=tuple(leaf_of_node),
            leaf_node=tuple(leaf_node),
            demand=tuple(demand),
            tasks=tuple(tasks),
            duration=tuple(duration),
            arrival=tuple(arrival),
            departure=tuple(departure),
            horizon=model.get("horizon"),
        )
