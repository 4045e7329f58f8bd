"""The Gallery page's layout: one card per paper result: its Run button, a small chart beside its table, why each NO."""

from __future__ import annotations

from dash import dash_table, dcc, html

from ...chart_config import GRAPH_CONFIG
from ...figures.gallery import paper_vs_ours
from . import ids, warm
from .cards import CARDS, READING_DIFFERS

COLUMNS = [{"name": name, "id": key} for key, name in
           (("quantity", "Quantity"), ("paper", "Paper"), ("ours", "Ours"), ("agrees", "Agrees"))]

AGREEMENT_STYLE = [
    {"if": {"filter_query": '{agrees} = "yes"', "column_id": "agrees"}, "color": "#1a7f37", "fontWeight": 600},
    {"if": {"filter_query": '{agrees} = "NO"', "column_id": "agrees"}, "color": "#b42318", "fontWeight": 700},
    {"if": {"filter_query": f'{{agrees}} = "{READING_DIFFERS}"', "column_id": "agrees"}, "color": "#9a6700",
     "fontWeight": 600},
]


def card_section(card) -> html.Section:
    return html.Section(
        [
            html.Div([html.H3(card.title), html.Button("Run again", id={"type": ids.RUN, "card": card.key},
                                                       title="Compute this card's runs again (or read them from the "
                                                             "cache)")], className="button-row"),
            html.P(card.source, className="hint"),
            *([html.P(dcc.Link(card.link[0], href=card.link[1], className="card-link"))] if card.link else []),
            dcc.Loading(html.Div([
                html.Div(id={"type": ids.STATUS, "card": card.key}, className="message"),
                html.Div([
                    dcc.Graph(id={"type": ids.CHART, "card": card.key}, config=GRAPH_CONFIG,
                              figure=paper_vs_ours([]), className="gallery-chart"),
                    dash_table.DataTable(
                        id={"type": ids.TABLE, "card": card.key}, data=[], columns=COLUMNS,
                        # Long quantities wrap instead of pushing the numbers off the card.
                        style_cell={"fontFamily": "inherit", "textAlign": "left", "whiteSpace": "normal",
                                    "height": "auto"},
                        style_cell_conditional=[{"if": {"column_id": "quantity"}, "width": "50%"}],
                        style_data_conditional=AGREEMENT_STYLE,
                        style_table={"overflowX": "auto"},
                    ),
                ], className="gallery-card-body"),
                html.Div(id={"type": ids.WHY, "card": card.key}, className="gallery-why"),
            ]), delay_show=800),   # a look at the cache (every poll) shows no spinner
        ],
        className="panel",
    )


def layout() -> html.Div:
    return html.Div(
        [
            html.Div([html.H2("Gallery"),
                      html.P("The papers' headline results, computed by our engines. Quantities on the paper side "
                             "are quoted from the papers; ours are computed by our engines, once, and kept in the results cache."),
                      html.Button("Run all again", id=ids.RUN_ALL, className="preset")], className="page-head"),
            dcc.Interval(id=ids.POLL, interval=warm.POLL_MS, max_intervals=warm.MAX_POLLS),
            *[card_section(card) for card in CARDS],
        ],
        className="gallery-page",
    )
