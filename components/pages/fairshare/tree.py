"""The hierarchy as the page draws it: the tree's elements and style, and the nodes its share heatmaps show."""

from __future__ import annotations

import json

from . import tree_edit

#: A tree with more jobs than this is drawn folded: each department shows how many jobs it holds.
TREE_MAX_JOBS = 64
#: Most rows of the share heatmaps of a large tree (a breadth of the tree; see :func:`share_nodes`).
SHARE_NODES = 64
TREE_STYLE = [
    {"selector": "node", "style": {"label": "data(label)", "font-size": 11, "text-wrap": "wrap",
                                   "text-valign": "center", "color": "#1b2733", "width": 70, "height": 34,
                                   "shape": "round-rectangle", "background-color": "#dbe7f3",
                                   "border-width": 1, "border-color": "#7a96b3"}},
    {"selector": ".job", "style": {"background-color": "#fbe3c8", "border-color": "#c98a3d", "shape": "ellipse"}},
    {"selector": "edge", "style": {"curve-style": "taxi", "taxi-direction": "downward", "line-color": "#9aa9b8",
                                   "width": 1.5}},
    {"selector": ":selected", "style": {"border-width": 3, "border-color": "#1f6fb2"}},
]


def tree_elements(draft: dict) -> list[dict]:
    """Cytoscape nodes and edges for the draft's tree.

    Beyond :data:`TREE_MAX_JOBS` jobs the jobs are left out and each
    department's label counts the jobs directly below it.
    """
    elements = []
    fold = len(leaves_of(draft)) > TREE_MAX_JOBS

    def visit(node, parent):
        job = tree_edit.is_job(node)
        if fold and job:
            return
        label = node["name"] if node.get("weight", 1) == 1 else f"{node['name']}\nw={node['weight']:g}"
        jobs = sum(tree_edit.is_job(child) for child in node.get("children", ()))
        if fold and jobs:
            label += f"\n{jobs} jobs"
        elements.append({"data": {"id": node["name"], "label": label}, "classes": "job" if job else "department"})
        if parent is not None:
            elements.append({"data": {"source": parent, "target": node["name"]}})
        for child in node.get("children", ()):
            visit(child, node["name"])

    visit(draft["tree"], None)
    return elements


def share_nodes(model: dict) -> list[str]:
    """The tree nodes a large tree's share heatmaps show, in tree order.

    Starting below the root, a level is replaced by the next one down (jobs
    stay) while that has at most :data:`SHARE_NODES` nodes: for a full binary
    tree of 1,024 jobs below 32 bottom departments, those 32 departments.
    """
    level = model["tree"].get("children") or [model["tree"]]
    while any(node.get("children") for node in level):
        deeper = [child for node in level for child in (node.get("children") or [node])]
        if len(deeper) > SHARE_NODES:
            break
        level = deeper
    return [node["name"] for node in level]


def leaves_of(draft: dict) -> list[str]:
    names = []

    def visit(node):
        if tree_edit.is_job(node):
            names.append(node["name"])
        for child in node.get("children", ()):
            visit(child)

    visit(draft["tree"])
    return names


def tree_stylesheet(leaf: str | None) -> list[dict]:
    """The tree's style, with ``leaf`` (any node name, dots included) outlined."""
    if not leaf:
        return TREE_STYLE
    return [*TREE_STYLE, {"selector": f"node[id = {json.dumps(leaf)}]",
                          "style": {"border-width": 4, "border-color": "#d62728"}}]
