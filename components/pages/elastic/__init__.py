"""The "Memory elasticity" page: YARN, YARN-ME and Meganode on a generated or uploaded trace.

Data flow: the form (cluster, Table 2 generator parameters, penalty model,
schedulers) builds one elasticity model (:mod:`.form`); a loaded trace (an
upload, stored content-addressed as ``<sha256>.trace``, or a preset's listed
jobs) lives in a browser-local Store and is referred to by stored name
(:mod:`.trace`). Run checks every scheduler's scenario first, then runs
them through the run panel (:mod:`components.widgets.run_panel`); an error
keeps the previous records and so the previous charts. Zooming the time
axis of any time chart sets the shared window.

Modules: ``ids``, ``form``, ``trace``, ``run``, ``charts``, ``layout``, ``callbacks``.
"""

from .. import Page
from . import callbacks, charts, form, ids, layout, run, trace

PAGE = Page("/memory", "Memory elasticity", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "charts", "form", "ids", "layout", "run", "trace"]
