"""The gallery cards' first runs, simulated once per test session and shared by every test process.

The gallery's unit tests (``tests/test_app_gallery.py``) and its browser test need the same thing: each
card run on an empty results cache (about a minute of simulation in all, most of it the YARN-ME sweep).
Under pytest-xdist the first test process that needs a card runs it, holding a lock on that card; the
others wait for it and read what it wrote: the card's first reading ``(outcome, cached runs, seconds)``
and its results cache as that run left it. Nothing here replaces a simulation by a stored number: every
card is simulated once per session, by the same :func:`run_card` the page calls.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from contextlib import contextmanager
from pathlib import Path

from components.pages.gallery.cards import Card, Outcome, run_card
from components.services.runs import ResultCache
from sched_engine import normalize_scenario


@contextmanager
def _locked(path: Path):
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)   # released when the file closes
        yield


class GalleryRuns:
    """Each card's first run under ``root`` (one directory per card), shared by the test processes."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _results(self, card: Card) -> Path:
        return self.root / card.key / "results"

    def first_run(self, card: Card) -> tuple[Outcome, int, float]:
        """``run_card(card, an empty cache)``: run by the first process to ask, read by the others."""
        reading = self.root / card.key / "first-run.pickle"
        with _locked(self.root / f"{card.key}.lock"):
            if not reading.exists():
                first = run_card(card, ResultCache(self._results(card)))
                partial = reading.with_suffix(".partial")
                partial.write_bytes(pickle.dumps(first))
                os.replace(partial, reading)
        return pickle.loads(reading.read_bytes())

    def cache_after_first_run(self, card: Card, directory: Path) -> ResultCache:
        """A copy, in ``directory``, of the results cache the card's first run filled."""
        self.first_run(card)
        shutil.copytree(self._results(card), directory)
        return ResultCache(directory)

    def seed(self, cards, results: ResultCache) -> None:
        """Put the results of ``cards``' first runs into ``results`` (e.g. a served app's cache)."""
        for card in cards:
            self.first_run(card)
            source = ResultCache(self._results(card))
            for scenario in card.scenarios.values():
                results.put(source.get(normalize_scenario(scenario).content_hash()))
