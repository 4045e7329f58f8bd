"""The "Network isolation" page: machines, applications, the paper's four schemes, linked charts.

Data flow: the machine and application tables and a reference to an
uploaded application list live in a browser-local draft Store; generator
settings are plain controls. Run assembles one network model
(:func:`setups.build_model`), checks it -- an error names the table row,
generator field or file line at fault and nothing is replaced -- then runs
one scenario per chosen scheme through the run panel
(:mod:`components.widgets.run_panel`). Every chart is rebuilt from the
cached frames; zooming a time axis sets the shared window, clicking an
application selects it in every chart, clicking the isolation chart also
sets the instant of the placement view.

Modules: ``ids``, ``setups`` (tables, generators, presets, the model),
``draft`` (edits and uploads), ``run`` (the schemes), ``charts``,
``layout``, ``callbacks``.
"""

from .. import Page
from . import callbacks, charts, draft, ids, layout, run, setups

PAGE = Page("/network", "Network isolation", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "charts", "draft", "ids", "layout", "run", "setups"]
