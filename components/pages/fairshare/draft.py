"""The draft hierarchy and its edits: the tree editor's actions, the capacity table, the workspace's hierarchies.

The draft (resources and tree, the engine's model) lives in a browser-local
Store; every edit returns a new draft, and invalid input leaves it as it
was and says why.
"""

from __future__ import annotations

import json

from dash import html, no_update

from sched_engine import ScenarioError
from sched_engine.fairshare import fig4_model, normalize_model, starter_model

from ...services.saved_items import HIERARCHY, clean_name, data_url_bytes, load_item, parse_item, save_item
from ...services.uploads import UploadError
from . import tree_edit
from .ids import (
    ADD_DEPT,
    ADD_JOB,
    ADD_RESOURCE,
    APPLY,
    CAPACITY,
    ENGINE,
    EXPORT_HIER,
    HIER_CHOICE,
    HIER_UPLOAD,
    PRESET,
    REMOVE,
    RESET,
    SAVE_HIER,
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
    """Open, save, upload or download the hierarchy; returns the outputs that change, by name.

    Names: ``draft``, ``message``, ``download``. On any error the draft stays
    as it was and the message says why.
    """
    try:
        if trigger == HIER_CHOICE:
            if not payload["choice"]:
                return {}
            document, label = load_item(uploads, HIERARCHY, payload["choice"])
            model = hierarchy_from_document(document, label)
            return {"draft": model, "message": html.Span(f"Opened {label}.", className="ok")}
        if trigger == SAVE_HIER:
            label = clean_name(payload["name"], "hierarchy name")
            normalize_model(draft, require_jobs=False)
            save_item(uploads, HIERARCHY, draft, label)
            return {"message": html.Span(f"Saved the hierarchy as {label!r} in the workspace.", className="ok")}
        if trigger == HIER_UPLOAD:
            if not payload["contents"]:
                return {}
            filename = payload["filename"] or "hierarchy.json"
            data = data_url_bytes(payload["contents"], uploads.max_bytes, filename)
            model = hierarchy_from_document(parse_item(data, filename), filename)
            label = filename.rsplit(".", 1)[0]
            save_item(uploads, HIERARCHY, model, label)
            return {"draft": model, "message": html.Span(f"Loaded {filename} and saved it as {label!r}.",
                                                         className="ok")}
        if trigger == EXPORT_HIER:
            return {"download": {"content": json.dumps(draft, indent=2), "filename": "hierarchy.json",
                                 "type": "application/json"}}
    except (ScenarioError, UploadError) as exc:
        return {"message": html.Span(f"{str(exc).rstrip('.')}. The hierarchy on screen is unchanged.", className="error")}
    return {}


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
