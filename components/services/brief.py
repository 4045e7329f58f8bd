"""The stakeholder brief: one page with the headline, the scenario in words, the charts that carry it, the permalink.

Two renderings of one :class:`Brief`:

* :func:`brief_html` -- a self-contained HTML page (plotly.js inlined once,
  no CDN), interactive, laid out to print on one page;
* :func:`brief_pdf` -- a one-page PDF (A4 landscape), drawn by the same
  rendering processes as the charts' PDF export
  (:mod:`components.services.render_pool`, Kaleido driving the machine's own
  Chromium). The whole page is one Plotly figure (:func:`brief_figure`): the
  texts are annotations, the charts are its subplots, so the PDF keeps real,
  selectable text and vector charts.

A brief is built from a permalink's single run (:func:`run_brief`) or from
the runs an engine page shows (:func:`page_brief`, the page's headline
sentence over all of them). Both are files served by :func:`register`'s
routes (``/brief/<hash>.pdf``, ``/brief.html?page=..&runs=..``), never
callback responses: the HTML carries plotly.js (about 4.6 MB). Everything a user typed (names, labels) is
escaped before it reaches HTML or a Plotly text (which reads a few tags).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import textwrap
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Sequence
from urllib.parse import urlencode

import plotly.graph_objects as go
import plotly.io as pio
from flask import Response, abort, request

from ..chart_config import GRAPH_CONFIG
from ..figures import catalogue, headlines
from ..figures.batch import PALETTE
from .image_export import browser_path
from .pdf_title import with_title
from .render_pool import shared_pool
from .report import estimates_fact, html_report, timeline_figures
from .result_store import is_scenario_hash
from .runs import loaded_runs
from .workspace import permalink

#: The PDF page: A4 landscape at 96 px per inch.
PAGE_WIDTH, PAGE_HEIGHT = 1123, 794
#: At most this many charts on the page (the headline's metric, the runner-up, one timeline).
MAX_CHARTS = 3
#: At most this many runs in a chart (the page's first ones).
MAX_RUNS = 8
#: Characters per line of the headline on the PDF page (17 px text across the page).
HEADLINE_WRAP = 115
#: Each engine's metrics whose bars carry its headline (:mod:`components.figures.headlines`), first the headline's.
CHART_METRICS = {
    "batch": ("mean_wait_s", "mean_bounded_slowdown_tau10"),
    "network": ("min_isolation", "mean_isolation"),
    "elastic": ("mean_job_runtime_s", "makespan_s"),
    "fairshare": ("utilisation_cpu", "utilisation_cpus", "makespan_s"),
    "site": ("mean_wait_s", "mean_min_isolation"),
}


@dataclass(frozen=True)
class Brief:
    """What a brief says; both renderings draw exactly this."""

    title: str
    headline: str
    facts: tuple[tuple[str, str], ...]      #: the scenario in words, ``(what, value)``
    figures: tuple[go.Figure, ...]          #: at most :data:`MAX_CHARTS`
    links: tuple[tuple[str, str], ...]      #: ``(run label, permalink URL)``
    generated: str


def _value(result, metric: str) -> float:
    try:
        return float(result.summary_value(metric))
    except (KeyError, IndexError, ValueError):
        return math.nan


def metric_bars(runs: Sequence[tuple[str, object]], metric: str) -> go.Figure:
    """One bar per run: ``metric`` as the summary table shows it (catalogue units and rounding)."""
    engine = runs[0][1].scenario["engine"]
    values = [catalogue.rounded(metric, _value(result, metric), engine) for _, result in runs]
    figure = go.Figure(go.Bar(
        x=[label for label, _ in runs], y=values, marker_color=[PALETTE[i % len(PALETTE)] for i in range(len(runs))],
        text=[catalogue.formatted(metric, _value(result, metric), engine) for _, result in runs],
        textposition="outside", cliponaxis=False, showlegend=False,
        hovertemplate="%{x}: %{text}<extra></extra>"))
    direction = catalogue.describe(metric, engine).direction
    title = catalogue.label(metric, engine) + (f" ({direction})" if direction else "")
    figure.update_layout(title=title, template="plotly_white", height=320, yaxis={"title": catalogue.column(metric, engine)},
                         margin={"l": 60, "r": 20, "t": 40, "b": 40})
    return figure


def _distinct_labels(loaded) -> list[str]:
    """Each run's label, with its scenario added where two runs share a label (a page's two workloads)."""
    labels = [str(record.get("label") or record.get("policy") or "run") for record, _ in loaded]
    return [f"{label} · {record['scenario']}" if labels.count(label) > 1 and record.get("scenario") else label
            for label, (record, _) in zip(labels, loaded)]


def page_brief(loaded, sentence: Callable[[list], str], base_url: str, generated: str) -> Brief:
    """The brief of an engine page's runs: its headline over them all, their key metrics and a timeline."""
    loaded = list(loaded)[:MAX_RUNS]
    runs = list(zip(_distinct_labels(loaded), (result for _, result in loaded)))
    first = runs[0][1]
    engine = first.scenario["engine"]
    metrics = [m for m in CHART_METRICS.get(engine, ()) if not math.isnan(_value(first, m))]
    bars = [metric_bars(runs, metric) for metric in metrics[:2]] if len(runs) > 1 else []
    figures = bars + timeline_figures(runs, MAX_CHARTS - len(bars))
    facts = [(k, v) for k, v in headlines.scenario_words(first) if k not in ("Policy", "Seed")]
    facts.insert(1, ("Compared" if len(runs) > 1 else "Policy", ", ".join(label for label, _ in runs)))
    seeds = sorted({str(result.scenario.get("seed", 0)) for _, result in runs})
    facts.append(("Seed" if len(seeds) == 1 else "Seeds", ", ".join(seeds)))
    facts.extend(estimates_fact(runs))
    links = tuple((label, base_url + permalink(result.scenario_hash)) for label, result in runs)
    title = f"{catalogue.engine_label(engine)}: {len(runs)} run{'s' if len(runs) > 1 else ''}"
    return Brief(title, sentence(loaded) or headlines.one_run(first), tuple(facts), tuple(figures[:MAX_CHARTS]),
                 links, generated)


def run_brief(result, link: str, generated: str) -> Brief:
    """The brief of one run (a permalink): its own headline, its moving timelines, its permalink."""
    title = catalogue.run_label(result.scenario["engine"], result.scenario["policy"], result.scenario.get("name"))
    runs = [(result.scenario.get("name") or "run", result)]
    return Brief(title, headlines.one_run(result), (*headlines.scenario_words(result), *estimates_fact(runs)),
                 tuple(timeline_figures(runs, MAX_CHARTS)), ((title, link),), generated)


def sentence_for(engine: str) -> Callable[[list], str]:
    """The headline sentence of an engine's page (:data:`headlines.BY_ENGINE`), else the first run's own."""
    return headlines.BY_ENGINE.get(engine) or (lambda loaded: headlines.one_run(loaded[0][1]) if loaded else "")


# ---- HTML ----------------------------------------------------------------------------------------

BRIEF_STYLE = """
body { font-family: system-ui, sans-serif; color: #1b2733; margin: 1.2rem auto; max-width: 960px; }
h1 { font-size: 1.3rem; margin-bottom: 0.2rem; } .meta { color: #5b6b7b; font-size: 0.85rem; }
.headline { font-size: 1.25rem; font-weight: 600; border-left: 5px solid #2f7bbf; background: #f2f7fb;
            padding: 0.6rem 0.9rem; margin: 1rem 0; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 0.2rem 1rem; font-size: 0.95rem; }
dt { color: #5b6b7b; } dd { margin: 0; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 0.5rem; }
@media print { body { margin: 0; max-width: none; } .charts { break-inside: avoid; } }
"""


def brief_html(brief: Brief) -> str:
    """The brief as one self-contained HTML page (plotly.js inlined once, no CDN); prints on one page."""
    charts = [
        pio.to_html(go.Figure(figure).update_layout(height=300, margin={"l": 50, "r": 10, "t": 40, "b": 40}),
                    full_html=False, include_plotlyjs=index == 0, config=GRAPH_CONFIG)
        for index, figure in enumerate(brief.figures)
    ]
    rows = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in brief.facts)
    links = "".join(f"<li>{html.escape(label)}: <a href='{html.escape(url, quote=True)}'>{html.escape(url)}</a></li>"
                    for label, url in brief.links)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(brief.title)}</title><style>{BRIEF_STYLE}</style></head><body>"
        f"<h1>{html.escape(brief.title)}</h1><p class='meta'>schedscope brief, {html.escape(brief.generated)}</p>"
        f"<p class='headline'>{html.escape(brief.headline)}</p>"
        f"<dl>{rows}</dl>"
        f"<div class='charts'>{''.join(charts)}</div>"
        f"<p class='meta'>Open the full result (every chart, the data, re-run it):</p><ul class='meta'>{links}</ul>"
        "</body></html>"
    )


# ---- PDF -----------------------------------------------------------------------------------------

def _text(value: str, width: int | None = None) -> str:
    """``value`` for a Plotly text: tags escaped (Plotly reads ``<b>``, ``<a>``...), wrapped at ``width``."""
    lines = textwrap.wrap(str(value), width) if width else [str(value)]
    return "<br>".join(html.escape(line, quote=False) for line in lines)


#: A fact's value on the PDF page: lines of at most this many characters, at most this many characters in all.
FACT_WRAP, FACT_MAX = 62, 124


def _fact(value: str) -> str:
    """A fact's value for its half of the page: wrapped between words, shortened at a word with "…" (never cut
    inside a word, as "…trace header of gaia.clea" was)."""
    return _text(textwrap.shorten(str(value), FACT_MAX, placeholder=" …"), FACT_WRAP).replace("<br>", "<br>   ")


#: Where the charts sit on the page (paper coordinates), and the gap between two.
CHARTS_BOTTOM, CHARTS_TOP, CHART_GAP = 0.1, 0.56, 0.07


def brief_figure(brief: Brief) -> go.Figure:
    """The whole brief as one A4-landscape figure: texts as annotations, the charts side by side below them."""
    figure = go.Figure()
    count = len(brief.figures)
    width = (1 - CHART_GAP * (count - 1)) / count if count else 1
    legend_names: set[str] = set()
    for index, source in enumerate(brief.figures):
        axis = "" if index == 0 else str(index + 1)
        left = index * (width + CHART_GAP)
        for trace in source.data:
            # One legend entry per run over the whole page (every chart colours a run alike).
            shown = trace.showlegend is not False and trace.name and trace.name not in legend_names
            legend_names.add(trace.name)
            figure.add_trace(trace.update(xaxis=f"x{axis}", yaxis=f"y{axis}", showlegend=bool(shown),
                                          legendgroup=trace.name))
        figure.layout[f"xaxis{axis}"] = {"domain": [left, left + width], "anchor": f"y{axis}",
                                         "title": {"text": source.layout.xaxis.title.text, "font": {"size": 11}},
                                         "automargin": True, "tickfont": {"size": 10}}
        figure.layout[f"yaxis{axis}"] = {"domain": [CHARTS_BOTTOM, CHARTS_TOP], "anchor": f"x{axis}",
                                         "title": {"text": source.layout.yaxis.title.text, "font": {"size": 11}},
                                         "rangemode": "tozero", "tickfont": {"size": 10}}
        figure.add_annotation(text=f"<b>{_text(source.layout.title.text or '', 48)}</b>", x=left + width / 2,
                              y=CHARTS_TOP + 0.015, xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                              showarrow=False, font={"size": 13})
    notes = [
        (f"<b>{_text(brief.title, 90)}</b>", 1.0, 22, "#1b2733"),
        (_text(f"schedscope brief, {brief.generated}"), 0.955, 12, "#5b6b7b"),
    ]
    for text, y, size, colour in notes:
        figure.add_annotation(text=text, x=0, y=y, xref="paper", yref="paper", xanchor="left", yanchor="top",
                              showarrow=False, align="left", font={"size": size, "color": colour})
    figure.add_annotation(text=f"<b>{_text(brief.headline, HEADLINE_WRAP)}</b>", x=0, y=0.91, xref="paper",
                          yref="paper", xanchor="left", yanchor="top", showarrow=False, align="left",
                          font={"size": 16, "color": "#1b2733"}, bgcolor="#f2f7fb", bordercolor="#2f7bbf",
                          borderwidth=2, borderpad=8)
    half = (len(brief.facts) + 1) // 2
    for column, facts in enumerate((brief.facts[:half], brief.facts[half:])):
        text = "<br>".join(f"<b>{_text(k)}</b>: {_fact(v)}" for k, v in facts)
        figure.add_annotation(text=text, x=0.5 * column, y=0.8, xref="paper", yref="paper", xanchor="left",
                              yanchor="top", showarrow=False, align="left", font={"size": 13})
    shown_links = brief.links[:3]
    more = f" (and {len(brief.links) - 3} more runs)" if len(brief.links) > 3 else ""
    links = "<br>".join(f"{_text(label[:40])}: {_text(url)}" for label, url in shown_links)
    figure.add_annotation(text=f"Open the full result (every chart, the data, re-run it){more}:<br>{links}",
                          x=0, y=-0.02, xref="paper", yref="paper", xanchor="left", yanchor="top", showarrow=False,
                          align="left", font={"size": 11, "color": "#5b6b7b"})
    figure.update_layout(width=PAGE_WIDTH, height=PAGE_HEIGHT, template="plotly_white", bargap=0.3,
                         margin={"l": 50, "r": 40, "t": 40, "b": 90},
                         legend={"orientation": "h", "x": 0, "y": CHARTS_BOTTOM - 0.09, "font": {"size": 11}})
    if not count:
        figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False})
    return figure


class BriefUnavailable(RuntimeError):
    """The PDF could not be drawn here (no Chromium, or the renderer failed); the message says what to do."""


def brief_pdf(brief: Brief) -> bytes:
    """The brief as a one-page PDF, drawn by the rendering processes (a few at once, each under a deadline).

    The figure is the server's own (not a posted one): its only outside
    references are the permalinks, as text. Raises :class:`BriefUnavailable`.
    """
    path = browser_path()
    if path is None:
        raise BriefUnavailable("the PDF needs Chromium on the server (Debian package chromium); "
                               "the HTML brief works without it")
    try:
        os.environ.setdefault("BROWSER_PATH", path)   # where Kaleido finds it, as the chart export does
        pdf = shared_pool().render(brief_figure(brief).to_json(),
                                   {"format": "pdf", "width": PAGE_WIDTH, "height": PAGE_HEIGHT, "scale": 1})
        return with_title(pdf, brief.title)   # not the renderer's own page title
    except RuntimeError as exc:   # RenderBusy, RenderTimeout, RenderFailed: each says what happened
        raise BriefUnavailable(f"the PDF was not drawn: {exc}") from None


# ---- serving -------------------------------------------------------------------------------------
# A brief is a file from these routes, never a callback response: the HTML inlines plotly.js (about 4.6 MB).

RUN_ROUTE = "/brief/<scenario_hash>.<fmt>"
#: A permalink's full HTML report (:func:`components.services.report.html_report`), a file for the same reason.
REPORT_ROUTE = "/report/<scenario_hash>.html"
PAGE_ROUTE = "/brief.<fmt>"
MIME = {"pdf": "application/pdf", "html": "text/html"}
#: What a page passes of each run record (the headline sentences read these), and how long a text may be.
RECORD_KEYS = ("hash", "label", "policy", "scenario")
MAX_TEXT = 80


def run_href(scenario_hash: str, fmt: str) -> str:
    """The brief of one stored run (its permalink's), as ``fmt`` (``pdf`` or ``html``)."""
    return f"/brief/{scenario_hash}.{fmt}"


def report_href(scenario_hash: str) -> str:
    """The HTML report of one stored run: its charts, summary and scenario (:mod:`components.services.report`)."""
    return f"/report/{scenario_hash}.html"


def page_href(page: str, records, fmt: str) -> str | None:
    """The brief of an engine page's runs (``records`` from its runs Store), or None without runs."""
    kept = [{key: str(record[key])[:MAX_TEXT] for key in RECORD_KEYS if record.get(key) is not None}
            for record in (records or [])[:MAX_RUNS] if isinstance(record, dict) and record.get("hash")]
    if not kept:
        return None
    return f"/brief.{fmt}?" + urlencode({"page": page, "runs": json.dumps(kept, separators=(",", ":"))})


def _answer(brief: Brief, fmt: str, name: str) -> Response:
    try:
        body = brief_pdf(brief) if fmt == "pdf" else brief_html(brief)
    except BriefUnavailable as exc:
        return Response(f"No brief.pdf: {exc}.", status=503, mimetype="text/plain")
    return Response(body, mimetype=MIME[fmt], headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'})


def _records(text: str) -> list[dict]:
    """The run records of a page's brief URL: a JSON list of small objects with a scenario hash each."""
    try:
        records = json.loads(text or "[]")
    except ValueError:
        abort(400, "runs: not JSON")
    if not isinstance(records, list) or not all(
            isinstance(r, dict) and is_scenario_hash(r.get("hash")) and all(isinstance(v, str) for v in r.values())
            for r in records):
        abort(400, "runs: a list of run records, each with its scenario hash")
    return [{key: r[key][:MAX_TEXT] for key in RECORD_KEYS if key in r} for r in records[:MAX_RUNS]]


def register(server, results) -> None:
    """Add the brief routes to the Flask ``server`` (once, whichever page asks first); ``results``: the ResultCache."""
    if "schedscope_brief_run" in server.view_functions:
        return

    @server.get(RUN_ROUTE, endpoint="schedscope_brief_run")
    def _run_brief(scenario_hash: str, fmt: str):
        if fmt not in MIME or not is_scenario_hash(scenario_hash):
            abort(404)
        result = results.get(scenario_hash)
        if result is None:
            abort(404, "no stored result with this hash (it may have been evicted: run it again)")
        link = request.host_url.rstrip("/") + permalink(scenario_hash)
        return _answer(run_brief(result, link, _now()), fmt, f"{scenario_hash[:12]}-brief")

    @server.get(REPORT_ROUTE, endpoint="schedscope_report")
    def _report(scenario_hash: str):
        result = results.get(scenario_hash) if is_scenario_hash(scenario_hash) else None
        if result is None:
            abort(404, "no stored result with this hash (it may have been evicted: run it again)")
        label = result.scenario.get("name") or result.scenario["policy"]
        runs = [(label, result)]
        text = html_report(label, runs, timeline_figures(runs, 2), _now())
        return Response(text, mimetype="text/html",
                        headers={"Content-Disposition": f'attachment; filename="{scenario_hash[:12]}.html"'})

    @server.get(PAGE_ROUTE, endpoint="schedscope_brief_page")
    def _page_brief(fmt: str):
        if fmt not in MIME:
            abort(404)
        loaded = loaded_runs(results, _records(request.args.get("runs")))
        if not loaded:
            abort(404, "none of these runs is stored on this server any more: run them again")
        engine = loaded[0][1].scenario["engine"]
        page = re.sub(r"[^a-z0-9-]", "", str(request.args.get("page") or engine))[:20] or "page"
        brief = page_brief(loaded, sentence_for(engine), request.host_url.rstrip("/"), _now())
        return _answer(brief, fmt, f"{page}-brief-{loaded[0][1].scenario_hash[:8]}")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
