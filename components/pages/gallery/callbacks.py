"""The Gallery page's callbacks: module-level functions, the results cache passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, MATCH, Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from . import ids, warm
from .cards import CARDS, READING_DIFFERS, chart, run_card

BY_KEY = {card.key: card for card in CARDS}
COMPUTING = ("Computing in the background: the Gallery's runs are computed once and kept, and this card fills in "
             "by itself when its runs are done (or press Run again to compute it now).")
NOT_COMPUTED = "Not computed yet on this server: Run again computes it (and keeps it for the next visit)."


def status_text(rows: list[dict], cached: int, runs: int, seconds: float) -> str:
    agreeing = sum(row["agrees"] == "yes" for row in rows)
    readings = sum(row["agrees"] == READING_DIFFERS for row in rows)
    source = "all from the cache" if cached == runs else f"{runs - cached} simulated in {seconds:.2f} s"
    differing = f" ({readings} under a reading named on the card)" if readings else ""
    return f"{agreeing} of {len(rows)} agree with the paper{differing} · {runs} run(s), {source}"


def reasons(rows: list[dict]) -> list:
    """One paragraph per row that does not agree: its verdict, the quantity, why, the reading and the sweep.

    Rows sharing one explanation (the three baselines of Libra Fig. 6) get it once, naming them all.
    """
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        if row["agrees"] != "yes":
            grouped.setdefault(row["why"], []).append(row)
    paragraphs = []
    for why, group in grouped.items():
        first = group[0]
        verdict = "Reading differs" if first["agrees"] == READING_DIFFERS else "NO"
        quantities = "; ".join(row["quantity"] for row in group)
        extra = []
        if first.get("reading"):
            extra += [" Reading: docs/readings.md, “", html.I(first["reading"]), "”."]
        if first.get("sweep"):
            extra += [" ", dcc.Link(first["sweep"][0], href=first["sweep"][1], className="card-link")]
        paragraphs.append(html.P([html.B(f"{verdict}: "), html.Span(quantities, className="why-quantity"),
                                  f". {why}", *extra], className="why"))
    return paragraphs


def run(results, _, button):
    """Run (or fetch from the cache) one card's scenarios: its rows, status, chart and the why of each NO."""
    card = BY_KEY[button["card"]]
    outcome, cached, seconds = run_card(card, results)
    rows = outcome.rows
    return rows, status_text(rows, cached, len(card.scenarios), seconds), chart(card, outcome), reasons(rows)


def card_shown(results, clicks, _polls, button, rows, data_dir=None):
    """A card as the page opens (and while the background computes): from the cache, else the background's note.

    Run again computes the card now (:func:`run`); a card already shown is left as it is between polls.
    """
    if clicks and ctx.triggered_id == button:
        return run(results, clicks, button)
    if rows:
        raise PreventUpdate
    card = BY_KEY[button["card"]]
    if warm.cached(card, results):
        return run(results, clicks, button)
    if not warm.enabled():
        return no_update, html.Span(NOT_COMPUTED, className="hint"), no_update, no_update
    warm.start(results, data_dir)
    return no_update, html.Span(COMPUTING, className="hint"), no_update, no_update


def polling(tables) -> bool:
    """Whether the page stops looking for cards computed in the background: once every card is shown."""
    return all(tables)


def run_all(_, clicks):
    # Clicking every card's Run button runs each card in its own request.
    return [(count or 0) + 1 for count in clicks]


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache) and ``services.data`` (where the server's processes
    agree which of them computes the missing cards, :mod:`.warm`)."""
    app.callback(
        Output({"type": ids.TABLE, "card": MATCH}, "data"), Output({"type": ids.STATUS, "card": MATCH}, "children"),
        Output({"type": ids.CHART, "card": MATCH}, "figure"), Output({"type": ids.WHY, "card": MATCH}, "children"),
        Input({"type": ids.RUN, "card": MATCH}, "n_clicks"), Input(ids.POLL, "n_intervals"),
        State({"type": ids.RUN, "card": MATCH}, "id"), State({"type": ids.TABLE, "card": MATCH}, "data"),
    )(partial(card_shown, services.results, data_dir=services.data))
    app.callback(Output(ids.POLL, "disabled"), Input({"type": ids.TABLE, "card": ALL}, "data"))(polling)
    app.callback(
        Output({"type": ids.RUN, "card": ALL}, "n_clicks"), Input(ids.RUN_ALL, "n_clicks"),
        State({"type": ids.RUN, "card": ALL}, "n_clicks"), prevent_initial_call=True,
    )(run_all)
