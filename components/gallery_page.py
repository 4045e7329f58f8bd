"""The "Gallery" page: each paper's headline result, runnable in one click, the paper's number beside ours.

Runs go through the result cache, so a second visit (or a demo rehearsed
beforehand) answers at once; each card says whether its numbers were
simulated or came from the cache.
"""

from __future__ import annotations

from dash import ALL, MATCH, Input, Output, State, dash_table, dcc, html

from .gallery import CARDS, READING_DIFFERS, run_card

RUN = "gallery-run-button"          # pattern-matching type, keyed by card
RUN_ALL = "gallery-run-all-button"
TABLE = "gallery-table"             # pattern-matching type, keyed by card
STATUS = "gallery-status"           # pattern-matching type, keyed by card

AGREEMENT_STYLE = [
    {"if": {"filter_query": '{agrees} = "yes"', "column_id": "agrees"}, "color": "#1a7f37", "fontWeight": 600},
    {"if": {"filter_query": '{agrees} = "NO"', "column_id": "agrees"}, "color": "#b42318", "fontWeight": 700},
    {"if": {"filter_query": f'{{agrees}} = "{READING_DIFFERS}"', "column_id": "agrees"}, "color": "#9a6700",
     "fontWeight": 600},
]


def status_text(rows: list[dict], cached: int, runs: int, seconds: float) -> str:
    agreeing = sum(row["agrees"] == "yes" for row in rows)
    readings = sum(row["agrees"] == READING_DIFFERS for row in rows)
    source = "all from the cache" if cached == runs else f"{runs - cached} simulated in {seconds:.2f} s"
    differing = f" ({readings} under a reading named on the row)" if readings else ""
    return f"{agreeing} of {len(rows)} agree with the paper{differing} · {runs} run(s), {source}"


def _card(card) -> html.Section:
    return html.Section(
        [
            html.Div([html.H3(card.title), html.Button("Run", id={"type": RUN, "card": card.key},
                                                       className="primary")], className="button-row"),
            html.P(card.source, className="hint"),
            *([html.P(dcc.Link(card.link[0], href=card.link[1], className="card-link"))] if card.link else []),
            dcc.Loading(html.Div([
                html.Div(id={"type": STATUS, "card": card.key}, className="message"),
                dash_table.DataTable(
                    id={"type": TABLE, "card": card.key}, data=[],
                    columns=[{"name": c, "id": c} for c in ("quantity", "paper", "ours", "agrees")],
                    # Long quantities (a named reading) wrap instead of pushing the numbers off the card.
                    style_cell={"fontFamily": "inherit", "textAlign": "left", "whiteSpace": "normal",
                                "height": "auto"},
                    style_cell_conditional=[{"if": {"column_id": "quantity"}, "width": "55%"}],
                    style_data_conditional=AGREEMENT_STYLE,
                ),
            ])),
        ],
        className="panel",
    )


def layout() -> html.Div:
    return html.Div(
        [
            html.Div([html.H2("Gallery"),
                      html.P("The papers' headline results, computed by our engines. Quantities on the paper side "
                             "are quoted from the papers; ours are computed now (or read from the cache)."),
                      html.Button("Run all", id=RUN_ALL, className="preset")], className="page-head"),
            *[_card(card) for card in CARDS],
        ],
        className="gallery-page",
    )


def register_callbacks(app, results) -> None:
    """Wire the page; ``results`` is the app's ResultCache."""
    cards = {card.key: card for card in CARDS}

    @app.callback(
        Output({"type": TABLE, "card": MATCH}, "data"), Output({"type": STATUS, "card": MATCH}, "children"),
        Input({"type": RUN, "card": MATCH}, "n_clicks"), State({"type": RUN, "card": MATCH}, "id"),
        prevent_initial_call=True,
    )
    def _run(_, button):
        card = cards[button["card"]]
        rows, cached, seconds = run_card(card, results)
        return rows, status_text(rows, cached, len(card.scenarios), seconds)

    @app.callback(
        Output({"type": RUN, "card": ALL}, "n_clicks"), Input(RUN_ALL, "n_clicks"),
        State({"type": RUN, "card": ALL}, "n_clicks"), prevent_initial_call=True,
    )
    def _run_all(_, clicks):
        # Clicking every card's Run button runs each card in its own request.
        return [(count or 0) + 1 for count in clicks]
