"""The "Site study" page: one site's trace through its organisation's fair share, backfilling, failures and memory.

Data flow: the trace (a sample, or an upload stored by content) and the
form's settings are plain controls. The organisation derived from the trace
(groups over users) is a draft in a Store, edited in the tree editor the
Fair sharing page uses, saved in the workspace, downloaded and uploaded as
JSON (``organisation``); the hardware (clusters, CPUs and memory per
machine) is a table, from the trace header until edited (``hardware``).
Run builds one site model (:func:`run.site_model`) and runs it under every
chosen queue order through the run panel, and on a second site's trace
when one is chosen. The stakeholder summary and every chart are rebuilt
from the cached frames; zooming a time axis sets the shared window,
clicking a group's line highlights that group in every chart and the tree.
The two sites' workloads and results are compared side by side, binned on
the server (:mod:`components.figures.site_compare`).

Modules: ``ids``, ``organisation``, ``hardware``, ``run`` (the model and the
plan), ``charts``, ``layout``, ``callbacks``, ``steps`` (the baseline steps).
"""

from .. import Page
from . import callbacks, charts, hardware, ids, layout, organisation, run, steps


def register(app, services) -> None:
    callbacks.register(app, services)
    steps.register(app, services)


PAGE = Page("/site", "Site study", layout.layout, register)

__all__ = ["PAGE", "callbacks", "charts", "hardware", "ids", "layout", "organisation", "run", "steps"]
