"""The Gallery's cards computed once, in the background, so the page opens on numbers rather than empty cards.

The first time the Gallery is opened with a card missing from the results
cache, :func:`start` runs every card's scenarios through the cache in a
thread of the web process (once per process and cache; never when
:data:`BACKGROUND_ENV` is ``0``); the page looks
again every few seconds (:data:`POLL_MS`) and fills each card as its runs
land. Runs are deterministic and keyed by content, so two processes warming
the same cache only store the same results twice.
"""

from __future__ import annotations

import logging
import os
import threading

from sched_engine import normalize_scenario

from .cards import CARDS, Card, run_card

LOG = logging.getLogger(__name__)

#: How often the open page looks for cards computed in the background.
POLL_MS = 2000
#: How long it keeps looking (polls): 10 minutes.
MAX_POLLS = 300

#: Set to ``0`` to never compute the Gallery in the web process (its cards then wait for Run again).
BACKGROUND_ENV = "SCHEDSCOPE_GALLERY_BACKGROUND"

_LOCK = threading.Lock()
_STARTED: set[int] = set()   # the caches being (or already) warmed by this process


def cached(card: Card, results) -> bool:
    """Whether every run of ``card`` is in the results cache (nothing is simulated to find out)."""
    return all(results.get(normalize_scenario(scenario).content_hash()) is not None
               for scenario in card.scenarios.values())


def enabled() -> bool:
    """Whether missing cards are computed in the background (:data:`BACKGROUND_ENV` not ``0``)."""
    return os.environ.get(BACKGROUND_ENV, "1").strip() != "0"


def start(results) -> bool:
    """Compute every card missing from ``results`` in a background thread, unless this process already does."""
    with _LOCK:
        if id(results) in _STARTED:
            return False
        _STARTED.add(id(results))
    threading.Thread(target=_warm, args=(results,), name="gallery-warm", daemon=True).start()
    return True


def _warm(results) -> None:
    for card in CARDS:
        try:
            run_card(card, results)
        except Exception:   # a card that cannot run says so when its Run is pressed; the others still fill
            LOG.exception("Gallery card %s could not be computed in the background", card.key)
