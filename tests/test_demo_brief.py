"""The stakeholder brief of an engine page's runs: what it says, the one-page figure its PDF is drawn from, the button."""

from __future__ import annotations

import dataclasses
import html

import pytest

from components.figures import headlines
from components.services import brief as briefs
from components.services.runs import ResultCache
from components.widgets import run_panel

BASE = {"engine": "batch", "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}, "name": "cve"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return ResultCache(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def loaded(cache):
    pairs = []
    for policy, label in (("fcfs", "FCFS"), ("easy", "EASY <b>")):   # a label with a tag: escaped everywhere
        result, _ = cache.run({**BASE, "policy": policy})
        pairs.append(({"policy": policy, "label": label, "scenario": "basic", "hash": result.scenario_hash}, result))
    return pairs


def _texts(figure) -> str:
    return " ".join(annotation.text for annotation in figure.layout.annotations)


def test_a_pages_brief_says_its_headline_compares_its_runs_and_links_each(loaded):
    brief = briefs.page_brief(loaded, headlines.batch, "http://host", "now")
    assert brief.headline == headlines.batch(loaded) and "vs FCFS" in brief.headline
    assert brief.title == "Batch scheduling: 2 runs"
    facts = dict(brief.facts)
    assert facts["Compared"] == "FCFS, EASY <b>" and facts["Workload"] == "4 jobs (cve)"
    assert facts["Hardware"] == "4 CPUs, 1 cluster" and facts["Seed"] == "0"
    # The charts that carry the headline: mean wait per run first, then bounded slowdown, then a timeline.
    titles = [figure.layout.title.text for figure in brief.figures]
    assert titles[:2] == ["Mean wait (lower is better)", "Mean bounded slowdown (lower is better)"]
    assert len(brief.figures) == 3 and titles[2].startswith("CPUs in use")
    wait = brief.figures[0].data[0]
    assert list(wait.x) == ["FCFS", "EASY <b>"]
    assert list(wait.y) == [round(r.summary_value("mean_wait_s"), 1) for _, r in loaded]
    assert [url for _, url in brief.links] == [f"http://host/scenario/{r.scenario_hash}" for _, r in loaded]


def test_the_pdf_page_is_one_figure_carrying_every_text_escaped(loaded):
    brief = briefs.page_brief(loaded, headlines.batch, "http://host", "now")
    figure = briefs.brief_figure(brief)
    assert (figure.layout.width, figure.layout.height) == (briefs.PAGE_WIDTH, briefs.PAGE_HEIGHT)
    text = _texts(figure)
    for line in briefs.textwrap.wrap(brief.headline, briefs.HEADLINE_WRAP):
        assert html.escape(line, quote=False) in text
    assert "<b>Compared</b>: FCFS, EASY &lt;b&gt;" in text and "EASY <b>" not in text
    assert f"http://host/scenario/{loaded[1][1].scenario_hash}" in text
    # Each chart is a subplot of its own, side by side, with the bars' and lines' traces moved onto it.
    assert {trace.xaxis for trace in figure.data} == {"x", "x2", "x3"}
    domains = [figure.layout[f"xaxis{suffix}"].domain for suffix in ("", "2", "3")]
    assert all(a[1] < b[0] for a, b in zip(domains, domains[1:]))
    # One legend entry per run across the page.
    assert sorted(trace.name for trace in figure.data if trace.showlegend) == ["EASY <b>", "FCFS"]


def test_a_single_runs_brief_has_no_bars_to_compare(loaded):
    brief = briefs.page_brief(loaded[:1], headlines.batch, "http://host", "now")
    assert dict(brief.facts)["Policy"] == "FCFS" and brief.title == "Batch scheduling: 1 run"
    assert all(figure.data[0].type == "scatter" for figure in brief.figures)
    assert "run another policy to compare" in brief.headline


def test_an_engine_without_a_page_sentence_gets_its_first_runs_own(loaded):
    assert briefs.sentence_for("batch") is headlines.batch
    assert briefs.sentence_for("nope")(loaded).startswith("FCFS: mean wait")
    assert briefs.sentence_for("nope")([]) == ""


def _client(cache):
    from flask import Flask

    server = Flask(__name__)
    briefs.register(server, cache)
    briefs.register(server, cache)   # every page's run panel asks; the routes are added once
    return server.test_client()


def test_the_brief_links_follow_the_runs_and_are_files_from_their_routes(loaded, cache):
    records = [{**record, "cached": False, "seed": 0} for record, _ in loaded]
    pdf, html_link, style, _ = run_panel.brief_links("batch", records)
    assert style == "button brief" and pdf.startswith("/brief.pdf?page=batch&runs=")
    assert run_panel.brief_links("batch", []) == (None, None, "button brief disabled", "button brief disabled")
    answer = _client(cache).get(html_link, base_url="http://host")
    assert answer.status_code == 200 and answer.mimetype == "text/html"
    name = f"batch-brief-{loaded[0][1].scenario_hash[:8]}.html"
    assert answer.headers["Content-Disposition"] == f'attachment; filename="{name}"'
    text = answer.get_data(as_text=True)
    assert html.escape(headlines.batch(loaded)) in text and f"http://host/scenario/{loaded[1][1].scenario_hash}" in text
    assert "EASY &lt;b&gt;" in text and "EASY <b>" not in text


def test_a_brief_route_refuses_what_it_cannot_answer(loaded, cache, monkeypatch):
    client = _client(cache)
    result = loaded[1][1]
    assert client.get(briefs.run_href(result.scenario_hash, "html")).status_code == 200
    report = client.get(briefs.report_href(result.scenario_hash))
    assert report.status_code == 200 and report.get_data(as_text=True).count('class="plotly-graph-div"') == 2
    assert client.get(briefs.report_href("ab" * 32)).status_code == 404
    assert client.get(briefs.run_href("ab" * 32, "pdf")).status_code == 404          # not stored
    assert client.get(briefs.run_href(result.scenario_hash, "exe")).status_code == 404
    assert client.get("/brief.html?runs=nonsense").status_code == 400
    assert client.get('/brief.html?runs=[{"hash":"../../etc/passwd"}]').status_code == 400
    assert client.get(briefs.page_href("batch", [{"hash": "cd" * 32}], "html")).status_code == 404
    monkeypatch.setattr(briefs, "browser_path", lambda: None)
    answer = client.get(briefs.run_href(result.scenario_hash, "pdf"))
    assert answer.status_code == 503 and "needs Chromium" in answer.get_data(as_text=True)


def test_every_page_with_a_run_panel_offers_the_brief():
    from components.pages import batch, elastic, fairshare, network, site

    for page in (batch, elastic, fairshare, network, site):
        text = str(page.layout.layout())
        assert page.ids.PANEL.brief_pdf in text and page.ids.PANEL.brief_html in text, page.__name__
    row = run_panel.controls(run_panel.Ids("batch"))[0].children   # beside Run, greyed out until there are runs
    assert [c.children for c in row] == ["Run", "Cancel", "Brief PDF", "HTML"]
    assert all("disabled" in c.className for c in row[2:])
    from components.pages.scenario import layout as scenario_layout

    links = str(scenario_layout.found("ef" * 32))
    assert f"/brief/{'ef' * 32}.pdf" in links and f"/brief/{'ef' * 32}.html" in links


def test_a_long_fact_wraps_between_words_on_the_pdf_page(loaded):
    brief = briefs.page_brief(loaded, headlines.batch, "http://host", "now")
    workload = ("51,859 jobs (gaia.swf) on 2,004 CPUs of 8 clusters, read from the trace header of "
                "gaia.cleaned.swf.gz with its queue lines and requested times")
    long = dataclasses.replace(brief, facts=(("Workload", workload), *brief.facts[1:]))
    text = _texts(briefs.brief_figure(long))
    line = text[text.index("<b>Workload</b>"):].split("<b>", 2)[1]
    words = line.replace("<br>", " ").replace("Workload</b>:", "").split()
    assert all(word in workload.split() or word == "…" for word in words), words
    assert "gaia.clea " not in line.replace("<br>", " ") + " "
