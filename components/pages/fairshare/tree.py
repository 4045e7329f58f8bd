"""The hierarchy as the page draws it: the tree's elements and style, and the nodes its share heatmaps show.

Drawing is the shared tree editor's (:mod:`components.widgets.tree_editor`); the leaves here are jobs.
"""

from __future__ import annotations

from ...widgets import tree_editor
from . import tree_edit

#: A tree with more jobs than this is drawn folded: each department shows how many jobs it holds.
TREE_MAX_JOBS = tree_editor.TREE_MAX_LEAVES
#: Most rows of the share heatmaps of a large tree (a breadth of the tree; see :func:`share_nodes`).
SHARE_NODES = 64
TREE_STYLE = tree_editor.tree_style("job")


def tree_elements(draft: dict) -> list[dict]:
    """Cytoscape nodes and edges for the draft's tree (folded beyond :data:`TREE_MAX_JOBS` jobs)."""
    return tree_editor.tree_elements(draft["tree"], tree_edit.is_job, "job", max_leaves=TREE_MAX_JOBS)


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
    return tree_editor.leaf_names(draft["tree"], tree_edit.is_job)


def tree_stylesheet(leaf: str | None) -> list[dict]:
    """The tree's style, with ``leaf`` (any node name, dots included) outlined."""
    return tree_editor.tree_style("job", leaf)
