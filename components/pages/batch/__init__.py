"""The "Batch & failures" page: workload, clusters, failures, a policy × scenario matrix, linked charts.

Data flow: the draft (which workload, failure trace and clusters) lives in a
browser-local Store and refers to files by reference (:mod:`.sources`). An
upload is parsed before it replaces anything. Run builds one scenario per
(scenario kind, policy, seed) and runs them through the run panel
(:mod:`components.widgets.run_panel`), which keeps small run records; every
chart is rebuilt from the cached frames. Zooming the time axis of any time
chart sets the shared window for all of them
(:mod:`components.widgets.time_window`).

Modules: ``ids``, ``sources`` (samples and uploads), ``clusters`` (the
hardware), ``draft`` (presets and edits), ``run`` (the matrix), ``charts``,
``layout``, ``callbacks``; ``trust`` (the log vs the simulation, why jobs waited) and
``sizing`` (how much hardware a target needs).
"""

from .. import Page
from . import callbacks, charts, clusters, draft, ids, layout, run, sizing, sources

PAGE = Page("/batch", "Batch & failures", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "charts", "clusters", "draft", "ids", "layout", "run", "sizing", "sources"]
