"""The site's organisation on the page: derived from the trace, edited in the shared tree editor, saved, uploaded.

The draft is the site engine's organisation tree (root -> groups -> users,
:mod:`sched_engine.site.organisation`), kept in a Store as
``{"tree": ..., "origin": "<where it comes from>"}``. Every edit returns a
new draft checked by the engine's own :func:`normalize_organisation` plus
one rule of the editor (node names are unique: the editor selects by name);
an invalid edit or upload leaves the draft as it was and names the field.
"""

from __future__ import annotations

import copy
from functools import partial
from pathlib import Path

import pandas as pd
from dash import html, no_update

from sched_engine import ScenarioError
from sched_engine.site.organisation import GROUPING_COLUMNS, normalize_organisation, organisation_from_jobs

from ...figures.site_compare import grouping
from ...services.saved_items import parse_item
from ...widgets import tree_editor
from ..batch.clusters import first_jobs
from ..batch.sources import parse_trace, trace_choice_ref
from .ids import EDITOR, MAX_JOBS, TRACE, WEIGHTING

WEIGHTINGS = {"equal": "equal weights", "cpu_hours": "weights by CPU-hours in the log"}


def is_user(node: dict) -> bool:
    return "user" in node


def simulated_jobs(uploads, trace: str | None, max_jobs) -> tuple[pd.DataFrame, str]:
    """The jobs a run simulates (the first ``max_jobs`` by submission, as the engine picks them) and the trace's label."""
    if not trace:
        raise ScenarioError("trace", "choose a sample trace or upload one")
    ref = trace_choice_ref(trace, uploads)
    return first_jobs(parse_trace(ref, uploads), max_jobs), ref["label"]


def derived(uploads, trace: str | None, max_jobs, weighting: str) -> dict:
    """The organisation of the jobs a run simulates: users grouped by :func:`~components.figures.site_compare.grouping`.

    A user is one leaf of the tree (the engine charges a job to its user's
    leaf), so a user whose jobs sit in several groups -- usual for queues --
    is placed in the group holding most of its jobs (ties: the first by
    name), and the origin says how many users that concerned.
    """
    jobs, label = simulated_jobs(uploads, trace, max_jobs)
    column = grouping(jobs)
    frame = jobs.drop(columns=[c for c in GROUPING_COLUMNS if c != column and c in jobs.columns])
    moved = ""
    if column:
        users = frame["user"].astype("string").fillna("unknown")
        groups = frame[column].astype("string").fillna("unknown")
        counts = pd.DataFrame({"user": users, "group": groups}).value_counts().reset_index(name="jobs")
        main = counts.sort_values(["user", "jobs", "group"], ascending=[True, False, True]).drop_duplicates("user")
        spread = int((counts.groupby("user").size() > 1).sum())
        frame = frame.assign(**{column: users.map(main.set_index("user")["group"])})
        moved = f"; {spread} users with jobs in several placed in their main one" if spread else ""
    first = f", first {len(jobs):,} jobs" if max_jobs else f", {len(jobs):,} jobs"
    return {"tree": organisation_from_jobs(frame, weighting or "equal"),
            "origin": f"derived from {label}{first}, users grouped by {column or 'nothing (one group)'} ids{moved}, "
                      f"{WEIGHTINGS.get(weighting, weighting)}"}


def _placeholders(node):
    """A copy where each empty department stands as a leaf of its own (same path), so the engine's check passes it."""
    if not isinstance(node, dict) or not isinstance(node.get("children"), list):
        return node
    if not node["children"] and "user" not in node:
        return {key: value for key, value in node.items() if key != "children"} | {"user": f"\0empty {id(node)}"}
    return {**node, "children": [_placeholders(child) for child in node["children"]]}


def check(tree, source: str | None = None, field: str = "organisation") -> dict:
    """Check a draft tree; :class:`ScenarioError` names ``source`` and the field (e.g. ``organisation.children[2].weight``).

    The engine's rules (:func:`normalize_organisation`), except that a group
    may be empty while editing (a new group before users move in; a run
    leaves empty groups out, :func:`without_empty`), and node names are
    unique (the editor selects nodes by name). Returns ``tree``.
    """
    try:
        normalize_organisation(_placeholders(tree), field)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=source) from None
    seen: set[str] = set()

    def walk(node, path):
        name = node["name"].strip()
        if name in seen:
            raise ScenarioError(f"{path}.name", f"{name!r} names two nodes; names must be unique", source=source)
        seen.add(name)
        for index, child in enumerate(node.get("children", ())):
            walk(child, f"{path}.children[{index}]")

    walk(tree, field)
    return tree


def without_empty(tree: dict) -> dict:
    """A copy of ``tree`` without its empty groups (a group left empty by the last edit holds no job)."""
    def prune(node):
        if "user" in node:
            return node
        children = [kept for kept in (prune(child) for child in node["children"]) if kept is not None]
        return {**node, "children": children} if children else None

    return prune(tree) or {**tree, "children": []}


def uploaded_document(data: bytes, filename: str, salt: bytes | None = None) -> dict:
    """An uploaded organisation: a JSON object, or a Slurm account tree (``sacctmgr``/``sshare``) read as one,
    its users and accounts anonymised with ``salt`` when given (as an anonymised log's, so they match)."""
    from sched_engine.logs import accounts

    head = data[: 1 << 16].decode("utf-8", errors="replace")
    if not head.lstrip().startswith("{") and accounts.sniff_accounts(filename, head):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ScenarioError("", "not UTF-8 text", source=filename) from None
        tree = accounts.read_accounts(text, source=filename)
        return {"tree": accounts.anonymised_tree(tree, salt) if salt else tree}
    return parse_item(data, filename)


def read_document(document: dict, source: str) -> dict:
    """The draft in a saved or uploaded JSON object: a tree, ``{"tree": ...}``, or a site scenario's organisation."""
    if document.get("engine") not in (None, "site"):
        raise ScenarioError("engine", f"a {document.get('engine')!r} scenario has no site organisation",
                            source=source)
    if "engine" in document:
        document = (document.get("model") or {}).get("organisation") or {}
        if "tree" not in document:
            raise ScenarioError("model.organisation.tree", "the scenario derives its organisation; no tree to open",
                                source=source)
    field = "tree" if "tree" in document else "organisation"
    tree = document.get("tree", document)
    return {"tree": check(tree, source, field), "origin": source}


def reweigh(tree: dict, jobs: pd.DataFrame, weighting: str) -> dict:
    """A copy of ``tree`` with equal weights, or weights proportional to CPU-hours (``procs × run_time / 3600``).

    A user's weight is the CPU-hours its jobs asked for in ``jobs``; a
    department's is the sum over the users below it; a node without any
    keeps a small positive weight (0.001) so it is never starved outright,
    as in the engine's derivation.
    """
    hours = (jobs["procs"].astype(float) * jobs["run_time"].astype(float) / 3600.0).groupby(
        jobs["user"].astype("string").fillna("unknown")).sum()
    new = copy.deepcopy(tree)

    def visit(node) -> float:
        if is_user(node):
            used = float(hours.get(node["user"], 0.0))
        else:
            used = sum(visit(child) for child in node["children"])
        if node is not new:
            node["weight"] = 1.0 if weighting == "equal" else max(round(used, 3), 0.001)
        return used

    visit(new)
    return new


def made_with(draft: dict) -> str | None:
    """The weighting chosen on the page when ``draft`` was made (None: a draft kept from before it was recorded)."""
    return draft.get("weighting")


def reweighed(draft: dict, uploads, trace, max_jobs, weighting) -> dict:
    """``draft`` with ``weighting`` set on every node (:func:`reweigh` over the jobs a run simulates), as a draft."""
    jobs, _ = simulated_jobs(uploads, trace, max_jobs)
    weighting = weighting or "equal"
    return {**draft, "tree": reweigh(draft["tree"], jobs, weighting),
            "origin": f"{draft['origin']}; then {WEIGHTINGS[weighting]}", "weighting": weighting}


def as_shown(draft: dict | None, uploads, trace, max_jobs, weighting) -> dict | None:
    """The organisation a Run pressed now runs: ``draft``, with the weighting on screen when it differs.

    Choosing a weighting re-weighs the tree in a callback; a Run pressed
    before that answer arrives gets the draft of the previous weighting.
    Re-weighing is a function of the draft's tree, the jobs and the
    weighting, so Run applies it itself and runs the tree the page is about
    to show, never the one it is replacing.
    """
    if not draft or "tree" not in draft or made_with(draft) in (None, weighting or "equal"):
        return draft
    return reweighed(draft, uploads, trace, max_jobs, weighting)


def groups_of(tree: dict) -> list[str]:
    """Every department's name below the root, in tree order (where a user may be moved)."""
    names: list[str] = []

    def visit(node):
        for child in node.get("children", ()):
            if not is_user(child):
                names.append(child["name"])
                visit(child)

    visit(tree)
    return names


#: The most nodes the drawn tree puts side by side in a row and still reads at 1024 px: the heaviest groups
#: below a node and one "+k more groups", or every user when the whole tree has no more (else they are counted).
TREE_ROW = 10


def drawn(tree: dict) -> list[dict]:
    """The tree as drawn (the editor's :func:`~components.widgets.tree_editor.tree_elements`), a row at most
    :data:`TREE_ROW` nodes wide: the table below it lists every node."""
    return tree_editor.tree_elements(tree, is_user, "user", max_leaves=TREE_ROW, max_children=TREE_ROW - 1,
                                     department="group")


def node_rows(tree: dict) -> list[dict]:
    """One table row per node below the root: its kind, department, weight and share of that department."""
    rows: list[dict] = []

    def visit(node, depth):
        children = node.get("children", ())
        total = sum(child["weight"] for child in children)
        for child in children:
            user = is_user(child)
            rows.append({"id": child["name"], "node": child["name"], "kind": "user" if user else "group",
                         "in": node["name"], "users": 1 if user else len(tree_editor.leaf_names(child, is_user)),
                         "weight": round(child["weight"], 3), "share": f"{child['weight'] / total:.1%}"})
            if not user:
                visit(child, depth + 1)

    visit(tree, 0)
    return rows


def form_values(tree: dict, selected: str | None) -> dict:
    """The form for the selected node: title, name, weight, its department and where it may move (users only)."""
    node = tree_editor.find(tree, selected) if selected else None
    if node is None or node is tree:
        return {}
    parent = tree_editor.parent_of(tree, selected)
    kind = f"User {node['user']}" if is_user(node) else "Group"
    return {"title": f"{kind}: {node['name']}", "name": node["name"], "weight": node["weight"],
            "group": parent["name"] if parent is not tree else None, "groups": groups_of(tree) if is_user(node) else []}


def _weight(text) -> float:
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        raise ScenarioError("weight", f"must be a positive number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise ScenarioError("weight", f"must be a positive number, got {text!r}")
    return value


def apply_form(tree: dict, selected: str | None, name, weight, group) -> tuple[dict, str]:
    """The tree with the selected node renamed, re-weighted and (a user) moved to ``group``; ``(tree, new name)``."""
    if not selected or tree_editor.find(tree, selected) is None or selected == tree["name"]:
        raise ScenarioError("selection", "select a group or user first (in the tree or the table)")
    new = copy.deepcopy(tree)
    node, parent = tree_editor.find(new, selected), tree_editor.parent_of(new, selected)
    if is_user(node) and group and group != parent["name"]:
        target = tree_editor.find(new, group)
        if target is None or is_user(target):
            raise ScenarioError("group", f"no group named {group!r}")
        parent["children"] = [child for child in parent["children"] if child is not node]
        target["children"].append(node)
    node["name"] = str(name or "").strip()
    if not node["name"]:
        raise ScenarioError("name", "must be a non-empty name")
    node["weight"] = _weight(weight)
    return check(new), node["name"]


def edit(trigger, draft: dict | None, selected: str | None, payload: dict, uploads) -> dict:
    """One action on the organisation; returns the outputs that change, by name.

    Names: ``draft``, ``selected``, ``tree_msg``, ``item_msg``, ``download``.
    ``payload``: ``trace``, ``max_jobs``, ``weighting``, the form's ``name``,
    ``weight``, ``group``, and the workspace's ``choice``, ``item_name``,
    ``contents``, ``filename``; ``anonymise``: an uploaded ``sacctmgr``/``sshare``
    file is anonymised with the data directory's salt. The trace (or its first jobs) changing
    derives the organisation again; the weighting re-weighs the tree on
    screen. Any error leaves the draft as it was and says why.
    """
    try:
        site, tree = [payload["trace"], payload["max_jobs"]], (draft or {}).get("tree")
        def fresh() -> dict:
            return {"draft": derived(uploads, *site, payload["weighting"]), "selected": None, "tree_msg": ""}

        if trigger in (None, TRACE, MAX_JOBS):
            # The page opened again on the site its kept organisation belongs to: edits and all.
            return {} if draft and draft.get("for") == site else fresh()
        if trigger == WEIGHTING:
            if tree is None or draft.get("for", site) != site:   # none yet, or one of another site on its way out
                return fresh()
            if made_with(draft) == (payload["weighting"] or "equal"):
                return {}   # the weighting put back on a visit: the tree already has it (and its edits)
            weighted = reweighed(draft, uploads, *site, payload["weighting"])
            return {"draft": weighted, "tree_msg": f"Set {WEIGHTINGS[made_with(weighted)]} on every node."}
        if tree is None and trigger in (EDITOR.add_department, EDITOR.remove, EDITOR.apply):
            raise ScenarioError("organisation", "no organisation yet: choose a trace first")
        if trigger == EDITOR.add_department:
            new, _, name = tree_editor.add_department(tree, selected, is_user, stem="new group ", noun="user")
            return {"draft": {"tree": new, "origin": "edited"}, "selected": name,
                    "tree_msg": f"Added {name}: move users into it (select a user, choose its group)."}
        if trigger == EDITOR.remove:
            new = tree_editor.without(tree, selected)
            check(new)
            return {"draft": {"tree": new, "origin": "edited"}, "selected": None,
                    "tree_msg": f"Removed {selected}; jobs of users no longer in the tree count as 'other users'."}
        if trigger == EDITOR.apply:
            new, name = apply_form(tree, selected, payload["name"], payload["weight"], payload["group"])
            return {"draft": {"tree": new, "origin": "edited"}, "selected": name, "tree_msg": f"Applied to {name}."}
    except ScenarioError as exc:
        return {"tree_msg": html.Span(f"{str(exc).rstrip('.')}. The organisation on screen is unchanged.",
                                      className="error")}
    out = tree_editor.item_action(trigger, EDITOR, draft, {**payload, "name": payload.get("item_name")}, uploads,
                                  noun="organisation", read=read_document, document=lambda d: d["tree"],
                                  parse=partial(uploaded_document, salt=_salt(uploads) if payload.get("anonymise") else None))
    return {"draft": out["draft"], "selected": None, **_item(out)} if "draft" in out else _item(out)


def _salt(uploads) -> bytes:
    """The data directory's salt, which anonymised uploads and ``convert --anonymise`` use."""
    from sched_engine.logs.convert_command import site_salt

    return site_salt(Path(uploads.directory).parent)


def _item(out: dict) -> dict:
    return {"item_msg": out.get("message", no_update), "download": out.get("download", no_update)}


def model_organisation(draft: dict | None) -> dict:
    """The scenario's ``organisation`` for the draft (checked), or the engine's equal derivation without one."""
    if not draft or "tree" not in draft:
        return {"derive": "equal"}
    check(draft["tree"])
    return {"tree": normalize_organisation(without_empty(draft["tree"]), "organisation.tree")}
