"""The app's pages, one package each (see docs/architecture.md, "A page").

A page package declares one :class:`Page`: where it lives, its name in the
navigation, its layout and the function that registers its callbacks.
``app.py`` lists the pages once (``PAGES``); that list drives the shell's
navigation and routes and the registration of every page's callbacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Services:
    """The app's stores, handed to every page's ``register``; a page uses the ones it needs.

    ``results`` the ResultCache, ``uploads`` the UploadStore, ``scenarios``
    the ScenarioStore, ``sweeps`` the SweepStore, ``skipped`` a function
    listing the data directory's unreadable files. With a login on, the
    first three are the signed-in user's views of them
    (:mod:`components.services.scoped`) and ``access`` holds who owns and
    sees what (:class:`~components.services.access.Access`); without one,
    ``access`` is None. ``prepared`` holds exports too large for a callback
    response (:class:`~components.services.prepared.PreparedFiles`). ``data``
    is the data directory every process of the server shares (where they
    agree which of them does a server-wide task once, e.g. the Gallery's
    background computation).
    """

    results: Any
    uploads: Any = None
    scenarios: Any = None
    sweeps: Any = None
    skipped: Callable[[], list] | None = None
    access: Any = None
    prepared: Any = None
    data: Any = None


@dataclass(frozen=True)
class Page:
    """One page: its ``route``, its ``label`` in the navigation (none: not listed), its layout and callbacks.

    ``layout()`` builds the page at its route; ``register(app, services)``
    adds its callbacks (none: the page has no callbacks). A page that also
    answers other URLs -- a permalink ``/scenario/<hash>``, or its route
    with a query such as ``/sweeps?kind=...`` -- gives
    ``layout_for_url(path, query)``, which builds the page for such a URL
    (the query parsed by :func:`urllib.parse.parse_qs`) or returns ``None``
    when the URL is not one of its own.
    """

    route: str
    label: str | None
    layout: Callable[[], Any] | None
    register: Callable[[Any, Services], None] | None = None
    layout_for_url: Callable[[str, dict[str, list[str]]], Any] | None = None
