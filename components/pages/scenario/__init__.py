"""A scenario's own page (its permalink ``/scenario/<hash>`` or ``/?scenario=<hash>``).

Shows the scenario (saved by name, or any run in the result cache), its
result when cached -- run it here otherwise --, the summary and a timeline
chart, downloads (scenario JSON, CSV frames, HTML report), "save as", and
"what if": the same scenario with another policy or seed, run beside it and
compared metric by metric.

Modules: ``ids``, ``content`` (the scenario, its what-if, its facts), ``layout``, ``callbacks``.
"""

from .. import Page
from . import callbacks, content, ids, layout

PREFIX = callbacks.PREFIX


def layout_for_url(path: str, query: dict[str, list[str]]):
    """The page of the scenario a permalink names, or ``None`` for any other URL."""
    if query.get("scenario"):
        return layout.layout(query["scenario"][0])
    if path.startswith(PREFIX):
        return layout.layout(path[len(PREFIX):])
    return None


PAGE = Page(PREFIX, None, None, callbacks.register, layout_for_url=layout_for_url)

__all__ = ["PAGE", "PREFIX", "callbacks", "content", "ids", "layout"]
