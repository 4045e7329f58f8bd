"""The tree editor pages share: a drawn tree to click, name and weight of the selected node, the workspace box.

Two pages edit a weighted tree: Fair sharing (departments over jobs) and
Site study (groups over the log's users). What differs is the leaf -- a job
with demands, or a user -- and how a tree is validated; the rest is here:

* :class:`Ids` -- the editor's component ids, derived from the page's name
  (``<page>-tree-cytoscape``, ``<page>-<item>-upload``, ...);
* layout pieces -- :func:`tree_view`, :func:`tree_buttons`,
  :func:`name_weight_fields`, :func:`workspace_box`;
* pure edits of a tree (plain JSON, never modified in place) --
  :func:`find`, :func:`fresh_name`, :func:`add_department`, :func:`without`;
* the tree as drawn -- :func:`tree_elements` (folding leaves and capping
  departments on a large tree), :func:`tree_style`;
* :func:`item_action` -- open a saved tree, save it, upload it as JSON,
  download it; on any error the tree on screen stays and the message names
  the file and the field.

A page passes its own leaf test (``is_leaf``) and its own validation
(``read(document, source)``, which raises :class:`ScenarioError`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import dash_cytoscape as cyto
from dash import dcc, html

from sched_engine import ScenarioError

from ..services.saved_items import clean_name, data_url_bytes, load_item, parse_item, save_item
from ..services.uploads import UploadError
from .fields import field


class Ids:
    """The ids of one page's tree editor; ``item`` names the saved kind, ``leaf`` the leaves (a button's id)."""

    def __init__(self, page: str, item: str = "hierarchy", leaf: str = "job"):
        self.page, self.item = page, item
        self.tree = f"{page}-tree-cytoscape"
        self.selected = f"{page}-selected-store"
        self.add_department = f"{page}-add-department-button"
        self.add_leaf = f"{page}-add-{leaf}-button"
        self.remove = f"{page}-remove-button"
        self.apply = f"{page}-apply-button"
        self.form_title = f"{page}-form-title"
        self.name = f"{page}-form-name-input"
        self.weight = f"{page}-form-weight-input"
        self.message = f"{page}-tree-message"
        self.choice = f"{page}-{item}-choice-dropdown"
        self.item_name = f"{page}-{item}-name-input"
        self.save = f"{page}-save-{item}-button"
        self.upload = f"{page}-{item}-upload"
        self.export = f"{page}-export-{item}-button"
        self.download = f"{page}-{item}-download"
        self.item_message = f"{page}-{item}-message"


# ---------------------------------------------------------------- layout

#: The tree is fitted to its box, but never drawn larger than this (a few nodes in a wide box stay node-sized).
TREE_MAX_ZOOM = 1.5


def tree_view(ids: Ids, height: str = "340px") -> html.Div:
    """The drawn tree; a node clicked sets the page's selection (``tapNodeData``)."""
    return html.Div(cyto.Cytoscape(
        id=ids.tree, elements=[], stylesheet=tree_style(),
        layout={"name": "preset", "fit": True, "padding": 12},   # positions from tree_elements
        style={"width": "100%", "height": height}, userZoomingEnabled=False, maxZoom=TREE_MAX_ZOOM),
        className="tree-box")


def tree_buttons(ids: Ids, department: str = "Add department", leaf: str | None = "Add job") -> html.Div:
    """Add a department (under the selected one), add a leaf (when the page's leaves can be added), remove."""
    buttons = [html.Button(department, id=ids.add_department)]
    if leaf:
        buttons.append(html.Button(leaf, id=ids.add_leaf))
    buttons.append(html.Button("Remove", id=ids.remove, className="danger"))
    return html.Div([html.Div(buttons, className="button-row"), html.Div(id=ids.message, className="message")])


def name_weight_fields(ids: Ids) -> list:
    """The selected node's name and weight (applied with the page's Apply button, ``ids.apply``)."""
    return [field("Name", dcc.Input(id=ids.name, type="text", debounce=True)),
            field("Weight", dcc.Input(id=ids.weight, type="text"))]


def workspace_box(ids: Ids, noun: str, upload_text: str) -> html.Details:
    """Open a saved tree, save it under a name, download it, upload one (JSON)."""
    return html.Details([
        html.Summary(f"Workspace: open, save, upload or download this {noun}"),
        dcc.Dropdown(id=ids.choice, options=[], value=None, placeholder=f"open a saved {noun}"),
        html.Div([dcc.Input(id=ids.item_name, type="text", placeholder="name"),
                  html.Button(f"Save {noun}", id=ids.save), html.Button(f"{ids.item}.json", id=ids.export)],
                 className="button-row"),
        dcc.Upload(id=ids.upload, multiple=False, className="upload-box",
                   children=html.Div([upload_text, html.Br(), html.Small("drag and drop or click")])),
        dcc.Download(id=ids.download),
        html.Div(id=ids.item_message, className="message"),
    ], className="workspace-box")


# ---------------------------------------------------------------- pure edits

def find(node: dict, name: str) -> dict | None:
    """The node called ``name`` in the tree below (and including) ``node``, or None."""
    if node["name"] == name:
        return node
    for child in node.get("children", ()):
        found = find(child, name)
        if found is not None:
            return found
    return None


def parent_of(node: dict, name: str) -> dict | None:
    """The department holding the node called ``name``, or None (the root, or no such node)."""
    for child in node.get("children", ()):
        if child["name"] == name:
            return node
        found = parent_of(child, name)
        if found is not None:
            return found
    return None


def fresh_name(tree: dict, stem: str) -> str:
    """``<stem><n>`` for the smallest ``n >= 1`` no node of ``tree`` is called."""
    index = 1
    while find(tree, f"{stem}{index}") is not None:
        index += 1
    return f"{stem}{index}"


def department_for(tree: dict, selected: str | None, is_leaf: Callable[[dict], bool], noun: str = "leaf") -> dict:
    """Where a new node goes: the selected department, or the root when nothing is selected (``noun``: a leaf's)."""
    target = find(tree, selected) if selected else None
    if target is None:
        return tree
    if is_leaf(target):
        raise ScenarioError("selection", f"{selected!r} is a {noun}; select a department to add under it")
    return target


def add_department(tree: dict, selected: str | None, is_leaf: Callable[[dict], bool],
                   stem: str = "dept", noun: str = "leaf") -> tuple[dict, dict, str]:
    """A copy of ``tree`` with an empty department under the selection: ``(tree, the new node, its name)``."""
    new = copy.deepcopy(tree)
    parent = department_for(new, selected, is_leaf, noun)
    name = fresh_name(new, stem)
    node = {"name": name, "weight": 1.0, "children": []}
    parent.setdefault("children", []).append(node)
    return new, node, name


def without(tree: dict, selected: str | None) -> dict:
    """A copy of ``tree`` without the selected node and everything below it (the root stays)."""
    if not selected or selected == tree["name"]:
        raise ScenarioError("selection", "select a department or leaf to remove (the root stays)")
    new = copy.deepcopy(tree)
    parent = parent_of(new, selected)
    if parent is None:
        raise ScenarioError("selection", f"no node named {selected!r}")
    parent["children"] = [child for child in parent["children"] if child["name"] != selected]
    return new


# ---------------------------------------------------------------- the tree as drawn

#: A tree with more leaves than this is drawn folded: each department shows how many leaves it holds.
TREE_MAX_LEAVES = 64
#: A department with more sub-departments than this draws the heaviest ones and one node for the rest.
TREE_MAX_CHILDREN = 40


def tree_style(leaf_class: str = "job", highlight: str | None = None) -> list[dict]:
    """The tree's style: departments as boxes, leaves (``leaf_class``) as ovals, ``highlight`` outlined in red."""
    style = [
        {"selector": "node", "style": {"label": "data(label)", "font-size": 11, "text-wrap": "wrap",
                                       "text-valign": "center", "color": "#1b2733", "width": 70, "height": 34,
                                       "shape": "round-rectangle", "background-color": "#dbe7f3",
                                       "border-width": 1, "border-color": "#7a96b3"}},
        {"selector": f".{leaf_class}", "style": {"background-color": "#fbe3c8", "border-color": "#c98a3d",
                                                 "shape": "ellipse"}},
        {"selector": ".more", "style": {"background-color": "#eeeeee", "border-style": "dashed"}},
        {"selector": "edge", "style": {"curve-style": "taxi", "taxi-direction": "downward", "line-color": "#9aa9b8",
                                       "width": 1.5}},
        {"selector": ":selected", "style": {"border-width": 3, "border-color": "#1f6fb2"}},
    ]
    if highlight:
        style.append({"selector": f"node[id = {json.dumps(highlight)}]",
                      "style": {"border-width": 4, "border-color": "#d62728"}})
    return style


def leaf_names(tree: dict, is_leaf: Callable[[dict], bool]) -> list[str]:
    """The leaves' names in tree order."""
    names: list[str] = []

    def visit(node):
        if is_leaf(node):
            names.append(node["name"])
        for child in node.get("children", ()):
            visit(child)

    visit(tree)
    return names


def tree_elements(tree: dict, is_leaf: Callable[[dict], bool], leaf_class: str = "job",
                  max_leaves: int = TREE_MAX_LEAVES, max_children: int = TREE_MAX_CHILDREN,
                  department: str = "department") -> list[dict]:
    """Cytoscape nodes and edges for a tree, bounded whatever its size.

    Beyond ``max_leaves`` leaves the leaves are left out and each
    department's label counts the leaves directly below it. A department
    with more than ``max_children`` sub-departments draws the
    ``max_children`` heaviest (by weight, then by the leaves below them,
    ties by name), heaviest first, and after them one dashed node ``+k more
    <department>s`` (on two lines) for the rest, so a site of 300 groups is
    drawn in 42 nodes (the page's table lists every node). Each node carries
    its position (:func:`_tidy_positions`): siblings read left to right in
    that order, whatever the tree drawn before.
    """
    elements: list[dict] = []
    below: dict[str, list[str]] = {}   # the nodes drawn under each node drawn, in drawing order
    fold = len(leaf_names(tree, is_leaf)) > max_leaves

    def heaviest(child) -> tuple:
        return -child.get("weight", 1.0), -len(leaf_names(child, is_leaf)), child["name"]

    def add(node_id: str, label: str, classes: str, parent: str | None) -> None:
        elements.append({"data": {"id": node_id, "label": label}, "classes": classes})
        below[node_id] = []
        if parent is not None:
            elements.append({"data": {"source": parent, "target": node_id}})
            below[parent].append(node_id)

    def visit(node, parent):
        leaf = is_leaf(node)
        if fold and leaf:
            return
        label = node["name"] if node.get("weight", 1) == 1 else f"{node['name']}\nw={node['weight']:.4g}"
        children = node.get("children", ())
        leaves = sum(is_leaf(child) for child in children)
        if fold and leaves:
            label += f"\n{leaves} {leaf_class}s" if leaves != 1 else f"\n1 {leaf_class}"
        add(node["name"], label, leaf_class if leaf else "department", parent)
        departments = [child for child in children if not is_leaf(child)]
        shown = children if len(departments) <= max_children else [
            *(child for child in children if is_leaf(child)), *sorted(departments, key=heaviest)[:max_children]]
        for child in shown:
            visit(child, node["name"])
        if len(departments) > max_children:   # last: drawn after the departments shown
            hidden = len(departments) - max_children
            add(f"{node['name']} +more", f"+{hidden} more\n{department}{'s' if hidden > 1 else ''}", "more",
                node["name"])

    visit(tree, None)
    positions = _tidy_positions(tree["name"], below)
    for element in elements:
        if "source" not in element["data"]:
            element["position"] = positions[element["data"]["id"]]
    return elements


#: Where :func:`tree_elements` places nodes: one slot this wide per node of the bottom row, rows this far apart.
SLOT_WIDTH, ROW_HEIGHT = 80.0, 70.0


def _tidy_positions(root: str, below: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Each node's position: a node without children drawn takes the next slot from the left, a node with some
    sits centred over them, one row per depth (so siblings read left to right in the order drawn)."""
    positions: dict[str, dict[str, float]] = {}
    slots = 0

    def place(node: str, depth: int) -> float:
        nonlocal slots
        kids = below[node]
        if kids:
            xs = [place(kid, depth + 1) for kid in kids]
            x = (xs[0] + xs[-1]) / 2
        else:
            x, slots = slots * SLOT_WIDTH, slots + 1
        positions[node] = {"x": x, "y": depth * ROW_HEIGHT}
        return x

    place(root, 0)
    return positions


# ---------------------------------------------------------------- the workspace

def item_action(trigger, ids: Ids, draft, payload: dict, uploads, *, noun: str,
                read: Callable[[dict, str], object], document: Callable[[object], dict] = lambda d: d,
                parse: Callable[[bytes, str], dict] = parse_item) -> dict:
    """Open, save, upload or download the page's tree; returns the outputs that change, by name.

    ``payload``: ``choice`` (a saved item), ``name`` (to save under),
    ``contents`` and ``filename`` (an upload). ``read(document, source)``
    turns a saved or uploaded JSON object into the page's draft, raising
    :class:`ScenarioError` naming ``source`` and the field; ``document(draft)``
    is what is saved and downloaded; ``parse(bytes, filename)`` reads an
    upload into such an object (JSON by default). Names returned: ``draft``, ``message``,
    ``download``. On any error the draft stays as it was and the message
    says why.
    """
    kind = ids.item
    try:
        if trigger == ids.choice:
            if not payload.get("choice"):
                return {}
            saved, label = load_item(uploads, kind, payload["choice"])
            return {"draft": read(saved, label), "message": html.Span(f"Opened {label}.", className="ok")}
        if trigger == ids.save:
            label = clean_name(payload.get("name"), f"{noun} name")
            read(document(draft), f"the {noun} on screen")
            save_item(uploads, kind, document(draft), label)
            return {"message": html.Span(f"Saved the {noun} as {label!r} in the workspace.", className="ok")}
        if trigger == ids.upload:
            if not payload.get("contents"):
                return {}
            filename = payload.get("filename") or f"{kind}.json"
            data = data_url_bytes(payload["contents"], uploads.max_bytes, filename)
            new = read(parse(data, filename), filename)
            label = filename.rsplit(".", 1)[0]
            save_item(uploads, kind, document(new), label)
            return {"draft": new, "message": html.Span(f"Loaded {filename} and saved it as {label!r}.",
                                                       className="ok")}
        if trigger == ids.export:
            return {"download": {"content": json.dumps(document(draft), indent=2), "filename": f"{kind}.json",
                                 "type": "application/json"}}
    except (ScenarioError, UploadError) as exc:
        return {"message": html.Span(f"{str(exc).rstrip('.')}. The {noun} on screen is unchanged.",
                                     className="error")}
    return {}
