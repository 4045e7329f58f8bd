"""The run panel of an engine page: Run, Cancel, progress, message, the runs Store, summary table, exports.

Every engine page runs its scenarios the same way, and this module is that
one way. A page says *what* to run; the panel runs it::

    from components.widgets import run_panel

    IDS = run_panel.Ids("site")        # "site-run-button", "site-runs-store", ...

    def plan(uploads, draft, policies) -> list[run_panel.Planned]:
        # the form's values (the States below, in order) -> the scenarios to run;
        # raise ScenarioError to refuse, naming the field at fault
        return [run_panel.Planned({"engine": "site", "policy": p, "model": ..., "seed": 0},
                                  {"policy": p, "label": ...}) for p in policies]

    # layout: the pieces go where the page wants them; the form inside run_panel.inputs(IDS, [...]),
    # which folds away after a run so the results follow Run
    run_panel.store(IDS), *run_panel.controls(IDS), run_panel.inputs(IDS, form), run_panel.summary_table(IDS),
    run_panel.export_row(IDS, ("jobs", "timeline", "summary")), run_panel.download(IDS)

    # callbacks
    run_panel.register(app, IDS, results, partial(plan, uploads),
                       [State(DRAFT, "data"), State(POLICIES, "value")])

Run starts a background callback (:mod:`components.services.jobs` runs it):
:func:`run_many` validates every planned scenario, then runs them through the
results cache (those not in it side by side on forked processes),
reporting progress, and the runs Store
gets one small record per run -- the page's own fields (``policy``,
``label``, ...) plus ``hash``, ``cached`` and ``wall_seconds``. Every chart
callback reads those records and loads the results from the cache
(:func:`components.services.runs.loaded_runs`); frames never travel through
the browser. A refused or failed run leaves the Store as it was: the
previous results stay on the page.

Beside Run, the same on every engine page, "Brief PDF" and "HTML" download
one page for stakeholders about all the runs shown
(:mod:`components.services.brief`: the page's headline sentence, the charts
that carry it, the scenario in words, each run's permalink). They are links to the brief's routes, which
:func:`register` adds and points at the Store's runs.

What the runs show is the page's: its callbacks fill the summary table
(``ids.summary``; :func:`summary_columns` for its columns) from the runs
Store (``ids.runs``) and answer the export buttons into ``ids.download``.
``register``'s ``noun``, ``timed`` and ``refused_note`` shape the message
("3 scheme(s): 2 simulated in 1.4 s, 1 from the cache.";
"Not run: <field>: <why>. Earlier results stay.").

Ids are plain strings ``<page>-<thing>-<widget>`` (the browser tests and
``bench/site_scale.py`` find components by them); the export buttons are
pattern-matching ids ``{"type": "<page>-export-button", "frame": <name>}``.
A page with a Run button of its own (a permalink's single run) takes the
same background-callback keywords from :func:`background_run`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial

from dash import Input, Output, State, dash_table, dcc, html, no_update

from sched_engine import ScenarioError

from ..figures import catalogue
from ..services import brief as briefs
from ..services.progress import POLL_MS, throttled
from ..services.runs import loaded_runs
from .run_plan import Planned, run_many, run_message  # noqa: F401 -- the panel's names, as pages use them

CANCELLED = "Cancelled after {seconds} s; nothing was saved. The previous results stay."

# The bar's (value, max) when no run is going: the run callback passes it as ``progress_default``,
# which Dash applies after the run's last poll. The last poll of a cancelled run still carries the
# run's latest progress report, so an empty bar set only on Cancel would be overwritten by it.
EMPTY_PROGRESS = ["0", "100"]

#: The fold button's label when the inputs are open (False) and folded away (True).
FOLD_LABELS = {False: "▾ Inputs (hide)", True: "▸ Inputs: show to change them"}


class Ids:
    """The ids of one page's run panel, all derived from the page's name."""

    def __init__(self, page: str):
        self.page = page
        self.run = f"{page}-run-button"
        self.cancel = f"{page}-cancel-button"
        self.progress = f"{page}-run-progress"
        self.message = f"{page}-run-message"
        self.runs = f"{page}-runs-store"
        self.summary = f"{page}-summary-table"
        self.headline = f"{page}-headline"
        self.export = f"{page}-export-button"   # pattern-matching type, keyed by ``frame``
        self.download = f"{page}-download"
        self.brief_pdf = f"{page}-brief-pdf-button"
        self.brief_html = f"{page}-brief-html-button"
        self.inputs = f"{page}-inputs-box"          # the page's inputs, folded away after a run
        self.inputs_toggle = f"{page}-inputs-button"

    def export_button(self, frame: str) -> dict:
        return {"type": self.export, "frame": frame}


def on_run(results, plan: Callable[..., list[Planned]], set_progress, values: Sequence, *,
           noun: str = "run", timed: bool = True, refused_note: str = "") -> tuple:
    """What Run sets: ``(run records, message)``, or ``(no_update, error message)`` when refused.

    ``plan(*values)`` turns the form's values into the scenarios to run; a
    :class:`ScenarioError` from it or from a run is shown as ``Not run: ...``
    followed by ``refused_note``.
    """
    try:
        records, message = run_many(results, plan(*values), throttled(set_progress), noun=noun, timed=timed)
    except ScenarioError as exc:
        return no_update, html.Span(f"Not run: {exc}{refused_note}", className="error")
    return records, html.Span(message, className="ok")


# ---- layout pieces ------------------------------------------------------------------------------


def store(ids: Ids) -> dcc.Store:
    """The runs Store: the run records, kept in the browser (a reload keeps the page's results)."""
    return dcc.Store(id=ids.runs, storage_type="local", data=[])


def controls(ids: Ids, before: Sequence = ()) -> list:
    """Run, Cancel and the brief's links (after the components ``before``, in one row), the progress bar and the
    run message."""
    return [
        html.Div([*before, html.Button("Run", id=ids.run, className="primary"),
                  html.Button("Cancel", id=ids.cancel, disabled=True), *brief_links_row(ids)], className="button-row"),
        html.Progress(id=ids.progress, value="0", max="100"),
        html.Div(id=ids.message, className="message"),
        axis_tooltips(ids.page if ids.page in catalogue.ENGINES else None),
    ]


def brief_links_row(ids: Ids) -> list:
    """The brief's links (PDF, HTML), beside Run: greyed out until there are runs (see :func:`brief_links`).

    Links to the brief's files, never a callback response (the HTML carries plotly.js).
    """
    tip = ("One page for stakeholders about the runs shown: the headline, the charts that carry it, the scenario "
           "in words and the permalinks")
    return [html.A("Brief PDF", id=ids.brief_pdf, className="button brief disabled", title=tip),
            html.A("HTML", id=ids.brief_html, className="button brief disabled",
                   title=tip + " (HTML, opens offline)")]


def inputs(ids: Ids, children: Sequence) -> html.Div:
    """The page's inputs (its form), folded away after each run so the results sit under Run.

    One click on the button above them opens them again (see :func:`register_fold`); nothing in them is
    reset by folding, and they are never squeezed into a scroll box of their own.
    """
    return html.Div([html.Button(FOLD_LABELS[False], id=ids.inputs_toggle, className="inputs-toggle", n_clicks=0),
                     html.Div(list(children), id=ids.inputs, className="inputs")], className="inputs-fold")


def headline(ids: Ids) -> html.P:
    """The sentence that says what the page's results mean (see :func:`register_headline`)."""
    return html.P(id=ids.headline, className="headline result-headline")


def summary_table(ids: Ids, **style) -> dash_table.DataTable:
    """The summary table, one row per run; ``style`` adds DataTable keywords (e.g. ``style_table``).

    Every metric column's header shows its catalogue definition on hover (the page's name is its engine's).
    """
    tips = {"tooltip_header": catalogue.engine_header_tooltips(ids.page), "tooltip_delay": 200,
            "tooltip_duration": None} if ids.page in catalogue.ENGINES else {}
    return dash_table.DataTable(id=ids.summary, data=[], columns=[], style_cell={"fontFamily": "inherit"},
                                **{**tips, **style})


def axis_tooltips(engine: str | None) -> html.Div:
    """The definitions ``assets/axis_tooltips.js`` puts on chart axis titles that name a metric (hidden)."""
    return html.Div(hidden=True, className="axis-tooltips",
                    **{"data-tooltips": json.dumps(catalogue.axis_tooltips(engine), ensure_ascii=False)})


def export_row(ids: Ids, frames: Sequence[str], labels: dict[str, str] | None = None, before: Sequence = ()) -> html.Div:
    """A button per export (``<frame>.csv`` unless ``labels`` names it), after the components ``before``."""
    labels = labels or {}
    return html.Div([*before, *[html.Button(labels.get(frame, f"{frame}.csv"), id=ids.export_button(frame))
                                for frame in frames]], className="button-row export")


def download(ids: Ids) -> dcc.Download:
    return dcc.Download(id=ids.download)


def summary_columns(rows: list[dict], markdown: Sequence[str] = ()) -> list[dict]:
    """The summary table's columns for ``rows``; the ``markdown`` ones render links (e.g. a permalink)."""
    return [{"name": key, "id": key, **({"presentation": "markdown"} if key in markdown else {})}
            for key in (rows[0] if rows else {})]


# ---- callbacks ----------------------------------------------------------------------------------


def register(app, ids: Ids, results, plan: Callable[..., list[Planned]], states: Sequence[State], *,
             noun: str = "run", timed: bool = True, refused_note: str = "") -> None:
    """Wire the panel: the background run of ``plan`` over the ``states``' values, and Cancel's feedback.

    ``results`` is the app's :class:`~components.services.runs.ResultCache`;
    ``noun``, ``timed`` and ``refused_note`` shape the message (see :func:`on_run`).
    """
    register_cancel_feedback(app, ids)
    register_fold(app, ids)
    briefs.register(app.server, results)   # the brief's routes, once for every page
    app.callback(Output(ids.brief_pdf, "href"), Output(ids.brief_html, "href"), Output(ids.brief_pdf, "className"),
                 Output(ids.brief_html, "className"), Input(ids.runs, "data"))(partial(brief_links, ids.page))

    @app.callback(Output(ids.runs, "data"), Output(ids.message, "children"), Input(ids.run, "n_clicks"), *states,
                  **background_run(ids.run, ids.cancel, ids.progress))
    def _run(set_progress, _clicks, *values):   # a function of its own: Dash names a background job by its source
        return on_run(results, plan, set_progress, values, noun=noun, timed=timed, refused_note=refused_note)


def background_run(run: str, cancel: str, progress: str) -> dict:
    """The keywords of a background callback started by the button ``run``.

    Run and ``cancel`` swap being disabled while it runs, Cancel stops it,
    its progress reports fill the ``progress`` bar, which is empty again
    once it ends (see :data:`EMPTY_PROGRESS`).
    """
    return {"background": True, "interval": POLL_MS,
            "running": [(Output(run, "disabled"), True, False), (Output(cancel, "disabled"), False, True)],
            "cancel": [Input(cancel, "n_clicks")],
            "progress": [Output(progress, "value"), Output(progress, "max")],
            "progress_default": EMPTY_PROGRESS, "prevent_initial_call": True}


def brief_links(page: str, records) -> tuple:
    """The brief's links for the runs in the Store (PDF, HTML), and their classes: greyed out without runs."""
    pdf, html_ = (briefs.page_href(page, records, fmt) for fmt in ("pdf", "html"))
    style = "button brief" if pdf else "button brief disabled"
    return pdf, html_, style, style


def headline_text(results, sentence: Callable[[list], str], records) -> str:
    """The headline of the runs in the Store: ``sentence([(record, result)])``, from the cached results."""
    return sentence(loaded_runs(results, records))


def register_headline(app, ids: Ids, results, sentence: Callable[[list], str]) -> None:
    """Keep the panel's headline in step with its runs; ``sentence`` is one of :mod:`components.figures.headlines`."""
    app.callback(Output(ids.headline, "children"), Input(ids.runs, "data"))(
        partial(headline_text, results, sentence))


def register_fold(app, ids: Ids) -> None:
    """Fold the inputs away when runs arrive (a run, or the page opened on earlier runs); the button flips them.

    In the browser, no round trip: a page's form is never reset by it.
    """
    app.clientside_callback(
        f"""function(records, clicks, current) {{
            const triggered = (window.dash_clientside.callback_context.triggered || []).map(t => t.prop_id);
            const wasFolded = (current || '').includes('folded');
            const folded = triggered.includes('{ids.runs}.data') ? (records || []).length > 0 || wasFolded
                                                                   : !wasFolded;
            const labels = {json.dumps({str(k).lower(): v for k, v in FOLD_LABELS.items()}, ensure_ascii=False)};
            // Opened again: charts and the tree drawn while hidden take their size from the window's resize.
            if (wasFolded && !folded) {{ setTimeout(() => window.dispatchEvent(new Event('resize')), 0); }}
            return [folded ? 'inputs folded' : 'inputs', labels[String(folded)]];
        }}""",
        Output(ids.inputs, "className"), Output(ids.inputs_toggle, "children"),
        Input(ids.runs, "data"), Input(ids.inputs_toggle, "n_clicks"), State(ids.inputs, "className"),
        prevent_initial_call=True,
    )


def register_cancel_feedback(app, ids: Ids) -> None:
    """What Cancel says, in the browser (no round trip).

    Dash stops a cancelled background run but leaves the page as the run
    left it: the progress bar frozen part-way and the message of the run
    before. On Cancel the page says instead how long the run had been going
    and that nothing of it was kept, and the bar goes back to empty. The
    previous results stay on the page (the run never replaced them).
    """
    # When Run is pressed, the button remembers the time (a data-* attribute, read back on Cancel).
    app.clientside_callback(
        "function(clicks) { return clicks ? Date.now() : window.dash_clientside.no_update; }",
        Output(ids.run, "data-started"), Input(ids.run, "n_clicks"), prevent_initial_call=True,
    )
    template = CANCELLED.replace("{seconds}", "' + seconds + '")
    app.clientside_callback(
        f"""function(clicks, started) {{
            if (!clicks) {{ return window.dash_clientside.no_update; }}
            const seconds = started ? Math.max(0, Math.round((Date.now() - started) / 1000)) : 0;
            return ['{template}', '0'];
        }}""",
        Output(ids.message, "children", allow_duplicate=True), Output(ids.progress, "value", allow_duplicate=True),
        Input(ids.cancel, "n_clicks"), State(ids.run, "data-started"), prevent_initial_call=True,
    )
