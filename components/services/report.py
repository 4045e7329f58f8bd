"""Self-contained HTML reports of finished runs: charts, tables and scenarios in one file.

The report embeds plotly.js once (inline, no CDN), so it opens in a browser
without the server or a network; charts stay interactive. Everything the
user supplied (names, labels, scenario text) is HTML-escaped.

What every document of runs shares (this report and the brief,
:mod:`components.services.brief`) is here too: the timelines that move
(:func:`timeline_figures`, one legend entry per line one can see) and the
run-time estimates the runs used (:func:`estimates_fact`).
"""

from __future__ import annotations

import html
import json
from typing import Sequence

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from sched_engine import SimulationResult

from ..chart_config import GRAPH_CONFIG
from ..figures.compare import LINE_NARROWEST, LINE_WIDEST, SUM, overlay_figure, visible_lines  # noqa: F401 (widths for the brief)

STYLE = """
body { font-family: system-ui, sans-serif; color: #1b2733; margin: 1.5rem auto; max-width: 1200px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { border: 1px solid #d5dde5; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
pre { background: #f4f6f8; padding: 0.6rem; overflow-x: auto; font-size: 0.8rem; }
.meta { color: #5b6b7b; }
"""


def summary_table(runs: Sequence[tuple[str, SimulationResult]]) -> pd.DataFrame:
    """Metrics as rows, runs as columns (``metric``, ``unit``, then one column per run label)."""
    table = None
    for label, result in runs:
        column = result.summary[["metric", "unit", "value"]].rename(columns={"value": label})
        table = column if table is None else table.merge(column, on=["metric", "unit"], how="outer", sort=False)
    return table if table is not None else pd.DataFrame(columns=["metric", "unit"])


def _table_html(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for value in values:
            text = f"{value:.6g}" if isinstance(value, float) else ("" if value is None else str(value))
            cells.append(f"<td>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def html_report(title: str, runs: Sequence[tuple[str, SimulationResult]], figures: Sequence[go.Figure],
                generated: str) -> str:
    """One HTML document: run list, summary side by side, the charts, each run's scenario.

    ``runs`` are ``(label, result)`` pairs; ``generated`` is the timestamp
    text printed in the header (passed in, so reports are reproducible).
    """
    listing = pd.DataFrame([
        {"run": label, "engine": r.scenario["engine"], "policy": r.scenario["policy"], "seed": r.scenario["seed"],
         "scenario hash": r.scenario_hash[:12], "wall (s)": round(r.wall_seconds, 3)}
        for label, r in runs
    ])
    charts = [
        pio.to_html(figure, full_html=False, include_plotlyjs=index == 0, config=GRAPH_CONFIG)
        for index, figure in enumerate(figures)
    ]
    scenarios = "".join(
        f"<details><summary>{html.escape(label)}</summary><pre>"
        f"{html.escape(json.dumps(result.scenario, indent=2, sort_keys=True))}</pre></details>"
        for label, result in runs
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class='meta'>schedscope report, {html.escape(generated)}; "
        f"{len(runs)} run(s). Opens without the server; charts are interactive.</p>"
        f"<h2>Runs</h2>{_table_html(listing)}"
        f"<h2>Summary</h2>{_table_html(summary_table(runs))}"
        f"<h2>Charts</h2>{''.join(charts)}"
        f"<h2>Scenarios</h2>{scenarios}"
        "</body></html>"
    )


# ---- what every document of runs shares ----------------------------------------------------------

def moving_metrics(runs: Sequence[tuple[str, object]]) -> list[str]:
    """The timeline metrics every run has, in the first run's order, that change over it (not a flat line)."""
    timeline = runs[0][1].timeline
    metrics = list(dict.fromkeys(timeline["metric"]))
    for _, result in runs[1:]:
        metrics = [m for m in metrics if m in set(result.timeline["metric"])]
    return [m for m in metrics if timeline.loc[timeline["metric"] == m, "value"].nunique() > 1]


def timeline_figures(runs: Sequence[tuple[str, object]], count: int) -> list[go.Figure]:
    """The first ``count`` moving timeline metrics, summed over every entity, one visible line per legend entry."""
    return [visible_lines(overlay_figure(list(runs), metric, SUM))
            for metric in moving_metrics(runs)[:count]] if runs else []


#: What a model's ``estimates`` parameter means, in a reader's words (another value is shown as it is).
ESTIMATE_WORDS = {"perfect": "perfect (each job's actual run time)",
                  "trace": "the users' requested times (from the log)"}


def estimates_fact(runs: Sequence[tuple[str, object]]) -> list[tuple[str, str]]:
    """``("Run-time estimates", ...)`` from each run's own model (none when its engine takes no estimates).

    One value when every run used the same estimates, else each run's by its label.
    """
    used = [(label, (result.scenario.get("model") or {}).get("estimates")) for label, result in runs]
    used = [(label, ESTIMATE_WORDS.get(value, str(value))) for label, value in used if value is not None]
    if not used:
        return []
    kinds = list(dict.fromkeys(words for _, words in used))
    return [("Run-time estimates", kinds[0] if len(kinds) == 1 else "; ".join(f"{label}: {words}"
                                                                           for label, words in used))]
