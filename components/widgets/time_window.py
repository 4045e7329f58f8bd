"""The time window a page's charts share, read from the zooms, pans and resets of those charts.

A page keeps the window in a ``dcc.Store`` as ``[start, end]`` in seconds,
or ``None`` for the whole run, and feeds every time chart's
``relayoutData`` to :func:`window_from_relayout`; :func:`register` wires
that for a page's charts and its "Whole run" button.
"""

from __future__ import annotations

import re
from functools import partial

from dash import Input, Output, State, ctx, no_update

#: One end of an x axis's range after a zoom or pan: ``xaxis.range[0]``, ``xaxis2.range[1]``, ...
RANGE_END = re.compile(r"(xaxis\d*)\.range\[([01])\]")
#: An x axis's whole range set at once: ``xaxis.range: [start, end]``.
RANGE = re.compile(r"xaxis\d*\.range")
#: An x axis reset to its full extent (a double click): ``xaxis3.autorange: true``.
AUTORANGE = re.compile(r"xaxis\d*\.autorange")


def window_from_relayout(relayout: dict | None, current, *, unit_seconds: float = 1.0, decimals: int = 1):
    """The shared window after a chart's relayout: ``[start, end]`` seconds, ``None`` (everything) or ``no_update``.

    The ``relayoutData`` shapes read, on any x axis (``xaxis``, ``xaxis2``, ...):

    - ``{"xaxis2.range[0]": a, "xaxis2.range[1]": b}``, a zoom or pan: ``[a, b]``;
    - ``{"xaxis.range": [a, b]}``, a range set as a whole: ``[a, b]``;
    - ``{"xaxis3.autorange": true}``, a reset: ``None``, or ``no_update`` when
      the window already is everything.

    Anything else -- ``autosize`` when a chart is drawn or resized, a zoom
    on a y axis only, a change of drag mode, ``None`` -- changes nothing
    (``no_update``). ``a`` and ``b`` are axis units, ``unit_seconds`` seconds
    each (3600 on an hours axis); the window is rounded to ``decimals``
    places of a second, so a relayout that leaves it as ``current`` gives
    ``no_update``. No page draws time as dates, so date strings are not read.
    """
    if not relayout:
        return no_update
    if any(AUTORANGE.fullmatch(key) and value for key, value in relayout.items()):
        return None if current is not None else no_update
    ends = _range_ends(relayout)
    if ends is None:
        return no_update
    window = [round(float(end) * unit_seconds, decimals) for end in ends]
    return no_update if window == current else window


def _range_ends(relayout: dict) -> tuple | None:
    """The ``(start, end)`` of the first x axis whose range the relayout sets, in axis units; ``None`` if none."""
    for key, value in relayout.items():
        if RANGE.fullmatch(key) and isinstance(value, (list, tuple)) and len(value) == 2:
            return value[0], value[1]
        match = RANGE_END.fullmatch(key)
        if match and match.group(2) == "0" and f"{match.group(1)}.range[1]" in relayout:
            return value, relayout[f"{match.group(1)}.range[1]"]
    return None


def window_after(reset, unit_seconds: float, decimals: int, *values):
    """The callback :func:`register` wires: ``values`` are the charts' ``relayoutData``, the reset's clicks, the window."""
    if ctx.triggered_id == reset:
        return None
    relayout = ctx.triggered[0]["value"] if ctx.triggered else None
    return window_from_relayout(relayout, values[-1], unit_seconds=unit_seconds, decimals=decimals)


def register(app, store: str, graphs, reset: str, *, unit_seconds: float = 1.0, decimals: int = 1) -> None:
    """Keep the window in ``store`` in step with the zooms of the ``graphs``; the ``reset`` button shows everything.

    ``unit_seconds`` and ``decimals`` as in :func:`window_from_relayout`.
    """
    app.callback(
        Output(store, "data"), *[Input(graph, "relayoutData") for graph in graphs], Input(reset, "n_clicks"),
        State(store, "data"), prevent_initial_call=True,
    )(partial(window_after, reset, unit_seconds, decimals))
