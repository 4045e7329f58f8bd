"""The draft hierarchy and its edits: the tree editor's actions, the capacity table, the workspace's hierarchies.

The draft (resources and tree, the engine's model) lives in a browser-local
Store; every edit returns a new draft, and invalid input leaves it as it
was and says why.
"""

from __future__ import annotations

from dash import html, no_update

from sched_engine import ScenarioError
from sched_engine.fairshare import fig4_model, normalize_model, starter_model

from ...widgets import tree_editor
from . import tree_edit
from .ids import (
    ADD_DEPT,
    ADD_JOB,
    ADD_RESOURCE,
    APPLY,
    CAPACITY,
    EDITOR,
    ENGINE,
    PRESET,
    REMOVE,
    RESET,
)

FIG4_POLICIES = ["mch", "hdrf", "c-ch", "m-ch"]


def hierarchy_from_document(document: dict, source: str) -> dict:
    """The model (resources and tree) in a saved or uploaded hierarchy, validated.

    Accepts the model itself or a whole fair-sharing scenario (its
    ``model``); raises :class:`ScenarioError` naming ``source`` and the field.
    """
    if "engine" in document:
        if document.get("engine") != ENGINE:
            raise ScenarioError("engine", f"a {document.get('engine')!r} scenario has no hierarchy", source=source)
        document = document.get("model")
        if not isinstance(document, dict):
            raise ScenarioError("model", "must be a JSON object with resources and tree", source=source)
    try:
        normalize_model(document, require_jobs=False)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=source, line=exc.line) from None
    return document


def hierarchy_action(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Open, save, upload or download the hierarchy (the shared editor's :func:`~components.widgets.tree_editor.item_action`).

    Returns the outputs that change, by name: ``draft``, ``message``,
    ``download``. On any error the draft stays as it was and the message says why.
    """
    return tree_editor.item_action(trigger, EDITOR, draft, payload, uploads, noun="hierarchy",
                                   read=hierarchy_from_document)


def edit_draft(trigger, draft, selected, form, rows):
    """Apply one editor action. Returns ``(draft, selected, rows, tree_msg, capacity_msg, policies)``.

    Invalid input leaves the draft as it was and explains why; ``no_update``
    marks outputs that do not change.
    """
    try:
        if trigger == PRESET:
            model = fig4_model()
            return model, None, model["resources"], "", "", FIG4_POLICIES
        if trigger == RESET:
            model = starter_model()
            return model, None, model["resources"], "", "", no_update
        if trigger == ADD_DEPT:
            new, name = tree_edit.add_department(draft, selected)
            return new, name, no_update, f"Added department {name}.", no_update, no_update
        if trigger == ADD_JOB:
            new, name = tree_edit.add_job(draft, selected)
            return new, name, no_update, f"Added job {name}: edit it on the right.", no_update, no_update
        if trigger == REMOVE:
            return tree_edit.remove(draft, selected), None, no_update, f"Removed {selected}.", no_update, no_update
        if trigger == APPLY:
            if not selected:
                raise ScenarioError("selection", "select a node in the tree first")
            new = tree_edit.apply_form(draft, selected, form)
            return new, form.get("name", selected), no_update, "Applied.", no_update, no_update
        if trigger == CAPACITY:
            try:
                new = tree_edit.set_resources(draft, rows)
            except ScenarioError as exc:
                return no_update, no_update, no_update, no_update, _error_text(exc), no_update
            return new, no_update, no_update, no_update, "", no_update
        if trigger == ADD_RESOURCE:
            return no_update, no_update, [*rows, {"name": "", "capacity": None, "unit": ""}], no_update, \
                "Name the new resource and give it a capacity.", no_update
    except ScenarioError as exc:
        return no_update, no_update, no_update, _error_text(exc), no_update, no_update
    return no_update, no_update, no_update, no_update, no_update, no_update


def _error_text(exc: ScenarioError) -> html.Span:
    return html.Span(str(exc), className="error")
