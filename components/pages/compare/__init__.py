"""The "Compare" page: finished runs side by side, summaries with differences, overlaid timelines.

Runs come from the result cache's index (every run any page finished, kept
across restarts). The first chosen run is the reference: the table shows
each other run's relative difference from it and highlights differences
above :data:`.table.HIGHLIGHT_PERCENT`. The overlay
(:mod:`components.figures.compare`) draws one chosen timeline metric of
every run on one time axis (one entity, or the sum over entities). The
first two runs are also compared job by job (:mod:`.paired`), over several
seeds when they have random parts (:mod:`.seeds`).
"""

from .. import Page
from . import callbacks, ids, layout, seeds, table

PAGE = Page("/compare", "Compare", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "ids", "layout", "seeds", "table"]
