"""The "Network isolation" page: machines, applications, the paper's four schemes, linked charts.

Data flow: the machine and application tables and a reference to an
uploaded application list live in a browser-local draft Store (an upload
by its stored name ``<sha256>.apps``, never a path); generator settings are
plain controls. Run assembles one network model (see
:mod:`sched_engine.network.model`), checks it -- an error names the table
row, generator field or file line at fault and nothing is replaced -- then
runs one scenario per chosen scheme in a background callback (results
cached by scenario hash) and keeps small run records. Every chart is
rebuilt from the cached frames; zooming a time axis sets the shared window,
clicking an application selects it in every chart, clicking the isolation
chart also sets the instant of the placement view.
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pandas as pd
from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update

from sched_engine import ScenarioError
from sched_engine.network.model import PATTERNS, machine_names, normalize_model
from sched_engine.network.presets import PRESETS, fig6_model
from sched_engine.registry import REGISTRY

from .chart_config import GRAPH_CONFIG
from .figures import network as figures
from .run_feedback import EMPTY_PROGRESS
from .run_feedback import register as register_run_feedback
from .services.csv_export import send_csv
from .services.progress import POLL_MS, throttled
from .services.runs import loaded_runs
from .services.uploads import UploadError, upload_choices
from .widgets.time_window import window_from_relayout

ENGINE = "network"
DRAFT = "network-draft-store"
RUNS = "network-runs-store"
WINDOW = "network-window-store"
PRESET_FIG1 = "network-preset-fig1-button"
PRESET_FIG6 = "network-preset-fig6-button"
MACHINE_MODE = "network-machines-mode-radio"
MACHINE_GEN = "network-machine-generator-input"  # pattern-matching type, keyed by field
MACHINE_GEN_BOX = "network-machine-generator-box"
MACHINES = "network-machines-table"
MACHINES_BOX = "network-machines-table-box"
ADD_MACHINE = "network-add-machine-button"
MACHINES_MSG = "network-machines-message"
APP_MODE = "network-apps-mode-radio"
APP_GEN = "network-app-generator-input"  # pattern-matching type, keyed by field
APP_GEN_BOX = "network-app-generator-box"
ARRIVALS = "network-app-arrivals-radio"
PATTERN = "network-app-pattern-dropdown"
APPS = "network-apps-table"
APPS_BOX = "network-apps-table-box"
ADD_APP = "network-add-app-button"
APPS_UPLOAD = "network-apps-upload"
APPS_CHOICE = "network-apps-choice-dropdown"
UPLOAD_BOX = "network-apps-upload-box"
APPS_MSG = "network-apps-message"
SCHEMES = "network-schemes-checklist"
PLACEMENT = "network-placement-radio"
SEED = "network-seed-input"
RUN = "network-run-button"
CANCEL = "network-cancel-button"
PROGRESS = "network-run-progress"
RUN_MSG = "network-run-message"
DETAIL_SCHEME = "network-detail-scheme-dropdown"
APP = "network-selected-app-dropdown"
INSTANT = "network-instant-input"
WINDOW_MSG = "network-window-message"
RESET_WINDOW = "network-reset-window-button"
ISOLATION = "network-isolation-graph"
CDF = "network-cdf-graph"
DURATIONS = "network-durations-graph"
HEATMAP = "network-heatmap-graph"
PLACEMENT_VIEW = "network-placement-graph"
SUMMARY = "network-summary-table"
EXPORT_BUTTONS = "network-export-button"  # pattern-matching type, keyed by frame
DOWNLOAD = "network-download"

FIG1, FIG6 = "Libra Fig. 1 example", "Libra Fig. 6, 512 machines"
FIG6_PAGE_APPS = 30
MACHINE_COLUMNS = ("name", "count", "cpu", "ram", "uplink", "downlink")
APP_COLUMNS = ("name", "arrival", "pattern", "volume", "weight", "count", "cpu", "ram", "downlink", "uplink")
APP_TEXT_COLUMNS = ("name", "pattern")
MACHINE_GEN_FIELDS = (("count", "Machines"), ("cpu", "Cores each"), ("ram", "RAM (GB) each"),
                      ("uplink", "Uplink (Gbps)"), ("downlink", "Downlink (Gbps)"))
APP_GEN_FIELDS = (("count", "Applications"), ("mean_interval", "Mean gap between arrivals (s)"),
                  ("width", "Width (containers)"), ("volume", "Data per flow (Gb)"), ("weight", "Weight (0, 1]"),
                  ("cpu", "Cores per container"), ("ram", "RAM (GB) per container"),
                  ("downlink", "Downlink demand (Gbps)"), ("uplink", "Uplink demand (Gbps)"))
PLACEMENTS = {"paper": "as in the paper (Libra for Libra, round-robin otherwise)",
              "round-robin": "round-robin for all", "libra": "Libra placement for all"}
FRAMES = ("jobs", "timeline", "summary")
DEFAULT_MACHINE_GEN = {"count": 16, "cpu": 8, "ram": 16, "uplink": 1, "downlink": 1}
DEFAULT_APP_GEN = {"count": 12, "mean_interval": 0.5, "width": 8, "volume": 0.5, "weight": 1,
                   "cpu": 1, "ram": 1, "downlink": 0.5, "uplink": 0.5}
UNBOUNDED_MACHINE = {"name": "any", "cpu": 1e300, "ram": 1e300, "uplink": 1, "downlink": 1}
FIELD_PATH = re.compile(r"^(machines|applications)\[(\d+)\](?:\.containers\[(\d+)\])?\.?(.*)$")


# ---- set-ups: tables, generators, presets ------------------------------------------------------


def machine_rows(groups: list[dict]) -> list[dict]:
    return [{c: group.get(c, 1 if c == "count" else None) for c in MACHINE_COLUMNS} for group in groups]


def app_rows(apps: list[dict]) -> list[dict]:
    """One table row per container group; an application's own fields repeat on each of its rows."""
    return [
        {**{k: app.get(k) for k in ("name", "arrival", "pattern", "volume", "weight")},
         **{k: group.get(k, 1 if k == "count" else None) for k in ("count", "cpu", "ram", "downlink", "uplink")}}
        for app in apps for group in app["containers"]
    ]


def _cell(value, where: str, column: str):
    """A number typed into a table or read from CSV; blanks are ``None`` (the model's default applies)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        raise ScenarioError(f"{where}, {column}", f"must be a number, got {value!r}") from None


def _blank(row: dict, columns) -> bool:
    return not any(str(row.get(c) if row.get(c) is not None else "").strip() for c in columns)


def machines_from_rows(rows: list[dict]) -> tuple[list[dict], list[int]]:
    """Machine groups from table rows and each group's row number; a bad cell names row and column."""
    groups, numbers = [], []
    for number, row in enumerate(rows or [], start=1):
        if _blank(row, MACHINE_COLUMNS):
            continue
        where = f"machines row {number}"
        group = {c: _cell(row.get(c), where, c) for c in MACHINE_COLUMNS if c != "name"}
        groups.append({"name": str(row.get("name") or "").strip(), **{k: v for k, v in group.items() if v is not None}})
        numbers.append(number)
    return groups, numbers


def apps_from_rows(rows: list[tuple[int, dict]], where: str) -> tuple[list[dict], dict]:
    """Applications from numbered rows (rows sharing a name are one application's container groups).

    Returns ``(applications, origin)`` where ``origin[(app, group)]`` is the
    row or line number a container group came from; ``where`` is the
    prefix of error locations ("applications row" or "line").
    """
    apps, origin, index = [], {}, {}
    for number, row in rows:
        if _blank(row, APP_COLUMNS):
            continue
        name = str(row.get("name") or "").strip()
        numbers = {c: _cell(row.get(c), f"{where} {number}", c) for c in APP_COLUMNS if c not in APP_TEXT_COLUMNS}
        group = {k: numbers[k] for k in ("count", "cpu", "ram", "downlink", "uplink") if numbers[k] is not None}
        if name not in index:
            index[name] = len(apps)
            app = {"name": name, "pattern": str(row.get("pattern") or "").strip() or "all-to-all", "containers": []}
            app.update({k: numbers[k] for k in ("arrival", "volume", "weight") if numbers[k] is not None})
            apps.append(app)
        app_index = index[name]
        origin[(app_index, len(apps[app_index]["containers"]))] = number
        apps[app_index]["containers"].append(group)
    return apps, origin


def read_app_list(data: bytes, label: str) -> tuple[list[dict], dict]:
    """An uploaded application list: JSON (a list of applications, or ``{"applications": [...]}``) or CSV.

    CSV has a header row with the application table's columns, one row per
    container group. Returns ``(applications, origin)`` as
    :func:`apps_from_rows`, line numbers for CSV (an empty origin for JSON,
    whose errors name the field path). Raises :class:`ScenarioError`.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScenarioError("", "not a UTF-8 text file", source=label) from None
    if text.lstrip()[:1] in ("[", "{"):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError("", f"not valid JSON ({exc.msg})", source=label, line=exc.lineno) from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise ScenarioError("", f"not valid JSON ({exc})", source=label) from None
        apps = loaded.get("applications") if isinstance(loaded, dict) else loaded
        if not isinstance(apps, list) or not apps:
            raise ScenarioError("applications", "expected a non-empty list of applications", source=label)
        return apps, {}
    reader = csv.DictReader(io.StringIO(text))
    try:
        fieldnames = reader.fieldnames or ()
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:  # a line the csv module cannot split
        raise ScenarioError("", f"not readable as CSV ({exc})", source=label, line=max(reader.line_num, 1)) from None
    unknown = sorted(set(fieldnames) - set(APP_COLUMNS))
    if not fieldnames or "name" not in fieldnames or unknown:
        raise ScenarioError("header", f"columns must be among {', '.join(APP_COLUMNS)} and include name"
                            + (f"; unknown: {', '.join(unknown)}" if unknown else ""), source=label, line=1)
    try:
        apps, origin = apps_from_rows(rows, "line")
    except ScenarioError as exc:
        line, _, column = exc.field.partition(", ")
        raise ScenarioError(column, exc.message, source=label, line=int(line.split()[-1])) from None
    if not apps:
        raise ScenarioError("", "the file lists no applications", source=label)
    return apps, origin


def check_app_list(apps: list[dict], origin: dict, label: str) -> None:
    """Check an uploaded list on its own (fields, patterns, numbers); fit on the machines is checked at Run."""
    try:
        normalize_model({"machines": [UNBOUNDED_MACHINE], "applications": apps})
    except ScenarioError as exc:
        raise ui_error(exc, None, origin, label) from None


def ui_error(exc: ScenarioError, machine_rows_at: list[int] | None, origin: dict | None, upload: str | None):
    """Rename a model error after what the person edited: table row, generator field or file line.

    ``machine_rows_at``: table row number per machine group (``None`` when
    the machine generator is used); ``origin``: row or line per container
    group (``None`` when the application generator is used); ``upload``:
    the uploaded file's name when applications come from a file.
    """
    if exc.source:
        return exc
    if exc.field.startswith("generate"):
        rest = exc.field.removeprefix("generate").lstrip(".").removeprefix("container.")
        return ScenarioError(f"application generator, {rest}" if rest else "application generator", exc.message)
    match = FIELD_PATH.match(exc.field)
    if not match:
        return ScenarioError(exc.field, exc.message, source=upload) if upload else exc
    kind, item, group, rest = match.group(1), int(match.group(2)), match.group(3), match.group(4)
    if kind == "machines":
        place = "machine generator" if machine_rows_at is None else f"machines row {machine_rows_at[item]}"
        return ScenarioError(f"{place}, {rest}" if rest else place, exc.message)
    number = (origin or {}).get((item, int(group or 0)))
    rest = rest or ("containers" if group is None else "")
    if upload:
        return ScenarioError(rest if number else exc.field, exc.message, source=upload, line=number)
    place = f"applications row {number}" if number else f"application {item + 1}"
    return ScenarioError(f"{place}, {rest}" if rest else place, exc.message)


def generated_apps(settings: dict) -> tuple[dict | None, list[dict]]:
    """The generator's applications: Poisson arrivals as the model's ``generate`` block, periodic ones listed."""
    gen = settings["app_gen"]
    container = {k: gen.get(k) for k in ("cpu", "ram", "downlink", "uplink")}
    common = {"pattern": settings.get("pattern"), "volume": gen.get("volume"), "weight": gen.get("weight")}
    if settings.get("arrivals") != "periodic":
        return {"count": gen.get("count"), "mean_interval": gen.get("mean_interval"), "width": gen.get("width"),
                "container": container, **common}, []
    count, gap = gen.get("count"), gen.get("mean_interval")
    if not isinstance(count, int) or count < 1:
        raise ScenarioError("application generator, count", f"must be a whole number ≥ 1, got {count!r}")
    if not isinstance(gap, (int, float)) or gap < 0:
        raise ScenarioError("application generator, mean_interval", f"must be a number ≥ 0, got {gap!r}")
    digits = len(str(count))
    return None, [{"name": f"app-{i + 1:0{digits}d}", "arrival": i * gap, **common,
                   "containers": [{"count": gen.get("width"), **container}]} for i in range(count)]


def build_model(settings: dict, draft: dict, uploads) -> dict:
    """The checked network model of the page's set-up; raises :class:`ScenarioError` named for the page.

    ``settings``: ``machine_mode`` (generate|table), ``machine_gen``,
    ``app_mode`` (generate|table|upload), ``app_gen``, ``arrivals``
    (poisson|periodic), ``pattern``.
    """
    if settings["machine_mode"] == "table":
        machines, rows_at = machines_from_rows(draft["machines"])
    else:
        machines, rows_at = [{"name": "M", **settings["machine_gen"]}], None
    generate, apps, origin, upload = None, [], None, None
    if settings["app_mode"] == "table":
        apps, origin = apps_from_rows(list(enumerate(draft["apps"], start=1)), "applications row")
    elif settings["app_mode"] == "upload":
        ref = draft.get("upload")
        if not ref:
            raise ScenarioError("applications", "upload an application list first, or choose the table or generator")
        try:
            data = uploads.path_of(ref["name"]).read_bytes()
        except UploadError as exc:
            raise ScenarioError("applications", f"{ref['label']}: {exc}") from None
        apps, origin = read_app_list(data, ref["label"])
        upload = ref["label"]
    else:
        generate, apps = generated_apps(settings)
    try:
        return normalize_model({"machines": machines, "applications": apps, "generate": generate})
    except ScenarioError as exc:
        raise ui_error(exc, rows_at, origin, upload) from None


def settings_from_model(model: dict) -> dict:
    """Page controls and draft tables showing a model (one machine group of several -> the generator)."""
    groups, gen = model["machines"], model["generate"]
    one_group = len(groups) == 1 and groups[0]["count"] > 1
    machine_gen = {k: groups[0][k] for k, _ in MACHINE_GEN_FIELDS} if one_group else dict(DEFAULT_MACHINE_GEN)
    if gen:
        app_gen = {**{k: gen[k] for k in ("count", "mean_interval", "width", "volume", "weight")}, **gen["container"]}
    else:
        app_gen = dict(DEFAULT_APP_GEN)
    return {
        "machine_mode": "generate" if one_group else "table", "machine_gen": machine_gen,
        "machines": [] if one_group else machine_rows(groups),
        "app_mode": "generate" if gen else "table", "app_gen": app_gen, "arrivals": "poisson",
        "pattern": gen["pattern"] if gen else "many-to-many", "apps": app_rows(model["applications"]),
    }



def preset_model(name: str) -> dict:
    """A preset button's model; Fig. 6 keeps :data:`FIG6_PAGE_APPS` applications so it runs in seconds."""
    return fig6_model(count=FIG6_PAGE_APPS) if name == FIG6 else PRESETS[name]["model"]()


def preset_params(model: dict) -> dict:
    """The ``policy_params`` of the preset whose model ``model`` is (e.g. Fig. 1's candidate set), else ``{}``.

    A run carries a preset's parameters only while the set-up is still the
    preset's: once the person edits a machine or an application, it is their
    own set-up and runs with the registry's defaults.
    """
    for name in PRESETS:
        if normalize_model(preset_model(name)) == model:
            return dict(PRESETS[name]["policy_params"])
    return {}


def preset(name: str) -> dict:
    """Settings of a preset button (see :func:`preset_model`)."""
    model = preset_model(name)
    return {**settings_from_model(model), "schemes": [p["value"] for p in REGISTRY.options(ENGINE)],
            "placement": "paper", "seed": PRESETS[name]["seed"]}


def initial_draft() -> dict:
    settings = preset(FIG1)
    return {"machines": settings["machines"], "apps": settings["apps"], "upload": None}


# ---- runs and their records ---------------------------------------------------------------------


def scheme_label(policy: str, placement: str) -> str:
    label = REGISTRY.policy(ENGINE, policy).label
    return label if placement == "paper" else f"{label} · {placement} placement"


def run_schemes(results, model: dict, schemes: list[str], placement: str, seed, report) -> tuple[list[dict], str]:
    """Run the model under every chosen scheme; returns ``(run records, message)``."""
    if not schemes:
        raise ScenarioError("schemes", "choose at least one of baseline, DRF, HUG, Libra")
    params = preset_params(model) | ({} if placement == "paper" else {"placement": placement})
    records = []
    total = 100 * len(schemes)
    for index, policy in enumerate(schemes):
        scenario = {"engine": ENGINE, "policy": policy, "policy_params": params, "model": model, "seed": int(seed or 0)}
        result, cached = results.run(scenario, progress=lambda f, i=index: report(int(100 * (i + f)), total))
        records.append({"policy": policy, "label": scheme_label(policy, placement), "hash": result.scenario_hash,
                        "cached": cached, "wall_seconds": result.wall_seconds})
        report(100 * (index + 1), total)
    fresh = sum(not r["cached"] for r in records)
    wall = sum(r["wall_seconds"] for r in records if not r["cached"])
    return records, f"{len(records)} scheme(s): {fresh} simulated in {wall:.1f} s, {len(records) - fresh} from the cache."


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)``: the paper's quantities (isolation, duration, utilisation)."""
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({
            "scheme": record["label"], "applications": int(value("applications")),
            "finished": int(value("finished")), "waiting": int(value("waiting")),
            "mean isolation": round(value("mean_isolation"), 3), "min isolation": round(value("min_isolation"), 3),
            "mean duration (s)": round(value("mean_duration_s"), 3), "mean wait (s)": round(value("mean_wait_s"), 3),
            "link utilisation": round(value("link_utilisation"), 3), "makespan (s)": round(value("makespan_s"), 3),
            "wall (s)": round(record["wall_seconds"], 2), "source": "cached" if record["cached"] else "simulated",
        })
    return rows


def busiest_instant(timeline: pd.DataFrame) -> float:
    """The first time the most applications were running (the placement view's default instant)."""
    running = timeline[(timeline["entity"] == "cluster") & (timeline["metric"] == "running_apps")]
    if running.empty:
        return 0.0
    return float(running["time"].to_numpy()[int(np.argmax(running["value"].to_numpy()))])


def clicked_app(click: dict | None):
    """The application a chart click landed on (its ``customdata``), or ``no_update``."""
    points = (click or {}).get("points") or []
    name = points[0].get("customdata") if points else None
    return name if isinstance(name, str) else no_update


def cluster_machines(result) -> list[str]:
    """Machine names of a result's cluster, in index order (the heatmap's and placement view's rows)."""
    return machine_names(result.scenario["model"]["machines"])


# ---- chart outputs (what the callbacks send) ----------------------------------------------------


def summary_outputs(loaded, chosen: str | None) -> tuple:
    """Summary rows and columns, scheme choices and the chosen one, application choices, default instant."""
    rows = summary_rows(loaded)
    labels = [r["label"] for r, _ in loaded]
    value = chosen if chosen in labels else (labels[-1] if labels else None)
    apps = list(loaded[0][1].jobs["job_id"]) if loaded else []
    instant = busiest_instant(_scheme(loaded, value).timeline) if loaded else None
    return rows, [{"name": k, "id": k} for k in (rows[0] if rows else {})], labels, value, apps, instant


def compare_outputs(loaded, selected: str | None, window) -> tuple:
    """The charts comparing schemes (isolation over time, its CDF, durations) and the window's note."""
    note = "whole run" if not window else f"window {window[0]:.3f}–{window[1]:.3f} s"
    return (figures.isolation_over_time([(r["label"], res.jobs, res.timeline) for r, res in loaded], selected,
                                        window),
            figures.isolation_cdf([(r["label"], res.jobs) for r, res in loaded], selected, window),
            figures.durations([(r["label"], res.jobs) for r, res in loaded], selected, window), note)


def _scheme(loaded, label: str | None):
    """The result of the scheme labelled ``label`` (None if it is not loaded)."""
    return {r["label"]: res for r, res in loaded}.get(label)


def heatmap_figure(loaded, label: str | None, selected: str | None, window):
    """Link utilisation of the scheme ``label`` (an empty figure when it is not loaded)."""
    result = _scheme(loaded, label)
    if result is None:
        empty = pd.DataFrame({"time": [], "entity": [], "metric": [], "value": []})
        return figures.utilisation_heatmap(empty, pd.DataFrame(), [])
    return figures.utilisation_heatmap(result.timeline, result.jobs, cluster_machines(result), label, selected,
                                       window)


def placement_figure(loaded, label: str | None, selected: str | None, instant):
    """Containers per machine of the scheme ``label`` at ``instant`` (default: the busiest instant)."""
    result = _scheme(loaded, label)
    if result is None:
        return figures.placement_at(pd.DataFrame({"start_time": [], "end_time": []}), [], 0.0)
    at = busiest_instant(result.timeline) if instant is None else float(instant)
    return figures.placement_at(result.jobs, cluster_machines(result), at, label, selected)


# ---- layout ------------------------------------------------------------------------------------


def _error(text) -> html.Span:
    return html.Span(str(text), className="error")


def _field(label, component, hint=None):
    children = [html.Span(label), component]
    if hint:
        children.append(html.Small(hint, className="hint"))
    return html.Label(children, className="field")


def _table(component_id, columns, text_columns):
    return dash_table.DataTable(
        id=component_id, data=[], editable=True, row_deletable=True, page_size=10,
        columns=[{"name": c, "id": c, "type": "text" if c in text_columns else "numeric"} for c in columns],
        style_table={"overflowX": "auto"}, style_cell={"fontFamily": "inherit", "padding": "3px", "minWidth": "48px"},
    )


def _graph(component_id):
    return dcc.Graph(id=component_id, config=GRAPH_CONFIG)


def layout() -> html.Div:
    start = preset(FIG1)
    return html.Div(
        [
            dcc.Store(id=DRAFT, storage_type="local", data=initial_draft()),
            dcc.Store(id=RUNS, storage_type="local", data=[]),
            dcc.Store(id=WINDOW, data=None),
            dcc.Download(id=DOWNLOAD),
            html.Div(
                [
                    html.H2("Network isolation"),
                    html.P("Container placement and access-link bandwidth allocation: Libra against per-flow "
                           "fairness, DRF and HUG (Ma et al.). Isolation guarantee = the least progress any "
                           "container of an application makes (Eq. 1)."),
                    html.Button(FIG1, id=PRESET_FIG1, className="preset"),
                    html.Button(FIG6, id=PRESET_FIG6, className="preset",
                                title=f"{FIG6_PAGE_APPS} applications instead of the paper's 100, to run in seconds"),
                ],
                className="page-head",
            ),
            html.Div(
                [
                    html.Section(
                        [
                            html.H3("Machines"),
                            dcc.RadioItems(id=MACHINE_MODE, value=start["machine_mode"], persistence=True,
                                           options=[{"label": "N identical machines", "value": "generate"},
                                                    {"label": "table", "value": "table"}],
                                           className="checklist inline"),
                            html.Div([_field(label, dcc.Input(id={"type": MACHINE_GEN, "name": name}, type="number",
                                                              value=start["machine_gen"][name], persistence=True))
                                      for name, label in MACHINE_GEN_FIELDS],
                                     id=MACHINE_GEN_BOX, className="field-grid"),
                            html.Div([_table(MACHINES, MACHINE_COLUMNS, ("name",)),
                                      html.Div([html.Button("Add machine group", id=ADD_MACHINE)],
                                               className="button-row"),
                                      html.P("A group of count > 1 is named name1 … nameN. Bandwidth in Gbps.",
                                             className="hint")],
                                     id=MACHINES_BOX),
                            html.Div(id=MACHINES_MSG, className="message"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Applications"),
                            dcc.RadioItems(id=APP_MODE, value=start["app_mode"], persistence=True,
                                           options=[{"label": "generate", "value": "generate"},
                                                    {"label": "table", "value": "table"},
                                                    {"label": "uploaded list", "value": "upload"}],
                                           className="checklist inline"),
                            html.Div(
                                [_field("Arrival process", dcc.RadioItems(
                                    id=ARRIVALS, value=start["arrivals"], persistence=True, className="checklist inline",
                                    options=[{"label": "Poisson", "value": "poisson"},
                                             {"label": "periodic", "value": "periodic"}])),
                                 _field("Communication pattern", dcc.Dropdown(
                                     id=PATTERN, options=[{"label": k, "value": k, "title": v} for k, v in PATTERNS.items()],
                                     value=start["pattern"], clearable=False, persistence=True))]
                                + [_field(label, dcc.Input(id={"type": APP_GEN, "name": name}, type="number",
                                                           value=start["app_gen"][name], persistence=True))
                                   for name, label in APP_GEN_FIELDS],
                                id=APP_GEN_BOX, className="field-grid",
                            ),
                            html.Div([_table(APPS, APP_COLUMNS, APP_TEXT_COLUMNS),
                                      html.Div([html.Button("Add application", id=ADD_APP)], className="button-row"),
                                      html.P("Rows with the same name are one application's container groups. "
                                             f"Patterns: {', '.join(PATTERNS)}.", className="hint")],
                                     id=APPS_BOX),
                            html.Div([dcc.Upload(id=APPS_UPLOAD, multiple=False, className="upload-box",
                                                 children=html.Div(["Upload an application list: CSV (the table's "
                                                                    "columns) or JSON", html.Br(),
                                                                    html.Small("drag and drop or click")])),
                                      dcc.Dropdown(id=APPS_CHOICE, options=[], value=None,
                                                   placeholder="or open a list uploaded earlier")],
                                     id=UPLOAD_BOX),
                            html.Div(id=APPS_MSG, className="message"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Schemes"),
                            dcc.Checklist(id=SCHEMES, options=REGISTRY.options(ENGINE), value=start["schemes"],
                                          className="checklist", persistence=True),
                            _field("Placement", dcc.RadioItems(
                                id=PLACEMENT, value="paper", persistence=True, className="checklist",
                                options=[{"label": v, "value": k} for k, v in PLACEMENTS.items()])),
                            _field("Seed (Poisson arrivals, round-robin start)",
                                   dcc.Input(id=SEED, type="number", min=0, step=1, value=start["seed"],
                                             persistence=True)),
                            html.Div([html.Button("Run", id=RUN, className="primary"),
                                      html.Button("Cancel", id=CANCEL, disabled=True)], className="button-row"),
                            html.Progress(id=PROGRESS, value="0", max="100"),
                            html.Div(id=RUN_MSG, className="message"),
                            html.P(f"The Fig. 6 preset generates {FIG6_PAGE_APPS} applications (the paper: 100) so "
                                   "it runs in seconds here; raise the count for the full set-up.", className="hint"),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid",
            ),
            html.Section(
                [
                    html.H3("Schemes compared"),
                    dash_table.DataTable(id=SUMMARY, data=[], columns=[], sort_action="native",
                                         style_cell={"fontFamily": "inherit"}, style_table={"overflowX": "auto"}),
                    html.Div([html.Span("Export the scheme shown below:", className="hint")]
                             + [html.Button(f"{name}.csv", id={"type": EXPORT_BUTTONS, "frame": name})
                                for name in FRAMES]
                             + [html.Button("schemes.csv", id={"type": EXPORT_BUTTONS, "frame": "schemes"})],
                             className="button-row export"),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.Div(
                        [_field("Scheme (heatmap, placement)", dcc.Dropdown(id=DETAIL_SCHEME, clearable=False,
                                                                           className="narrow")),
                         _field("Application (click any chart)", dcc.Dropdown(id=APP, className="narrow",
                                                                              placeholder="none selected")),
                         _field("Instant (s)", dcc.Input(id=INSTANT, type="number", value=None, debounce=True, style={"width": "8rem"})),
                         html.Span(id=WINDOW_MSG, className="hint"),
                         html.Button("Whole run", id=RESET_WINDOW)],
                        className="button-row",
                    ),
                    html.P("Zoom a time axis to set the window for every chart; click an application to select it "
                           "everywhere; a click on the isolation chart also sets the instant of the placement view.",
                           className="hint"),
                    _graph(ISOLATION),
                    html.Div([_graph(CDF), _graph(DURATIONS)], className="two-graphs"),
                    html.Div([_graph(HEATMAP), _graph(PLACEMENT_VIEW)], className="two-graphs"),
                ],
                className="panel",
            ),
        ],
        className="network-page",
    )


# ---- callbacks (thin: the logic is above) --------------------------------------------------------


def edit_draft(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Apply one input action; returns the outputs that change, by name.

    Names: ``draft``, ``machines`` and ``apps`` (table rows),
    ``machines_msg``, ``apps_msg``, ``settings`` (a preset's control
    values). A bad upload leaves the draft as it was and says why.
    """
    if trigger in (PRESET_FIG1, PRESET_FIG6):
        settings = preset(FIG1 if trigger == PRESET_FIG1 else FIG6)
        # A preset that uses a generator keeps the table the person may have typed.
        new = {**draft, **{k: settings[k] for k in ("machines", "apps") if settings[k]}}
        return {"draft": new, "machines": new["machines"], "apps": new["apps"], "settings": settings,
                "machines_msg": "", "apps_msg": ""}
    if trigger == ADD_MACHINE:
        rows = [*payload["machines"], {"name": f"G{len(payload['machines']) + 1}", "count": 1, "cpu": 8, "ram": 16,
                                       "uplink": 1, "downlink": 1}]
        return {"draft": {**draft, "machines": rows}, "machines": rows}
    if trigger == ADD_APP:
        rows = [*payload["apps"], {"name": f"A{len(payload['apps']) + 1}", "arrival": 0, "pattern": "all-to-all",
                                   "volume": 1, "weight": 1, "count": 2, "cpu": 1, "ram": 1, "downlink": 0.5,
                                   "uplink": 0.5}]
        return {"draft": {**draft, "apps": rows}, "apps": rows}
    if trigger == MACHINES:
        try:
            machines_from_rows(payload["machines"])
        except ScenarioError as exc:
            return {"draft": {**draft, "machines": payload["machines"]}, "machines_msg": _error(exc)}
        return {"draft": {**draft, "machines": payload["machines"]}, "machines_msg": ""}
    if trigger == APPS:
        try:
            apps_from_rows(list(enumerate(payload["apps"], start=1)), "applications row")
        except ScenarioError as exc:
            return {"draft": {**draft, "apps": payload["apps"]}, "apps_msg": _error(exc)}
        return {"draft": {**draft, "apps": payload["apps"]}, "apps_msg": ""}
    if trigger in (APPS_UPLOAD, APPS_CHOICE):
        if trigger == APPS_UPLOAD and payload.get("contents"):
            name = payload.get("filename") or "upload"
            store = lambda: uploads.save_data_url(payload["contents"], "apps", name)  # noqa: E731
        elif trigger == APPS_CHOICE and payload.get("choice"):
            name = next((e["label"] for e in uploads.listing() if e["name"] == payload["choice"]), "upload")
            store = lambda: uploads.path_of(payload["choice"])  # noqa: E731
        else:
            return {}
        try:
            path = store()
            apps, origin = read_app_list(path.read_bytes(), name)
            check_app_list(apps, origin, name)
        except (ScenarioError, UploadError) as exc:
            return {"apps_msg": _error(f"{name} not loaded: {str(exc).rstrip('.')}. The previous applications stay.")}
        width = sum(int(c.get("count", 1)) for app in apps for c in app["containers"])
        return {"draft": {**draft, "upload": {"name": path.name, "label": name, "count": len(apps)}},
                "apps_msg": html.Span(f"Loaded {len(apps)} applications ({width} containers) from {name}; "
                                      "choose 'uploaded list' to use them.", className="ok")}
    return {}


def app_list_choices(uploads) -> list[dict]:
    """Application lists uploaded earlier (the workspace), newest first."""
    return upload_choices(uploads, "apps")


def register_callbacks(app, results, uploads) -> None:
    """Wire the page; ``results`` is the app's ResultCache, ``uploads`` its UploadStore."""
    register_run_feedback(app, RUN, CANCEL, PROGRESS, RUN_MSG)

    names = ("draft", "machines", "apps", "machines_msg", "apps_msg")
    preset_keys = ("machine_mode", "app_mode", "arrivals", "pattern", "schemes", "placement", "seed")

    @app.callback(
        Output(DRAFT, "data"), Output(MACHINES, "data"), Output(APPS, "data"), Output(MACHINES_MSG, "children"),
        Output(APPS_MSG, "children"),
        Output(MACHINE_MODE, "value"), Output(APP_MODE, "value"), Output(ARRIVALS, "value"), Output(PATTERN, "value"),
        Output(SCHEMES, "value"), Output(PLACEMENT, "value"), Output(SEED, "value"),
        Output({"type": MACHINE_GEN, "name": ALL}, "value"), Output({"type": APP_GEN, "name": ALL}, "value"),
        Input(PRESET_FIG1, "n_clicks"), Input(PRESET_FIG6, "n_clicks"), Input(ADD_MACHINE, "n_clicks"),
        Input(ADD_APP, "n_clicks"), Input(MACHINES, "data_timestamp"), Input(APPS, "data_timestamp"),
        Input(APPS_UPLOAD, "contents"), Input(APPS_CHOICE, "value"),
        State(APPS_UPLOAD, "filename"), State(MACHINES, "data"), State(APPS, "data"), State(DRAFT, "data"),
        prevent_initial_call=True,
    )
    def _edit(_f1, _f6, _am, _aa, _mt, _at, contents, choice, filename, machines, apps, draft):
        payload = {"contents": contents, "filename": filename, "machines": machines or [], "apps": apps or [],
                   "choice": choice}
        out = edit_draft(ctx.triggered_id, draft, payload, uploads)
        settings = out.get("settings")
        if not settings:
            return (*[out.get(n, no_update) for n in names], *[no_update] * len(preset_keys),
                    [no_update] * len(MACHINE_GEN_FIELDS), [no_update] * len(APP_GEN_FIELDS))
        return (*[out.get(n, no_update) for n in names], *[settings[k] for k in preset_keys],
                [settings["machine_gen"][k] for k, _ in MACHINE_GEN_FIELDS],
                [settings["app_gen"][k] for k, _ in APP_GEN_FIELDS])

    @app.callback(Output(APPS_CHOICE, "options"), Input(APPS_CHOICE, "id"), Input(DRAFT, "data"))
    def _app_list_choices(_, __):
        return app_list_choices(uploads)

    @app.callback(Output(MACHINES, "data", allow_duplicate=True), Output(APPS, "data", allow_duplicate=True),
                  Input(MACHINES, "id"), State(DRAFT, "data"), prevent_initial_call="initial_duplicate")
    def _rows(_, draft):
        return draft["machines"], draft["apps"]

    @app.callback(Output(MACHINE_GEN_BOX, "style"), Output(MACHINES_BOX, "style"), Output(APP_GEN_BOX, "style"),
                  Output(APPS_BOX, "style"), Output(UPLOAD_BOX, "style"),
                  Input(MACHINE_MODE, "value"), Input(APP_MODE, "value"))
    def _modes(machine_mode, app_mode):
        def shown(flag):
            return {} if flag else {"display": "none"}
        return (shown(machine_mode == "generate"), shown(machine_mode == "table"), shown(app_mode == "generate"),
                shown(app_mode == "table"), shown(app_mode == "upload"))

    @app.callback(
        Output(RUNS, "data"), Output(RUN_MSG, "children"),
        Input(RUN, "n_clicks"),
        State(DRAFT, "data"), State(MACHINE_MODE, "value"), State(APP_MODE, "value"), State(ARRIVALS, "value"),
        State(PATTERN, "value"), State({"type": MACHINE_GEN, "name": ALL}, "value"),
        State({"type": APP_GEN, "name": ALL}, "value"), State(SCHEMES, "value"), State(PLACEMENT, "value"),
        State(SEED, "value"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max")],
        progress_default=EMPTY_PROGRESS,
        prevent_initial_call=True,
    )
    def _run(set_progress, _, draft, machine_mode, app_mode, arrivals, pattern, machine_gen, app_gen, schemes,
             placement, seed):
        settings = {"machine_mode": machine_mode, "app_mode": app_mode, "arrivals": arrivals, "pattern": pattern,
                    "machine_gen": dict(zip([k for k, _ in MACHINE_GEN_FIELDS], machine_gen)),
                    "app_gen": dict(zip([k for k, _ in APP_GEN_FIELDS], app_gen))}
        try:
            model = build_model(settings, draft, uploads)
            records, message = run_schemes(results, model, schemes or [], placement, seed,
                                           throttled(set_progress))
        except ScenarioError as exc:
            return no_update, _error(f"Not run: {exc}. Earlier results stay.")
        return records, html.Span(message, className="ok")

    @app.callback(
        Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Output(DETAIL_SCHEME, "options"),
        Output(DETAIL_SCHEME, "value"), Output(APP, "options"), Output(INSTANT, "value"),
        Input(RUNS, "data"), State(DETAIL_SCHEME, "value"),
    )
    def _summary(records, chosen):
        return summary_outputs(loaded_runs(results, records), chosen)

    @app.callback(
        Output(APP, "value"),
        Input(ISOLATION, "clickData"), Input(CDF, "clickData"), Input(DURATIONS, "clickData"),
        Input(PLACEMENT_VIEW, "clickData"), prevent_initial_call=True,
    )
    def _select(*_clicks):
        return clicked_app(ctx.triggered[0]["value"] if ctx.triggered else None)

    @app.callback(Output(INSTANT, "value", allow_duplicate=True), Input(ISOLATION, "clickData"),
                  prevent_initial_call=True)
    def _instant(click):
        points = (click or {}).get("points") or []
        return round(float(points[0]["x"]), 4) if points else no_update

    @app.callback(
        Output(WINDOW, "data"), Input(ISOLATION, "relayoutData"), Input(HEATMAP, "relayoutData"),
        Input(RESET_WINDOW, "n_clicks"), State(WINDOW, "data"), prevent_initial_call=True,
    )
    def _window(_i, _h, _reset, current):
        if ctx.triggered_id == RESET_WINDOW:
            return None
        relayout = ctx.triggered[0]["value"] if ctx.triggered else None
        return window_from_relayout(relayout, current, decimals=4)   # runs of seconds: to 0.1 ms

    @app.callback(
        Output(ISOLATION, "figure"), Output(CDF, "figure"), Output(DURATIONS, "figure"), Output(WINDOW_MSG, "children"),
        Input(RUNS, "data"), Input(APP, "value"), Input(WINDOW, "data"),
    )
    def _compare(records, selected, window):
        return compare_outputs(loaded_runs(results, records), selected, window)

    @app.callback(
        Output(HEATMAP, "figure"),
        Input(DETAIL_SCHEME, "value"), Input(APP, "value"), Input(WINDOW, "data"), State(RUNS, "data"),
    )
    def _heatmap(label, selected, window, records):
        return heatmap_figure(loaded_runs(results, records), label, selected, window)

    @app.callback(
        Output(PLACEMENT_VIEW, "figure"),
        Input(DETAIL_SCHEME, "value"), Input(APP, "value"), Input(INSTANT, "value"), State(RUNS, "data"),
    )
    def _placement(label, selected, instant, records):
        return placement_figure(loaded_runs(results, records), label, selected, instant)

    @app.callback(
        Output(DOWNLOAD, "data"), Input({"type": EXPORT_BUTTONS, "frame": ALL}, "n_clicks"),
        State(DETAIL_SCHEME, "value"), State(RUNS, "data"), prevent_initial_call=True,
    )
    def _export(clicks, label, records):
        if not any(clicks or []) or not records:
            return no_update
        loaded = loaded_runs(results, records)
        frame = ctx.triggered_id["frame"]
        if frame == "schemes":
            return send_csv(pd.DataFrame(summary_rows(loaded)), "network-schemes.csv")
        chosen = next(((r, res) for r, res in loaded if r["label"] == label), None)
        if chosen is None:
            return no_update
        record, result = chosen
        return send_csv(result.frames()[frame], f"network-{record['policy']}-{frame}.csv")

