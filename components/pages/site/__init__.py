"""The "Site study" page: one site's trace through its organisation's fair share, backfilling, failures and memory.

Data flow: the trace (a sample, or an upload stored by content) and the
form's settings are plain controls; the organisation derived from the trace
is shown per group with its entitlement. Run builds one site model
(:func:`run.site_model`) and runs it under every chosen queue order through
the run panel. The stakeholder summary and every chart are rebuilt from the
cached frames; zooming a time axis sets the shared window, clicking a
group's line highlights that group in every chart.

Modules: ``ids``, ``run`` (the model and the plan), ``charts``, ``layout``, ``callbacks``.
"""

from .. import Page
from . import callbacks, charts, ids, layout, run

PAGE = Page("/site", "Site study", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "charts", "ids", "layout", "run"]
