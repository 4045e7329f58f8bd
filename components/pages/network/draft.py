"""The draft (machine and application tables, the uploaded list by reference) and its edits.

An uploaded list is stored by its name ``<sha256>.apps``, never a path; a
bad upload leaves the draft as it was and says why.
"""

from __future__ import annotations

from dash import html

from sched_engine import ScenarioError
from sched_engine.network import apps_from_rows, read_app_list

from ...services.uploads import UploadError, upload_choices
from ...widgets.fields import error
from . import ids
from .setups import FIG1, FIG6, check_app_list, machines_from_rows, preset


def edit_draft(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Apply one input action; returns the outputs that change, by name.

    Names: ``draft``, ``machines`` and ``apps`` (table rows),
    ``machines_msg``, ``apps_msg``, ``settings`` (a preset's control
    values). A bad upload leaves the draft as it was and says why.
    """
    if trigger in (ids.PRESET_FIG1, ids.PRESET_FIG6):
        settings = preset(FIG1 if trigger == ids.PRESET_FIG1 else FIG6)
        # A preset that uses a generator keeps the table the person may have typed.
        new = {**draft, **{k: settings[k] for k in ("machines", "apps") if settings[k]}}
        return {"draft": new, "machines": new["machines"], "apps": new["apps"], "settings": settings,
                "machines_msg": "", "apps_msg": ""}
    if trigger == ids.ADD_MACHINE:
        rows = [*payload["machines"], {"name": f"G{len(payload['machines']) + 1}", "count": 1, "cpu": 8, "ram": 16,
                                       "uplink": 1, "downlink": 1}]
        return {"draft": {**draft, "machines": rows}, "machines": rows}
    if trigger == ids.ADD_APP:
        rows = [*payload["apps"], {"name": f"A{len(payload['apps']) + 1}", "arrival": 0, "pattern": "all-to-all",
                                   "volume": 1, "weight": 1, "count": 2, "cpu": 1, "ram": 1, "downlink": 0.5,
                                   "uplink": 0.5}]
        return {"draft": {**draft, "apps": rows}, "apps": rows}
    if trigger == ids.MACHINES:
        try:
            machines_from_rows(payload["machines"])
        except ScenarioError as exc:
            return {"draft": {**draft, "machines": payload["machines"]}, "machines_msg": error(exc)}
        return {"draft": {**draft, "machines": payload["machines"]}, "machines_msg": ""}
    if trigger == ids.APPS:
        try:
            apps_from_rows(list(enumerate(payload["apps"], start=1)), "applications row")
        except ScenarioError as exc:
            return {"draft": {**draft, "apps": payload["apps"]}, "apps_msg": error(exc)}
        return {"draft": {**draft, "apps": payload["apps"]}, "apps_msg": ""}
    if trigger in (ids.APPS_UPLOAD, ids.APPS_CHOICE):
        if trigger == ids.APPS_UPLOAD and payload.get("contents"):
            name = payload.get("filename") or "upload"
            store = lambda: uploads.save_data_url(payload["contents"], "apps", name)  # noqa: E731
        elif trigger == ids.APPS_CHOICE and payload.get("choice"):
            name = next((e["label"] for e in uploads.listing() if e["name"] == payload["choice"]), "upload")
            store = lambda: uploads.path_of(payload["choice"])  # noqa: E731
        else:
            return {}
        try:
            path = store()
            apps, origin = read_app_list(path.read_bytes(), name)
            check_app_list(apps, origin, name)
        except (ScenarioError, UploadError) as exc:
            return {"apps_msg": error(f"{name} not loaded: {str(exc).rstrip('.')}. The previous applications stay.")}
        width = sum(int(c.get("count", 1)) for app in apps for c in app["containers"])
        return {"draft": {**draft, "upload": {"name": path.name, "label": name, "count": len(apps)}},
                "apps_msg": html.Span(f"Loaded {len(apps)} applications ({width} containers) from {name}; "
                                      "choose 'uploaded list' to use them.", className="ok")}
    return {}


def app_list_choices(uploads) -> list[dict]:
    """Application lists uploaded earlier (the workspace), newest first."""
    return upload_choices(uploads, "apps")
