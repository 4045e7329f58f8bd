"""The landing page's layout: what the tool answers, and one card per question it can answer now."""

from __future__ import annotations

from dash import dcc, html

#: (title, the question it answers, the first click, path)
CARDS = (
    ("Backfilling on a real log",
     "How long would jobs wait under FCFS, EASY or Conservative backfilling, with machine failures and job "
     "requirements, on your cluster's own log (SWF, GWF)?",
     "Press “Complete data sets”, then Run.", "/batch"),
    ("Fair shares in a hierarchy",
     "Does each department get its share of CPUs and memory? DRF, H-DRF, collapsed hierarchies and MCH on an "
     "organisation tree you draw.",
     "Press “MCH paper, Fig. 4”, then Run.", "/fairshare"),
    ("Network isolation",
     "Who is protected from whom on the access links? Libra's placement and bandwidth allocation against "
     "per-flow fairness, DRF and HUG.",
     "Press “Libra Fig. 1 example”, then Run.", "/network"),
    ("Memory elasticity",
     "How much faster do jobs finish when tasks may start with less memory than they ask for (YARN-ME)?",
     "Press “Two-job example”, then Run.", "/memory"),
    ("Your own trace",
     "Upload your site's log on the batch page: it runs on the machine its header describes, and every chart "
     "stays responsive at hundreds of thousands of jobs.",
     "Drop an .swf or .swf.gz file on the upload box.", "/batch"),
    ("The papers, reproduced",
     "Each paper's headline numbers computed by our engines beside the published ones, with what differs and why.",
     "Press “Run all”.", "/gallery"),
)


def layout() -> html.Div:
    return html.Div(
        [
            html.Div([html.H2("What would change if we scheduled differently?"),
                      html.P("schedscope simulates a cluster's scheduler on your own workload, organisation and "
                             "hardware, and shows side by side how waits, shares, memory and network isolation "
                             "would behave under each policy. Everything runs on this server; nothing leaves it.")],
                     className="page-head"),
            html.Div([_card(*card) for card in CARDS], className="home-cards"),
        ],
        className="home-page",
    )


def _card(title: str, question: str, first_click: str, path: str) -> html.Div:
    return html.Div([html.H3(dcc.Link(title, href=path)), html.P(question), html.P(first_click, className="hint"),
                     dcc.Link("Open", href=path, className="button primary")], className="panel home-card")
