"""The landing page's layout: what the tool answers, and one-click demo cards that open with a result.

A card opens its page at ``?demo=<name>``; ``assets/demo.js`` then plays the
demo's steps there (:data:`DEMOS`: press a preset, untick choices, press Run),
so the page shows a computed result and its headline without a word from the
presenter. On a repeat the results come from the cache in a moment.
"""

from __future__ import annotations

from dash import dcc, html

from ..batch import ids as batch_ids
from ..elastic import ids as elastic_ids
from ..fairshare import ids as fairshare_ids
from ..gallery.cards import CARDS as GALLERY_CARDS
from ..network import ids as network_ids


def _click(component_id: str) -> dict:
    return {"selector": f"#{component_id}"}


def _tick(component_id: str, value: str, checked: bool) -> dict:
    return {"selector": f"#{component_id} input[value='{value}']", "checked": checked}


#: Each demo's steps, played in the browser by assets/demo.js: CSS selectors to click (``checked``: only to reach it).
DEMOS: dict[str, list[dict]] = {
    # The HPC2N log's first 2,000 jobs on the MetaCentrum clusters at the paper's load: FCFS against EASY.
    "backfilling": [_click(batch_ids.PRESET_COMPLETE), *[_tick(batch_ids.POLICIES, p, False) for p in ("cons", "ls")],
                    *[_tick(batch_ids.SCENARIOS, s, False) for s in ("EXT-FAIL", "EXT-REQ", "EXT-ALL")],
                    _tick(batch_ids.POLICIES, "fcfs", True), _tick(batch_ids.POLICIES, "easy", True),
                    _tick(batch_ids.SCENARIOS, "BASIC", True), _click(batch_ids.PANEL.run)],
    "hierarchy": [_click(fairshare_ids.PRESET), _click(fairshare_ids.PANEL.run)],
    "isolation": [_click(network_ids.PRESET_FIG1), _click(network_ids.PANEL.run)],
    "elasticity": [_click(elastic_ids.PRESET_TWO_JOB), _click(elastic_ids.PANEL.run)],
}

#: (title, the question it answers, what opens, path, demo or None)
CARDS = (
    ("Backfilling on a real log",
     "How much shorter would jobs wait under EASY backfilling than first-come-first-served, on a real cluster's "
     "log (HPC2N, 2,000 jobs on the MetaCentrum clusters)?",
     "Opens with FCFS and EASY already run.", "/batch", "backfilling"),
    ("Fair shares in a hierarchy",
     "Does each department get its share of CPUs and memory? DRF, H-DRF, collapsed hierarchies and MCH on an "
     "organisation tree you can redraw.",
     "Opens with the MCH paper's Fig. 4 example run.", "/fairshare", "hierarchy"),
    ("Network isolation",
     "Who is protected from whom on the access links? Libra's placement and bandwidth allocation against "
     "per-flow fairness, DRF and HUG.",
     "Opens with Libra's Fig. 1 example run.", "/network", "isolation"),
    ("Memory elasticity",
     "How much faster do jobs finish when tasks may start with less memory than they ask for (YARN-ME)?",
     "Opens with the two-job example run.", "/memory", "elasticity"),
    ("Your own trace",
     "Upload your site's log on the batch page: it runs on the machine its header describes, and every chart "
     "stays responsive at hundreds of thousands of jobs.",
     "Drop an .swf or .swf.gz file on the upload box, then Run.", "/batch", None),
    ("The papers, reproduced",
     f"{len(GALLERY_CARDS)} headline results of the papers, computed by our engines beside the published numbers, "
     "with what differs and why.",
     "Press “Run all” to check every one.", "/gallery", None),
)


def layout() -> html.Div:
    return html.Div(
        [
            html.Div([html.H2("What would change if we scheduled differently?"),
                      html.P("schedscope simulates a cluster's scheduler on your own workload, organisation and "
                             "hardware, and shows side by side how waits, shares, memory and network isolation "
                             "would behave under each policy. Everything runs on this server; nothing leaves it. "
                             "Each card opens a page with its example already computed.")],
                     className="page-head"),
            html.Div([_card(*card) for card in CARDS], className="home-cards"),
        ],
        className="home-page",
    )


def href(path: str, demo: str | None) -> str:
    return f"{path}?demo={demo}" if demo else path


def _card(title: str, question: str, opens: str, path: str, demo: str | None) -> html.Div:
    link = href(path, demo)
    return html.Div([html.H3(dcc.Link(title, href=link)), html.P(question), html.P(opens, className="hint"),
                     dcc.Link("Show me" if demo else "Open", href=link, className="button primary")],
                    className="panel home-card")
