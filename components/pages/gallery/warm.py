"""The Gallery's cards computed once, in the background, so the page opens on numbers rather than empty cards.

The first time the Gallery is opened with a card missing from the results
cache, :func:`start` runs every card's scenarios through the cache in a
thread of the web process (never when :data:`BACKGROUND_ENV` is ``0``); the
page looks again every few seconds (:data:`POLL_MS`) and fills each card as
its runs land.

Once per server, not per process: several web processes (gunicorn workers)
share one data directory, and the one that takes the lock file there
(:data:`LOCK_NAME`, an exclusive ``flock`` held while it computes)
computes; the others leave it and fill their pages from the cache as its
runs land. A process that ends while computing drops the lock with it, so
the next process asked for a missing card takes over.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path

from sched_engine import normalize_scenario

from .cards import CARDS, Card, run_card

LOG = logging.getLogger(__name__)

#: How often the open page looks for cards computed in the background.
POLL_MS = 2000
#: How long it keeps looking (polls): 10 minutes.
MAX_POLLS = 300

#: Set to ``0`` to never compute the Gallery in the web process (its cards then wait for Run again).
BACKGROUND_ENV = "SCHEDSCOPE_GALLERY_BACKGROUND"

#: The file in the data directory whose lock the computing process holds.
LOCK_NAME = ".gallery-warm.lock"

_LOCK = threading.Lock()
_STARTED: set[int] = set()   # the caches being (or already) warmed by this process


def cached(card: Card, results) -> bool:
    """Whether every run of ``card`` is in the results cache (nothing is simulated to find out)."""
    return all(results.get(normalize_scenario(scenario).content_hash()) is not None
               for scenario in card.scenarios.values())


def enabled() -> bool:
    """Whether missing cards are computed in the background (:data:`BACKGROUND_ENV` not ``0``)."""
    return os.environ.get(BACKGROUND_ENV, "1").strip() != "0"


def start(results, data_dir: str | os.PathLike | None = None) -> bool:
    """Compute every card missing from ``results`` in a background thread, unless this process already does or
    (with ``data_dir``) another process of the server does; whether it started."""
    with _LOCK:
        if id(results) in _STARTED:
            return False
        held = _take(Path(data_dir) / LOCK_NAME) if data_dir is not None else -1
        if held is None:
            return False   # another process computes them; asked again later, this one takes over if it ended
        _STARTED.add(id(results))
    threading.Thread(target=_warm, args=(results, held), name="gallery-warm", daemon=True).start()
    return True


def _take(path: Path) -> int | None:
    """The descriptor of ``path`` holding its exclusive lock, or None when another process holds it."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


def _warm(results, held: int) -> None:
    try:
        for card in CARDS:
            try:
                run_card(card, results)
            except Exception:   # a card that cannot run says so when its Run is pressed; the others still fill
                LOG.exception("Gallery card %s could not be computed in the background", card.key)
    finally:
        if held >= 0:
            os.close(held)   # closing releases the lock
