"""The "Fair sharing" page: hierarchy editor, capacity, policies, linked charts.

Data flow: the draft model lives in a browser-local Store (a reload loses
nothing); Run validates it and runs one scenario per chosen policy through
the run panel (:mod:`components.widgets.run_panel`); the runs Store holds
only small records (policy, hash, cached, wall time) and every chart is
rebuilt from cached frames.

Modules: ``ids`` (component ids), ``tree_edit`` and ``draft`` (the draft and
its edits), ``tree`` (the tree as drawn), ``run`` (what Run runs),
``charts`` (what the charts show), ``layout``, ``callbacks``.
"""

from .. import Page
from . import callbacks, charts, draft, ids, layout, run, tree, tree_edit

PAGE = Page("/fairshare", "Fair sharing", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "charts", "draft", "ids", "layout", "run", "tree", "tree_edit"]
