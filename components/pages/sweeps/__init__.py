"""The "Sweeps" page: one experiment over many parameter values, fanned out, gathered into one table and plot.

Data flow: the form (a sweep kind and its parameters, :mod:`.form`) builds
a sweep spec (:mod:`sched_engine.sweeps`); the page shows how many points it
has before anything runs. Run checks the spec, then -- in a background
callback -- runs every point on local processes (Celery workers when
``REDIS_URL`` is set), reporting runs done / total. The gathered table is
stored under the spec's content hash (:class:`.store.SweepStore`); the
browser keeps only that hash. The comparison table, the plot and the CSV
downloads are rebuilt from the stored table (:mod:`.results`).

``/sweeps?kind=<kind>`` opens the page on that kind (the gallery links there); ``&trace=sample:<name>``
chooses that sample as the kind's workload, ``&trace=upload:<sha256>`` that upload for ``calibrate`` (the
batch page's Calibrate link) -- when it is one of the user's, which a callback checks: the layout knows
no user (:func:`.callbacks.workload_choices`). ``/sweeps?sweep=<key>`` shows that stored sweep (the Workspace
lists them); with a login on, only one the user sees (theirs or shared).
"""

from .. import Page
from . import callbacks, form, ids, layout, results, store


def layout_for_url(path: str, query: dict[str, list[str]]):
    """``/sweeps?kind=<kind>[&trace=<reference>]``: the page opened on that kind (and that workload);
    ``/sweeps?sweep=<key>``: showing that stored sweep."""
    if path != PAGE.route:
        return None
    return layout.layout((query.get("kind") or [None])[0], (query.get("trace") or [None])[0],
                         (query.get("sweep") or [None])[0])


PAGE = Page("/sweeps", "Sweeps", layout.layout, callbacks.register, layout_for_url=layout_for_url)

__all__ = ["PAGE", "callbacks", "form", "ids", "layout", "results", "store"]
