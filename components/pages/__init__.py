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
    listing the data directory's unreadable files.
    """

    results: Any
    uploads: Any = None
    scenarios: Any = None
    sweeps: Any = None
    skipped: Callable[[], list] | None = None


@dataclass(frozen=True)
class Page:
    """One page: its ``route``, its ``label`` in the navigation (none: not listed), its layout and callbacks.

    ``layout()`` builds the page; ``register(app, services)`` adds its
    callbacks. A page that opens on what the URL's query asks for (the
    Sweeps page on ``?kind=``) gives ``layout_for_query(query)`` too, with
    the query parsed by :func:`urllib.parse.parse_qs`.
    """

    route: str
    label: str | None
    layout: Callable[[], Any]
    register: Callable[[Any, Services], None]
    layout_for_query: Callable[[dict[str, list[str]]], Any] | None = None
