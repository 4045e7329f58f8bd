"""The Workspace page's sharing panel (with a login on): the user's own items, who else sees each, and a form
to share one with named users or with everyone signed in.

Only an item's owners may share it (:meth:`~components.services.access.Access.share`);
sharing sets the list (an empty one stops sharing). Without a login the panel is hidden.
"""

from __future__ import annotations

from dash import dcc, html

from sched_engine import ScenarioError

from ...services.access import EVERYONE, KINDS, RUN, SCENARIO, SWEEP, UPLOAD, NotAllowed
from ...services.login import current_user
from ...widgets.fields import error, field, ok
from . import ids

EVERYONE_CHOICE = "everyone"
KIND_LABELS = {RUN: "Run", SCENARIO: "Scenario", UPLOAD: "File", SWEEP: "Sweep"}
HIDDEN, SHOWN = {"display": "none"}, {}


def panel() -> html.Section:
    return html.Section(
        [html.H3("Sharing"),
         html.P("Your runs, saved scenarios, files and sweeps are seen by you and by those you share them with; "
                "a permalink opened by anyone else answers \"not found\". Items marked \"made before sign-in\" "
                "were made before the login was turned on: every signed-in user sees them, and nobody owns them.",
                className="hint"),
         field("Item", dcc.Dropdown(id=ids.SHARE_ITEM, options=[], placeholder="one of your items")),
         field("Share with", dcc.Input(id=ids.SHARE_WITH, type="text", placeholder="names, separated by commas",
                                       debounce=False), hint="empty: nobody else"),
         dcc.Checklist(id=ids.SHARE_EVERYONE, options=[{"label": " everyone signed in", "value": EVERYONE_CHOICE}],
                       value=[]),
         html.Button("Share", id=ids.SHARE),
         html.Div(id=ids.SHARE_MSG, className="message"),
         html.Ul(id=ids.SHARED)],
        id=ids.SHARE_PANEL, className="panel", style=HIDDEN)


def keyed(scenarios, runs, uploads, sweeps) -> list[tuple[str, str, str]]:
    """``(kind, key, name)`` of the listed items, in the page's order."""
    listed = [(SCENARIO, e["hash"], e["name"]) for e in scenarios]
    listed += [(RUN, e["hash"], e.get("name") or e["hash"][:12]) for e in runs]
    listed += [(UPLOAD, e["name"].partition(".")[0], e["label"]) for e in uploads]
    listed += [(SWEEP, e["hash"], e["label"]) for e in sweeps]
    return listed


def records(services, listed: list[tuple[str, str, str]]) -> dict[str, dict]:
    """The sharing records of the ``listed`` items (:func:`keyed`), by kind: one read per kind."""
    return {kind: services.access.grants(kind, [key for k, key, _ in listed if k == kind]) for kind in KINDS}


def made_before_sign_in(listed, found: dict[str, dict]) -> dict[str, set[str]]:
    """The keys of the listed items with no record (made before sign-in), by kind."""
    return {kind: {key for k, key, _ in listed if k == kind and key not in found[kind]} for kind in KINDS}


def owned_items(user: str | None, listed, found: dict[str, dict]) -> list[dict]:
    """``{"value": "<kind>:<key>", "label", "shared"}`` of every listed item ``user`` owns, in the page's order."""
    items = []
    for kind, key, name in listed:
        grant = found[kind].get(key)
        if grant is not None and user in grant.owners:
            items.append({"value": f"{kind}:{key}", "label": f"{KIND_LABELS[kind]} · {name}",
                          "shared": list(grant.shared)})
    return items


def state(services, scenarios, runs, uploads, sweeps):
    """``(keys made before sign-in by kind, share options, shared-with lines, panel style)`` for the current
    user and the items they see (the page's listings); nothing marked and the panel hidden without a login."""
    if services.access is None:
        return {kind: set() for kind in KINDS}, [], [], HIDDEN
    listed = keyed(scenarios, runs, uploads, sweeps)
    found = records(services, listed)
    items = owned_items(current_user(), listed, found)
    lines = [html.Li(f"{item['label']}: shared with {describe(item['shared'])}") for item in items if item["shared"]]
    options = [{"label": item["label"], "value": item["value"]} for item in items]
    return (made_before_sign_in(listed, found), options, lines or [html.Li("Nothing of yours is shared.")], SHOWN)


def describe(shared: list[str]) -> str:
    return "everyone signed in" if EVERYONE in shared else ", ".join(shared)


def chosen(services, item: str | None):
    """The share form's values for a chosen item: ``(names text, everyone choice)``."""
    if not item or services.access is None:
        return "", []
    kind, _, key = item.partition(":")
    try:
        shared = services.access.grant(kind, key).shared
    except ValueError:
        return "", []
    return ", ".join(n for n in shared if n != EVERYONE), [EVERYONE_CHOICE] if EVERYONE in shared else []


def share(services, _clicks, item: str | None, names: str | None, everyone: list | None):
    """Share ``item`` (``<kind>:<key>``) as the form says (Share pressed); the sentence for the page."""
    if services.access is None:
        return error("Sharing needs a login (SCHEDSCOPE_USERS or SCHEDSCOPE_USER_HEADER).")
    if not item:
        return error("Not shared: choose one of your items first.")
    kind, _, key = item.partition(":")
    with_names = [n.strip() for n in (names or "").split(",") if n.strip()]
    if everyone and EVERYONE_CHOICE in everyone:
        with_names.append(EVERYONE)
    try:
        grant = services.access.share(kind, key, current_user(), with_names)
    except (NotAllowed, ValueError, ScenarioError) as exc:
        return error(f"Not shared: {exc}.")
    return ok(f"Shared with {describe(list(grant.shared))}." if grant.shared else "Shared with nobody else now.")
