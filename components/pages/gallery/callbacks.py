"""The Gallery page's callbacks: module-level functions, the results cache passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, MATCH, Input, Output, State

from . import ids
from .cards import CARDS, READING_DIFFERS, run_card


def status_text(rows: list[dict], cached: int, runs: int, seconds: float) -> str:
    agreeing = sum(row["agrees"] == "yes" for row in rows)
    readings = sum(row["agrees"] == READING_DIFFERS for row in rows)
    source = "all from the cache" if cached == runs else f"{runs - cached} simulated in {seconds:.2f} s"
    differing = f" ({readings} under a reading named on the row)" if readings else ""
    return f"{agreeing} of {len(rows)} agree with the paper{differing} · {runs} run(s), {source}"


def run(results, _, button):
    """Run (or fetch from the cache) one card's scenarios: its rows and its status line."""
    card = {card.key: card for card in CARDS}[button["card"]]
    rows, cached, seconds = run_card(card, results)
    return rows, status_text(rows, cached, len(card.scenarios), seconds)


def run_all(_, clicks):
    # Clicking every card's Run button runs each card in its own request.
    return [(count or 0) + 1 for count in clicks]


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache)."""
    app.callback(
        Output({"type": ids.TABLE, "card": MATCH}, "data"), Output({"type": ids.STATUS, "card": MATCH}, "children"),
        Input({"type": ids.RUN, "card": MATCH}, "n_clicks"), State({"type": ids.RUN, "card": MATCH}, "id"),
        prevent_initial_call=True,
    )(partial(run, services.results))
    app.callback(
        Output({"type": ids.RUN, "card": ALL}, "n_clicks"), Input(ids.RUN_ALL, "n_clicks"),
        State({"type": ids.RUN, "card": ALL}, "n_clicks"), prevent_initial_call=True,
    )(run_all)
