"""The Gallery page's callbacks: module-level functions, the results cache passed in (see :func:`register`)."""

from __future__ import annotations

from functools import partial

from dash import ALL, MATCH, Input, Output, State, dcc, html

from . import ids
from .cards import CARDS, READING_DIFFERS, chart, run_card


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
    card = {card.key: card for card in CARDS}[button["card"]]
    outcome, cached, seconds = run_card(card, results)
    rows = outcome.rows
    return rows, status_text(rows, cached, len(card.scenarios), seconds), chart(card, outcome), reasons(rows)


def run_all(_, clicks):
    # Clicking every card's Run button runs each card in its own request.
    return [(count or 0) + 1 for count in clicks]


def register(app, services) -> None:
    """Wire the page to ``services.results`` (the ResultCache)."""
    app.callback(
        Output({"type": ids.TABLE, "card": MATCH}, "data"), Output({"type": ids.STATUS, "card": MATCH}, "children"),
        Output({"type": ids.CHART, "card": MATCH}, "figure"), Output({"type": ids.WHY, "card": MATCH}, "children"),
        Input({"type": ids.RUN, "card": MATCH}, "n_clicks"), State({"type": ids.RUN, "card": MATCH}, "id"),
        prevent_initial_call=True,
    )(partial(run, services.results))
    app.callback(
        Output({"type": ids.RUN, "card": ALL}, "n_clicks"), Input(ids.RUN_ALL, "n_clicks"),
        State({"type": ids.RUN, "card": ALL}, "n_clicks"), prevent_initial_call=True,
    )(run_all)
