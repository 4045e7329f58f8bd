"""The "Batch & failures" page: workload, clusters, failures, a policy × scenario matrix, linked charts.

Data flow: the draft (which workload, failure trace and clusters) lives in a
browser-local Store and refers to files by reference -- a shipped sample by
name or an upload by its stored name ``<sha256>.<kind>`` -- never by a path
the browser could choose. An upload is parsed before it replaces anything:
a bad file gets a message naming its line and field, and the previous
workload and results stay. Run builds one scenario per (scenario kind,
policy, seed), runs them in a background callback (results cached by
scenario hash) and keeps small run records; every chart is rebuilt from the
cached frames. Zooming the time axis of any time chart sets the shared
window for all of them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from dash import ALL, Input, Output, State, ctx, dash_table, dcc, html, no_update
from dash.exceptions import PreventUpdate

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.batch.failures import SYNTHETIC_DEFAULTS
from sched_engine.batch.machine_files import read_failures, read_machines
from sched_engine.batch.model import (
    TRACE_FORMATS,
    cluster_cpus,
    describe_hardware,
    file_sha256,
    header_clusters,
    normalize_clusters,
    workload_for,
)
from sched_engine.batch.traces import TraceError
from sched_engine.registry import REGISTRY

from .chart_config import GRAPH_CONFIG
from .figures import batch as figures
from .figures import gantt
from .run_feedback import EMPTY_PROGRESS
from .run_feedback import register as register_run_feedback
from .services.csv_export import send_csv
from .services.downloads import download_href
from .services.progress import POLL_MS, throttled
from .services.report import html_report
from .services.runs import loaded_runs
from .services.saved_items import CLUSTERS as SAVED_CLUSTERS
from .services.saved_items import clean_name, load_item, save_item, saved_choices
from .services.uploads import UploadError, upload_choices
from .services.workspace import permalink
from .widgets.time_window import window_from_relayout

ENGINE = "batch"
DRAFT = "batch-draft-store"
RUNS = "batch-runs-store"
WINDOW = "batch-window-store"
DRAWN = "batch-drawn-store"
PRESET_COMPLETE = "batch-preset-complete-button"
PRESET_CERIT = "batch-preset-cerit-button"
SAMPLE = "batch-sample-dropdown"
TRACE_UPLOAD = "batch-trace-upload"
FORMAT = "batch-format-dropdown"
SKIP_MALFORMED = "batch-skip-malformed-checklist"
MAX_JOBS = "batch-max-jobs-input"
TRACE_MSG = "batch-trace-message"
TRACE_INFO = "batch-trace-info"
SIZES = "batch-sizes-graph"
CLUSTERS = "batch-clusters-table"
ADD_CLUSTER = "batch-add-cluster-button"
MACHINES_UPLOAD = "batch-machines-upload"
CLUSTERS_MSG = "batch-clusters-message"
HARDWARE = "batch-hardware-statement"
FAILURE_KIND = "batch-failure-kind-radio"
FAILURE_UPLOAD = "batch-failure-upload"
FAILURE_ALIGN = "batch-failure-align-radio"
FAILURE_PARAM = "batch-failure-param-input"  # pattern-matching type, keyed by parameter
FAILURE_MSG = "batch-failure-message"
REQ_SHARE = "batch-synthetic-requirements-input"
LOAD_FACTOR = "batch-load-factor-input"
ESTIMATES = "batch-estimates-radio"
POLICIES = "batch-policies-checklist"
SCENARIOS = "batch-scenarios-checklist"
SEEDS = "batch-seeds-input"
RUN = "batch-run-button"
CANCEL = "batch-cancel-button"
PROGRESS = "batch-run-progress"
RUN_MSG = "batch-run-message"
OBJECTIVES = "batch-objectives-graph"
DETAIL_SCENARIO = "batch-detail-scenario-dropdown"
DETAIL_POLICY = "batch-detail-policy-dropdown"
WINDOW_MSG = "batch-window-message"
RESET_WINDOW = "batch-reset-window-button"
UTILISATION = "batch-utilisation-graph"
QUEUE = "batch-queue-graph"
KILLED = "batch-killed-graph"
WAITS = "batch-waits-graph"
GANTT = "batch-gantt-graph"
SUMMARY = "batch-summary-table"
EXPORT_BUTTONS = "batch-export-button"  # pattern-matching type, keyed by export
FRAME_LINKS = "batch-frame-link"  # pattern-matching type, keyed by frame
DOWNLOAD = "batch-download"
CLUSTER_CHOICE = "batch-cluster-choice-dropdown"
CLUSTERS_NAME = "batch-clusters-name-input"
SAVE_CLUSTERS = "batch-save-clusters-button"
FAILURE_CHOICE = "batch-failure-choice-dropdown"

SCENARIO_KINDS = {
    # name: (machine failures, job requirements) -- Klusáček & Rudová §5
    "BASIC": (False, False),
    "EXT-FAIL": (True, False),
    "EXT-REQ": (False, True),
    "EXT-ALL": (True, True),
}
SAMPLE_TRACES = {
    "hpc2n-excerpt.swf": "sample_traces/hpc2n-excerpt.swf",
    "cerit-sc-2013-slice.swf": "sample_traces/cerit-sc-2013-slice.swf",
}
SAMPLE_MACHINES = {
    "hpc2n-excerpt.machines": "sample_traces/hpc2n-excerpt.machines",
    "metacentrum-2009.machines": "sample_traces/metacentrum-2009.machines",
    "cerit-sc-2013.machines": "sample_traces/cerit-sc-2013.machines",
}
SAMPLE_FAILURES = {"metacentrum-2009.failures": "sample_traces/metacentrum-2009.failures"}
FAILURE_PARAMS = (
    ("afc", "Failures per machine-day (AFC)"),
    ("duration_shape", "Duration Weibull shape"),
    ("duration_scale_s", "Duration Weibull scale (s)"),
    ("interarrival_shape", "Inter-arrival Weibull shape"),
    ("burst_probability", "Burst probability"),
)
FRAMES = ("jobs", "timeline", "summary")
CLUSTER_COLUMNS = ("name", "machines", "cpus_per_machine", "speed", "properties")


def _sample(kind: str, name: str) -> dict:
    return {"source": "sample", "kind": kind, "name": name, "label": name}


def cluster_rows(clusters: list[dict]) -> list[dict]:
    """Table rows for clusters: CPU lists shown as text (``8`` if uniform, else ``8,8,16``), properties comma-joined."""
    rows = []
    for cluster in clusters:
        per = cluster["cpus_per_machine"]
        if isinstance(per, list):
            per = str(per[0]) if len(set(per)) == 1 else ",".join(map(str, per))
        rows.append({"name": cluster["name"], "machines": cluster["machines"], "cpus_per_machine": str(per),
                     "speed": cluster.get("speed", 1.0), "properties": ",".join(cluster.get("properties", []))})
    return rows


def clusters_from_rows(rows: list[dict]) -> list[dict]:
    """Model clusters from table rows; a malformed cell raises :class:`ScenarioError` naming row and column."""
    clusters = []
    for number, row in enumerate(rows or [], start=1):
        if not any(str(row.get(c) or "").strip() for c in CLUSTER_COLUMNS):
            continue   # an empty row being filled in
        where = f"clusters row {number}"
        try:
            machines = int(float(row.get("machines")))
        except (TypeError, ValueError):
            raise ScenarioError(f"{where}, machines", f"must be a whole number, got {row.get('machines')!r}") from None
        text = str(row.get("cpus_per_machine") or "").strip()
        try:
            per = [int(part) for part in text.split(",")] if "," in text else int(float(text))
        except ValueError:
            raise ScenarioError(f"{where}, cpus_per_machine",
                                f"must be a whole number or a comma-separated list, got {text!r}") from None
        try:
            speed = float(row.get("speed") if row.get("speed") not in (None, "") else 1.0)
        except (TypeError, ValueError):
            raise ScenarioError(f"{where}, speed", f"must be a number, got {row.get('speed')!r}") from None
        clusters.append({"name": str(row.get("name") or "").strip(), "machines": machines, "cpus_per_machine": per,
                         "speed": speed, "properties": str(row.get("properties") or "")})
    return normalize_clusters(clusters)


def initial_draft() -> dict:
    """The page's opening set-up: the "Complete data sets" preset, not yet a choice of the user's.

    Its clusters give way to the header's machine of the first trace loaded
    (see :func:`adopt_trace`); clicking the preset makes them a choice.
    """
    return {**preset_draft("complete"), "clusters_chosen": False}


def preset_draft(name: str) -> dict:
    """Draft of a preset: ``complete`` (Klusáček & Rudová's set-up) or ``cerit`` (real requirements)."""
    if name == "complete":
        machines = "metacentrum-2009.machines"
        return {"trace": {**_sample("trace", "hpc2n-excerpt.swf"), "format": "auto", "skip_malformed": False},
                "failure_trace": _sample("failures", "metacentrum-2009.failures"),
                "clusters": cluster_rows(read_machines(Path(SAMPLE_MACHINES[machines]).resolve(), source=machines)),
                "clusters_label": machines, "clusters_chosen": True, "rejected": None}
    machines = "cerit-sc-2013.machines"
    return {"trace": {**_sample("trace", "cerit-sc-2013-slice.swf"), "format": "auto", "skip_malformed": False},
            "failure_trace": _sample("failures", "metacentrum-2009.failures"),
            "clusters": cluster_rows(read_machines(Path(SAMPLE_MACHINES[machines]).resolve(), source=machines)),
            "clusters_label": machines, "clusters_chosen": True, "rejected": None}


# The paper's workload ran at about 43% utilisation (Klusáček & Rudová §3); the HPC2N excerpt's first
# 2,000 jobs on the 806 MetaCentrum CPUs reach it when submitted 4.7 times as fast (10% as logged).
# One seed: at that load Local Search takes seconds per run; the gallery judges the trends over three.
PAPER_LOAD_FACTOR = 4.7

PRESET_SETTINGS = {
    "complete": {"max_jobs": 2000, "failure_kind": "trace", "req_share": 0.5, "load_factor": PAPER_LOAD_FACTOR,
                 "policies": ["fcfs", "easy", "cons", "ls"], "scenarios": list(SCENARIO_KINDS), "seeds": 1},
    "cerit": {"max_jobs": 2000, "failure_kind": "synthetic", "req_share": 0, "load_factor": 1.0,
              "policies": ["fcfs", "easy", "cons", "ls"], "scenarios": ["BASIC", "EXT-REQ"], "seeds": 1},
}
# The settings a preset sets, in the order of the preset outputs of the draft-editing callback.
PRESET_FIELDS = ("max_jobs", "failure_kind", "req_share", "load_factor", "policies", "scenarios", "seeds")


def ref_path(ref: dict, uploads) -> str:
    """The file behind a draft reference: a shipped sample by name, or a stored upload."""
    if ref.get("source") == "sample":
        table = {"trace": SAMPLE_TRACES, "machines": SAMPLE_MACHINES, "failures": SAMPLE_FAILURES}[ref["kind"]]
        if ref.get("name") not in table:
            raise ScenarioError(ref["kind"], f"unknown sample {ref.get('name')!r}")
        return table[ref["name"]]
    try:
        return str(uploads.path_of(ref.get("name")))
    except UploadError as exc:
        raise ScenarioError(ref.get("kind", "upload"), f"{ref.get('label', 'upload')}: {exc}") from None


UPLOADED = "upload:"


def trace_choices(uploads) -> list[dict]:
    """The workload dropdown: shipped samples, then traces uploaded earlier (the workspace), newest first."""
    samples = [{"label": name, "value": name} for name in SAMPLE_TRACES]
    return samples + upload_choices(uploads, "trace", value_prefix=UPLOADED)


def trace_choice_ref(value: str, uploads) -> dict:
    """The draft reference for a dropdown value (a sample name or ``upload:<stored name>``)."""
    if not value.startswith(UPLOADED):
        return _sample("trace", value)
    name = value[len(UPLOADED):]
    label = next((e["label"] for e in uploads.listing() if e["name"] == name), name)
    return {"source": "upload", "kind": "trace", "name": name, "label": label}


SAMPLE_PREFIX = "sample:"


def cluster_choices(uploads) -> list[dict]:
    """The cluster-definition dropdown: shipped .machines files, saved definitions, uploaded .machines files."""
    samples = [{"label": name, "value": SAMPLE_PREFIX + name} for name in SAMPLE_MACHINES]
    saved = [{**option, "value": UPLOADED + option["value"]} for option in saved_choices(uploads, SAVED_CLUSTERS)]
    return samples + saved + upload_choices(uploads, "machines", value_prefix=UPLOADED)


def failure_choices(uploads) -> list[dict]:
    """The failure-trace dropdown: shipped .failures files, then earlier uploads."""
    samples = [{"label": name, "value": SAMPLE_PREFIX + name} for name in SAMPLE_FAILURES]
    return samples + upload_choices(uploads, "failures", value_prefix=UPLOADED)


def _choice_ref(value: str, kind: str, uploads) -> dict:
    """The draft reference for a ``sample:<name>`` or ``upload:<stored name>`` dropdown value."""
    if value.startswith(SAMPLE_PREFIX):
        return _sample(kind, value[len(SAMPLE_PREFIX):])
    name = value[len(UPLOADED):] if value.startswith(UPLOADED) else value
    label = next((e["label"] for e in uploads.listing() if e["name"] == name), name[:12])
    return {"source": "upload", "kind": kind, "name": name, "label": label}


def load_cluster_choice(value: str, uploads) -> tuple[list[dict], str]:
    """``(table rows, label)`` for a cluster-definition choice; raises :class:`ScenarioError`."""
    if value.startswith(UPLOADED) and value.endswith("." + SAVED_CLUSTERS):
        document, label = load_item(uploads, SAVED_CLUSTERS, value[len(UPLOADED):])
        clusters = document.get("clusters")
        if not isinstance(clusters, list):
            raise ScenarioError("clusters", f"{label}: no cluster list in the saved definition")
        rows = cluster_rows(normalize_clusters(clusters))
        return rows, label
    ref = _choice_ref(value, "machines", uploads)
    return cluster_rows(read_machines(ref_path(ref, uploads), source=ref["label"])), ref["label"]


def save_cluster_rows(rows: list[dict], name: str | None, uploads) -> str:
    """Validate the cluster table and save it to the workspace; returns the saved item's label."""
    label = clean_name(name, "clusters name")
    clusters = clusters_from_rows(rows)
    if not clusters:
        raise ScenarioError("clusters", "the table is empty: add a cluster before saving")
    save_item(uploads, SAVED_CLUSTERS, {"clusters": clusters}, label)
    return label


def parse_trace(ref: dict, uploads):
    """Parse the workload a trace reference names (memoised by content); raises TraceError/ScenarioError."""
    path = ref_path(ref, uploads)
    trace = {"path": path, "label": ref["label"], "format": ref.get("format", "auto"),
             "skip_malformed": bool(ref.get("skip_malformed")), "sha256": file_sha256(Path(path).resolve(), "trace")}
    return workload_for(trace)


def trace_info(workload, label: str) -> list:
    """What a person checks before running: jobs, span, users, sizes, notes about the file."""
    jobs = workload.jobs
    span = float(jobs["submit_time"].max() - jobs["submit_time"].min()) if len(jobs) else 0.0
    users = jobs["user"].replace("", pd.NA).dropna().nunique()
    with_req = int((jobs["requirement"].fillna("") != "").sum())
    facts = [
        ("File", f"{label} ({workload.format})"),
        ("Jobs", f"{len(jobs):,}"),
        ("Submission span", f"{span / 86400:.1f} days"),
        ("Users", f"{users:,}"),
        ("Largest job", f"{int(jobs['procs'].max()) if len(jobs) else 0} CPUs"),
        ("Jobs with requirements", f"{with_req:,}"),
    ]
    header = workload.header or {}
    if header.get("MaxProcs"):
        facts.append(("Header MaxProcs / MaxNodes", f"{header.get('MaxProcs')} / {header.get('MaxNodes', '–')}"))
    if workload.dropped:
        facts.append(("Dropped (no run time or size)", f"{workload.dropped:,}"))
    if workload.skipped_lines:
        facts.append(("Malformed lines skipped", f"{workload.skipped_lines:,} (first: line {workload.first_skipped_line})"))
    return [html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")]


HEADER_LABEL = "the trace header of "


def header_rows(workload, label: str) -> list[dict] | None:
    """Table rows of the one cluster a trace's header defines (MaxProcs/MaxNodes); None without a MaxProcs line."""
    try:
        return cluster_rows(header_clusters(workload.header or {}, label))
    except ScenarioError:
        return None


def adopt_trace(draft: dict, ref: dict, workload) -> dict:
    """The draft with a newly loaded trace.

    Hardware rule: unless the user chose clusters on purpose (edited the
    table, loaded a .machines file, opened a saved definition or clicked a
    preset: ``clusters_chosen``), the trace's header defines the machine the
    run uses. A trace without a MaxProcs header line keeps the table, and
    :func:`hardware_statement` says so.
    """
    new = {**draft, "trace": ref, "rejected": None}
    if not draft.get("clusters_chosen"):
        rows = header_rows(workload, ref["label"])
        if rows:
            new.update(clusters=rows, clusters_label=HEADER_LABEL + ref["label"])
    return new


def hardware_text(clusters: list[dict], source: str) -> str:
    """One line naming the hardware: ``14 clusters, 806 CPUs (metacentrum-2009.machines)``."""
    return f"{describe_hardware(clusters)} ({source})" if source else describe_hardware(clusters)


def next_run_hardware(draft: dict, workload) -> tuple[list[dict], str]:
    """``(normalised clusters, where they come from)`` the next run uses; raises ScenarioError on a bad table.

    An empty table means the trace header's cluster, as in the engine.
    """
    clusters = clusters_from_rows(draft["clusters"])
    if clusters:
        return clusters, draft.get("clusters_label") or "the table"
    label = draft["trace"]["label"]
    return header_clusters(workload.header or {}, label), HEADER_LABEL + label


def first_jobs(workload, max_jobs) -> pd.DataFrame:
    """The jobs a run simulates: the first ``max_jobs`` by submission (all if empty), as the engine picks them."""
    jobs = workload.jobs.sort_values("submit_time", kind="stable")
    return jobs.iloc[:max_jobs] if max_jobs else jobs


def hardware_statement(draft: dict, workload, max_jobs) -> list:
    """What the next run will run on, and warnings a person must see before pressing Run.

    Warns when jobs ask for more CPUs than the largest cluster (they would be
    cancelled) and when the trace header describes another machine than the
    one chosen.
    """
    try:
        clusters, source = next_run_hardware(draft, workload)
    except ScenarioError as exc:
        return [_error(f"Next run: no usable hardware: {exc}")]
    lines = [html.Span(["Next run on ", html.B(hardware_text(clusters, "")), f", from {source}."])]
    header = (workload.header or {}).get("MaxProcs")
    header_cpus = header if isinstance(header, int) and header > 0 else None
    total = sum(map(cluster_cpus, clusters))
    if header_cpus is None and not source.startswith(HEADER_LABEL):
        lines.append(html.Span(f"{draft['trace']['label']} has no MaxProcs header line: the table's clusters are "
                               "used.", className="hint"))
    elif header_cpus is not None and header_cpus != total:
        lines.append(html.Span(f"The trace header describes {header_cpus:,} CPUs; these clusters have {total:,}.",
                               className="warning"))
    largest = max(map(cluster_cpus, clusters))
    jobs = first_jobs(workload, max_jobs)
    too_large = int((jobs["procs"] > largest).sum())
    if too_large:
        lines.append(html.Span(f"{too_large:,} of the {len(jobs):,} jobs to simulate ask for more CPUs than the "
                               f"largest cluster has ({largest:,}): they will be cancelled.", className="warning"))
    return [html.Div(line) for line in lines]


def _error(text) -> html.Span:
    return html.Span(str(text), className="error")


def apply_upload(draft: dict, contents: str, filename: str, kind: str, uploads) -> tuple[dict, str]:
    """Store an upload and check it parses; returns ``(new draft, message)``.

    Raises :class:`ScenarioError` (with file, line and field) or
    :class:`UploadError`; the caller then keeps the previous draft. A trace
    that fails to parse is remembered as ``rejected`` so that ticking
    "skip malformed lines" or choosing its format retries it.
    """
    filename = filename if isinstance(filename, str) else None   # the browser's word, checked
    path = uploads.save_data_url(contents, kind, filename)
    ref = {"source": "upload", "kind": kind, "name": path.name, "label": filename or path.name}
    if kind == "trace":
        ref = {**ref, "format": draft["trace"].get("format", "auto"), "skip_malformed": draft["trace"].get("skip_malformed", False)}
        try:
            workload = parse_trace(ref, uploads)
        except ScenarioError:
            draft["rejected"] = ref
            raise
        return adopt_trace(draft, ref, workload), f"Loaded {ref['label']}: {len(workload.jobs):,} jobs."
    if kind == "machines":
        clusters = read_machines(path, source=ref["label"])
        return ({**draft, "clusters": cluster_rows(clusters), "clusters_label": ref["label"], "clusters_chosen": True},
                f"Loaded {len(clusters)} clusters from {ref['label']}.")
    frame = read_failures(path, source=ref["label"])
    return {**draft, "failure_trace": ref}, f"Loaded {len(frame):,} failure records from {ref['label']}."


def scenario_models(draft: dict, settings: dict, uploads) -> dict[str, dict]:
    """One batch model per chosen scenario kind (BASIC, EXT-FAIL, EXT-REQ, EXT-ALL).

    ``settings``: ``max_jobs``, ``failure_kind`` (none|trace|synthetic),
    ``align``, ``failure_params``, ``req_share``, ``estimates``,
    ``load_factor``, ``scenarios``. Raises :class:`ScenarioError` naming the field at fault.
    """
    if not settings["scenarios"]:
        raise ScenarioError("scenarios", "choose at least one of BASIC, EXT-FAIL, EXT-REQ, EXT-ALL")
    trace = draft["trace"]
    base = {
        "trace": {"path": ref_path(trace, uploads), "label": trace["label"], "format": trace.get("format", "auto"),
                  "skip_malformed": bool(trace.get("skip_malformed")), "max_jobs": settings.get("max_jobs") or None},
        "clusters": clusters_from_rows(draft["clusters"]),
        "estimates": settings.get("estimates") or "perfect",
        "load_factor": settings.get("load_factor") or 1.0,
    }
    kind = settings.get("failure_kind") or "none"
    if kind == "trace":
        failures = {"kind": "trace", "path": ref_path(draft["failure_trace"], uploads),
                    "align": settings.get("align") or "start"}
    elif kind == "synthetic":
        failures = {"kind": "synthetic", **{k: v for k, v in settings.get("failure_params", {}).items() if v is not None}}
    else:
        failures = {"kind": "none"}
    share = settings.get("req_share") or 0
    models = {}
    for name in [s for s in SCENARIO_KINDS if s in settings["scenarios"]]:
        with_failures, with_requirements = SCENARIO_KINDS[name]
        if with_failures and kind == "none":
            raise ScenarioError("failures", f"{name} needs failures: choose a failure trace or synthetic failures")
        models[name] = {
            **base,
            "failures": failures if with_failures else {"kind": "none"},
            "requirements": with_requirements,
            "synthetic_requirements": {"share": share} if with_requirements and share else None,
        }
    return models


@contextmanager
def _naming(scenario: str):
    """Re-raise a ScenarioError with the scenario kind it came from appended."""
    try:
        yield
    except ScenarioError as exc:
        raise ScenarioError(exc.field, f"{exc.message} (scenario {scenario})", source=exc.source,
                            line=exc.line) from None


def run_matrix(results, models: dict[str, dict], policies: list[str], seeds: int, report,
               hardware: str = "") -> tuple[list[dict], str]:
    """Run every (scenario kind, policy, seed); returns ``(run records, message)``.

    ``hardware`` (see :func:`hardware_text`) is kept in every record and in
    the scenarios' names, so the summary and the permalinks say what ran.

    Randomised policies (FCFS-LB, LS) and scenarios with synthetic parts run
    once per seed ``1..seeds``; deterministic ones once, with seed 1.
    ``report(done, total)`` gets progress in percent units. Every scenario
    is validated before the first run, and an error stops the matrix; the
    caller keeps its previous records either way.
    """
    if not policies:
        raise ScenarioError("policy", "choose at least one policy")
    seeds = max(1, int(seeds or 1))
    plan = []
    for name, model in models.items():
        seeded = model["failures"]["kind"] == "synthetic" or bool(model["synthetic_requirements"])
        for policy in policies:
            for seed in range(1, (seeds if seeded or REGISTRY.policy(ENGINE, policy).randomised else 1) + 1):
                title = " · ".join(part for part in (name, model["trace"]["label"], hardware) if part)
                plan.append((name, policy, seed, {"engine": ENGINE, "policy": policy, "model": model, "seed": seed,
                                                  "name": title}))
    for index, (name, policy, seed, scenario) in enumerate(plan):
        with _naming(name):   # checked once, then run as checked (files hashed once)
            plan[index] = (name, policy, seed, normalize_scenario(scenario))
    records = []
    total = 100 * len(plan)
    for index, (name, policy, seed, scenario) in enumerate(plan):
        with _naming(name):
            result, cached = results.run(scenario, progress=lambda f, i=index: report(int(100 * (i + f)), total))
        records.append({"scenario": name, "policy": policy, "label": REGISTRY.policy(ENGINE, policy).label,
                        "seed": seed, "hash": result.scenario_hash, "cached": cached, "hardware": hardware,
                        "wall_seconds": result.wall_seconds})
        report(100 * (index + 1), total)
    fresh = sum(not r["cached"] for r in records)
    wall = sum(r["wall_seconds"] for r in records if not r["cached"])
    return records, f"{len(records)} run(s): {fresh} simulated in {wall:.1f} s, {len(records) - fresh} from the cache."


def detail_choice(records, scenario, policy) -> tuple[str | None, str | None]:
    """The scenario kind and policy label the detail charts show for ``records``.

    The chosen ones while the runs have them, else the last scenario and its
    last policy -- what the two dropdowns settle on (they use this too).
    """
    scenarios = list(dict.fromkeys(r["scenario"] for r in records or []))
    scenario = scenario if scenario in scenarios else (scenarios[-1] if scenarios else None)
    labels = list(dict.fromkeys(r["label"] for r in records or [] if r["scenario"] == scenario))
    return scenario, policy if policy in labels else (labels[-1] if labels else None)


def detail_figures(results, records, scenario, policy, window) -> tuple:
    """Utilisation, queue, killed, waits and Gantt figures for one scenario kind.

    Series charts show every policy of the scenario (its first seed); the
    utilisation and Gantt charts show the chosen ``policy`` label.
    """
    first_seed: dict[str, dict] = {}
    for record in records or []:
        if record["scenario"] == scenario:
            first_seed.setdefault(record["label"], record)
    loaded = [(record["label"], result) for record, result in loaded_runs(results, first_seed.values())]
    detail = dict(loaded).get(policy)
    timelines = [(label, result.timeline) for label, result in loaded]
    empty_timeline = pd.DataFrame({"time": [], "entity": [], "metric": [], "value": []})
    empty_jobs = pd.DataFrame(columns=["job_id", "status", "start_time", "end_time", "cluster", "machines", "procs"])
    return (
        figures.utilisation_over_time(detail.timeline if detail else empty_timeline, window),
        figures.series_by_run(timelines, "queue", "queue_length", "Queue length", "waiting jobs", window),
        figures.series_by_run(timelines, "all", "killed_jobs", "Killed jobs (cumulative)", "jobs", window),
        figures.wait_distribution([(label, result.jobs) for label, result in loaded], window),
        gantt.gantt(detail.jobs if detail else empty_jobs, detail.timeline if detail else empty_timeline, window),
    )


class FigureMemo:
    """The detail figures last built in this process, keyed by what they are drawn from (bounded LRU).

    Results are immutable and addressed by content hash, so the same runs,
    scenario, policy and window always give the same figures: re-opening a
    page, or going back to a window seen before, costs a lookup instead of a
    rebuild (the Gantt of a 450,000-job run takes about a second to build).
    """

    def __init__(self, size: int = 8):
        self.size = size
        self._figures: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()   # the server answers callbacks from several threads

    @staticmethod
    def key(records, scenario, policy, window) -> str:
        """What the detail figures are drawn from, as a short text (also kept by the page: see ``DRAWN``)."""
        parts = [sorted((r["scenario"], r["label"], r["hash"]) for r in records or []), scenario, policy,
                 list(window) if window else None]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]

    def detail(self, results, records, scenario, policy, window) -> tuple:
        key = self.key(records, scenario, policy, window)
        with self._lock:
            if key in self._figures:
                self._figures.move_to_end(key)
                return self._figures[key]
        built = detail_figures(results, records, scenario, policy, window)
        with self._lock:
            self._figures[key] = built
            while len(self._figures) > self.size:
                self._figures.popitem(last=False)
        return built


def frame_links(records, scenario, policy) -> dict[str, tuple[str, str]]:
    """``frame -> (href, file name)`` of the run shown in detail; empty when none is.

    The files come from the download route (:mod:`.downloads`), streamed
    from the store: a large run's frames never pass through a callback.
    """
    record = next((r for r in records or [] if r["scenario"] == scenario and r["label"] == policy), None)
    if record is None:
        return {}
    names = {frame: f"batch-{scenario}-{record['policy']}-{frame}.csv" for frame in FRAMES}
    return {frame: (download_href(record["hash"], frame, name), name) for frame, name in names.items()}


def batch_report(results, records, scenario, policy, window, generated: str) -> str:
    """The self-contained HTML report of a matrix: objectives, the charts shown, every run's summary."""
    loaded = loaded_runs(results, records)
    table = figures.objective_table([(r["scenario"], r["label"], res.summary) for r, res in loaded])
    runs = [(f"{r['scenario']} · {r['label']} · seed {r['seed']}", res) for r, res in loaded]
    charts = [figures.objective_bars(table), *detail_figures(results, records, scenario, policy, window)]
    return html_report("Batch scheduling: policy × scenario matrix", runs, charts, generated)


def summary_rows(loaded) -> list[dict]:
    """One row per ``(run record, result)``."""
    rows = []
    for record, result in loaded:
        value = result.summary_value
        rows.append({
            "scenario": record["scenario"], "policy": record["label"], "seed": record["seed"],
            "hardware": record.get("hardware", ""), "jobs": int(value("jobs")), "killed": int(value("killed")), "cancelled": int(value("cancelled")),
            "avg slowdown": round(value("mean_slowdown"), 2),
            "avg bounded slowdown": round(value("mean_bounded_slowdown_tau10"), 2),
            "avg response (s)": round(value("mean_response_s")), "avg wait (s)": round(value("mean_wait_s")),
            "utilisation": round(value("utilisation"), 3), "scheduler CPU (s)": round(value("scheduler_cpu_s"), 3),
            "wall (s)": round(record["wall_seconds"], 2), "source": "cached" if record["cached"] else "simulated",
            "open": f"[permalink]({permalink(record['hash'])})",
        })
    return rows


def _field(label, component, hint=None):
    children = [html.Span(label), component]
    if hint:
        children.append(html.Small(hint, className="hint"))
    return html.Label(children, className="field")


def _upload(component_id, text):
    return dcc.Upload(id=component_id, children=html.Div([text, html.Br(), html.Small("drag and drop or click")]),
                      className="upload-box", multiple=False)


def layout() -> html.Div:
    settings = PRESET_SETTINGS["complete"]
    return html.Div(
        [
            dcc.Store(id=DRAFT, storage_type="local", data=initial_draft()),
            dcc.Store(id=RUNS, storage_type="local", data=[]),
            dcc.Store(id=WINDOW, data=None),
            dcc.Store(id=DRAWN, data=None),   # what the detail charts show now (FigureMemo.key)
            dcc.Download(id=DOWNLOAD),
            html.Div(
                [
                    html.H2("Batch & failures"),
                    html.P("Multi-cluster FCFS, FCFS-LB, EASY and Conservative backfilling and Local Search on your "
                           "workload, with machine failures and job requirements (Klusáček & Rudová)."),
                    html.Button("Complete data sets (MetaCentrum clusters and failures)", id=PRESET_COMPLETE,
                                className="preset"),
                    html.Button("CERIT-SC 2013 with real requirements", id=PRESET_CERIT, className="preset"),
                ],
                className="page-head",
            ),
            html.Div(
                [
                    html.Section(
                        [
                            html.H3("Workload"),
                            _field("Sample or earlier upload",
                                   dcc.Dropdown(id=SAMPLE, options=[], value=None, clearable=False,
                                                placeholder="switch to a sample or an uploaded trace")),
                            _upload(TRACE_UPLOAD, "Upload a trace: SWF, extended SWF, GWF, CSV (.gz too)"),
                            html.Div(
                                [dcc.Dropdown(id=FORMAT, options=list(TRACE_FORMATS), value="auto", clearable=False,
                                              className="narrow", persistence=True),
                                 dcc.Checklist(id=SKIP_MALFORMED, options=[{"label": "skip malformed lines",
                                                                            "value": "skip"}], value=[],
                                               persistence=True)],
                                className="button-row",
                            ),
                            html.Div(id=TRACE_MSG, className="message"),
                            html.Div(id=TRACE_INFO),
                            dcc.Graph(id=SIZES, config=GRAPH_CONFIG),
                            _field("Jobs to simulate (first N by submission; empty = all)",
                                   dcc.Input(id=MAX_JOBS, type="number", min=1, step=1, value=settings["max_jobs"],
                                             persistence=True)),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Clusters"),
                            dash_table.DataTable(
                                id=CLUSTERS,
                                columns=[{"name": c, "id": c, "type": "numeric" if c in ("machines", "speed") else "text"}
                                         for c in CLUSTER_COLUMNS],
                                data=[], editable=True, row_deletable=True, page_size=12,
                                style_table={"overflowX": "auto"},
                                style_cell={"fontFamily": "inherit", "padding": "3px", "maxWidth": "160px",
                                            "overflow": "hidden", "textOverflow": "ellipsis"},
                                tooltip_duration=None,
                            ),
                            html.Div([html.Button("Add cluster", id=ADD_CLUSTER)], className="button-row"),
                            _field("Open a definition: sample, saved or uploaded earlier",
                                   dcc.Dropdown(id=CLUSTER_CHOICE, options=[], value=None,
                                                placeholder="open a cluster definition")),
                            html.Div([dcc.Input(id=CLUSTERS_NAME, type="text", placeholder="name for the workspace",
                                                debounce=False),
                                      html.Button("Save clusters", id=SAVE_CLUSTERS)], className="button-row"),
                            _upload(MACHINES_UPLOAD, "Load an Alea/MetaCentrum .machines file"),
                            html.Div(id=CLUSTERS_MSG, className="message"),
                            html.Div(id=HARDWARE, className="message hardware"),
                            html.P("An empty table: the trace header's MaxNodes/MaxProcs define one cluster.",
                                   className="hint"),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Failures and requirements"),
                            dcc.RadioItems(id=FAILURE_KIND, persistence=True, value=settings["failure_kind"],
                                           options=[{"label": "none", "value": "none"},
                                                    {"label": "failure trace", "value": "trace"},
                                                    {"label": "synthetic (Weibull)", "value": "synthetic"}],
                                           className="checklist inline"),
                            _field("Failure trace: sample or uploaded earlier",
                                   dcc.Dropdown(id=FAILURE_CHOICE, options=[], value=None,
                                                placeholder="switch the failure trace")),
                            _upload(FAILURE_UPLOAD, "Upload a .failures trace"),
                            dcc.RadioItems(id=FAILURE_ALIGN, persistence=True, value="start",
                                           options=[{"label": "first failure at first submission", "value": "start"},
                                                    {"label": "absolute times", "value": "absolute"}],
                                           className="checklist"),
                            html.Details(
                                [html.Summary("Synthetic failure parameters (F = N · D · AFC)")]
                                + [_field(label, dcc.Input(id={"type": FAILURE_PARAM, "name": name}, type="number",
                                                           value=SYNTHETIC_DEFAULTS[name], persistence=True))
                                   for name, label in FAILURE_PARAMS],
                            ),
                            html.Div(id=FAILURE_MSG, className="message"),
                            _field("Synthetic requirements: share of jobs without one that get a cluster property",
                                   dcc.Input(id=REQ_SHARE, type="number", min=0, max=1, step=0.05,
                                             value=settings["req_share"], persistence=True),
                                   "for traces that record no requirements (0 = only the trace's own)"),
                            _field("Load factor", dcc.Input(id=LOAD_FACTOR, type="number", min=0.01, max=100,
                                                            step="any", value=1, persistence=True),
                                   "submit the jobs this many times as fast (1 = as logged)"),
                            _field("Run-time estimates", dcc.RadioItems(
                                id=ESTIMATES, value="perfect", persistence=True, className="checklist inline",
                                options=[{"label": "perfect", "value": "perfect"},
                                         {"label": "from the trace", "value": "trace"}])),
                        ],
                        className="panel",
                    ),
                    html.Section(
                        [
                            html.H3("Matrix"),
                            dcc.Checklist(id=POLICIES, options=REGISTRY.options(ENGINE), value=settings["policies"],
                                          className="checklist", persistence=True),
                            dcc.Checklist(id=SCENARIOS, options=list(SCENARIO_KINDS), value=settings["scenarios"],
                                          className="checklist inline", persistence=True),
                            _field("Seeds (FCFS-LB, LS and synthetic inputs)",
                                   dcc.Input(id=SEEDS, type="number", min=1, max=20, step=1, value=settings["seeds"],
                                             persistence=True)),
                            html.Div([html.Button("Run", id=RUN, className="primary"),
                                      html.Button("Cancel", id=CANCEL, disabled=True)], className="button-row"),
                            html.Progress(id=PROGRESS, value="0", max="100"),
                            html.Div(id=RUN_MSG, className="message"),
                        ],
                        className="panel",
                    ),
                ],
                className="editor-grid four",
            ),
            html.Section(
                [html.H3("Objectives per policy and scenario (Klusáček & Rudová, Fig. 2 layout)"),
                 dcc.Graph(id=OBJECTIVES, config=GRAPH_CONFIG)],
                className="panel",
            ),
            html.Section(
                [
                    html.Div(
                        [html.H3("Over time"),
                         _field("Scenario", dcc.Dropdown(id=DETAIL_SCENARIO, clearable=False, className="narrow")),
                         _field("Policy (utilisation, machines)", dcc.Dropdown(id=DETAIL_POLICY, clearable=False,
                                                                               className="narrow")),
                         html.Span(id=WINDOW_MSG, className="hint"),
                         html.Button("Whole run", id=RESET_WINDOW)],
                        className="button-row",
                    ),
                    html.P("Zoom the time axis of any chart to set the window for all of them.", className="hint"),
                    html.Div([dcc.Graph(id=UTILISATION, config=GRAPH_CONFIG),
                              dcc.Graph(id=QUEUE, config=GRAPH_CONFIG)], className="two-graphs"),
                    html.Div([dcc.Graph(id=KILLED, config=GRAPH_CONFIG),
                              dcc.Graph(id=WAITS, config=GRAPH_CONFIG)], className="two-graphs"),
                    dcc.Graph(id=GANTT, config=GRAPH_CONFIG),
                ],
                className="panel",
            ),
            html.Section(
                [
                    html.H3("Runs"),
                    dash_table.DataTable(id=SUMMARY, data=[], columns=[], sort_action="native",
                                         style_cell={"fontFamily": "inherit"}, style_table={"overflowX": "auto"}),
                    html.Div([html.Span("Export the run shown above:", className="hint")]
                             + [html.A(f"{name}.csv", id={"type": FRAME_LINKS, "frame": name}, className="button",
                                       download=f"{name}.csv") for name in FRAMES]
                             + [html.Button("matrix.csv", id={"type": EXPORT_BUTTONS, "frame": "matrix"}),
                                html.Button("report.html", id={"type": EXPORT_BUTTONS, "frame": "report"})],
                             className="button-row export"),
                ],
                className="panel",
            ),
        ],
        className="batch-page",
    )


def edit_draft(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Apply one input action; returns the outputs that change, by name.

    Names: ``draft``, ``trace_msg``, ``clusters_msg``, ``failure_msg``,
    ``clusters`` (table rows), ``settings`` (a preset's control values).
    On any error the draft is left as it was and the message says why.
    """
    try:
        if trigger in (PRESET_COMPLETE, PRESET_CERIT):
            name = "complete" if trigger == PRESET_COMPLETE else "cerit"
            new = preset_draft(name)
            return {"draft": new, "clusters": new["clusters"], "settings": PRESET_SETTINGS[name],
                    "trace_msg": "", "clusters_msg": f"Clusters from {new['clusters_label']}.", "failure_msg": ""}
        if trigger == SAMPLE:
            if not payload["sample"]:
                return {}
            ref = {**trace_choice_ref(payload["sample"], uploads), "format": draft["trace"].get("format", "auto"),
                   "skip_malformed": draft["trace"].get("skip_malformed", False)}
            workload = parse_trace(ref, uploads)
            return _trace_loaded(draft, adopt_trace(draft, ref, workload), workload)
        if trigger in (FORMAT, SKIP_MALFORMED):
            current = draft.get("rejected") or draft["trace"]
            if not draft.get("rejected") and (current.get("format", "auto"), bool(current.get("skip_malformed"))) \
                    == (payload["format"], payload["skip"]):
                return {}   # the trace in use is read that way already
            ref = {**current, "format": payload["format"], "skip_malformed": payload["skip"]}
            try:
                workload = parse_trace(ref, uploads)
            except ScenarioError as exc:
                return {"trace_msg": _error(f"{ref['label']} not loaded: {exc}")}
            return _trace_loaded(draft, adopt_trace(draft, ref, workload), workload)
        if trigger in (TRACE_UPLOAD, MACHINES_UPLOAD, FAILURE_UPLOAD):
            kind, message_key, contents, filename = {
                TRACE_UPLOAD: ("trace", "trace_msg", payload["trace_contents"], payload["trace_name"]),
                MACHINES_UPLOAD: ("machines", "clusters_msg", payload["machines_contents"], payload["machines_name"]),
                FAILURE_UPLOAD: ("failures", "failure_msg", payload["failure_contents"], payload["failure_name"]),
            }[trigger]
            if not contents:
                return {}
            working = dict(draft)
            try:
                new, message = apply_upload(working, contents, filename, kind, uploads)
            except (ScenarioError, UploadError) as exc:
                hint = (" Tick 'skip malformed lines' to load the rest, or fix the file."
                        if kind == "trace" and isinstance(exc, TraceError) and exc.line else "")
                keep = "The previous file stays in use."
                out = {message_key: _error(f"{filename} not loaded: {exc}.{hint} {keep}")}
                if working.get("rejected") != draft.get("rejected"):
                    out["draft"] = working
                return out
            out = {"draft": new, message_key: html.Span(message, className="ok")}
            if new["clusters"] != draft["clusters"]:
                out["clusters"] = new["clusters"]
                if kind == "trace":
                    out["clusters_msg"] = html.Span(f"Clusters from {new['clusters_label']}.", className="ok")
            return out
        if trigger == ADD_CLUSTER:
            rows = [*payload["rows"], {"name": f"cluster{len(payload['rows']) + 1}", "machines": 1,
                                       "cpus_per_machine": "1", "speed": 1.0, "properties": ""}]
            return {"draft": {**draft, "clusters": rows, "clusters_label": "the edited table", "clusters_chosen": True},
                    "clusters": rows, "clusters_msg": "Added a cluster: edit its cells."}
        if trigger == CLUSTERS:
            rows = payload["rows"]
            edited = {**draft, "clusters": rows, "clusters_label": "the edited table", "clusters_chosen": True}
            try:
                clusters_from_rows(rows)
            except ScenarioError as exc:
                return {"draft": edited, "clusters_msg": _error(exc)}
            return {"draft": edited, "clusters_msg": ""}
        if trigger == CLUSTER_CHOICE:
            if not payload["cluster_choice"]:
                return {}
            try:
                rows, label = load_cluster_choice(payload["cluster_choice"], uploads)
            except ScenarioError as exc:
                return {"clusters_msg": _error(f"{str(exc).rstrip('.')}. The table is unchanged.")}
            return {"draft": {**draft, "clusters": rows, "clusters_label": label, "clusters_chosen": True}, "clusters": rows,
                    "clusters_msg": html.Span(f"Loaded {len(rows)} clusters from {label}.", className="ok")}
        if trigger == SAVE_CLUSTERS:
            try:
                label = save_cluster_rows(payload["rows"], payload["clusters_name"], uploads)
            except (ScenarioError, UploadError) as exc:
                return {"clusters_msg": _error(f"Not saved: {exc}")}
            return {"draft": {**draft, "clusters_label": label, "clusters_chosen": True},
                    "clusters_msg": html.Span(f"Saved the clusters as {label!r} in the workspace.", className="ok")}
        if trigger == FAILURE_CHOICE:
            if not payload["failure_choice"]:
                return {}
            ref = _choice_ref(payload["failure_choice"], "failures", uploads)
            try:
                frame = read_failures(ref_path(ref, uploads), source=ref["label"])
            except ScenarioError as exc:
                return {"failure_msg": _error(f"{ref['label']} not loaded: {str(exc).rstrip('.')}. The previous failure trace stays.")}
            return {"draft": {**draft, "failure_trace": ref},
                    "failure_msg": html.Span(f"Loaded {len(frame):,} failure records from {ref['label']}.",
                                             className="ok")}
    except ScenarioError as exc:
        return {"trace_msg": _error(exc)}
    return {}


def _trace_loaded(draft: dict, new: dict, workload) -> dict:
    """Outputs of a trace switch: the draft, its message and, when the header replaced them, the clusters."""
    out = {"draft": new, "trace_msg": html.Span(f"Loaded {new['trace']['label']}: {len(workload.jobs):,} jobs.",
                                                className="ok")}
    if new["clusters"] != draft["clusters"]:
        out["clusters"] = new["clusters"]
        out["clusters_msg"] = html.Span(f"Clusters from {new['clusters_label']}.", className="ok")
    return out


def register_callbacks(app, results, uploads) -> None:
    """Wire the page; ``results`` is the app's ResultCache, ``uploads`` its UploadStore."""
    register_run_feedback(app, RUN, CANCEL, PROGRESS, RUN_MSG)

    outputs = ("draft", "trace_msg", "clusters_msg", "failure_msg", "clusters", "settings")
    memo = FigureMemo()

    @app.callback(
        Output(DRAFT, "data"), Output(TRACE_MSG, "children"), Output(CLUSTERS_MSG, "children"),
        Output(FAILURE_MSG, "children"), Output(CLUSTERS, "data"), Output(FORMAT, "value"), Output(SKIP_MALFORMED, "value"),
        Output(MAX_JOBS, "value"), Output(FAILURE_KIND, "value"), Output(REQ_SHARE, "value"),
        Output(LOAD_FACTOR, "value"), Output(POLICIES, "value"), Output(SCENARIOS, "value"), Output(SEEDS, "value"),
        Input(PRESET_COMPLETE, "n_clicks"), Input(PRESET_CERIT, "n_clicks"), Input(SAMPLE, "value"),
        Input(FORMAT, "value"), Input(SKIP_MALFORMED, "value"), Input(TRACE_UPLOAD, "contents"),
        Input(MACHINES_UPLOAD, "contents"), Input(FAILURE_UPLOAD, "contents"), Input(ADD_CLUSTER, "n_clicks"),
        Input(CLUSTERS, "data_timestamp"), Input(CLUSTER_CHOICE, "value"), Input(SAVE_CLUSTERS, "n_clicks"),
        Input(FAILURE_CHOICE, "value"),
        State(TRACE_UPLOAD, "filename"), State(MACHINES_UPLOAD, "filename"), State(FAILURE_UPLOAD, "filename"),
        State(CLUSTERS, "data"), State(CLUSTERS_NAME, "value"), State(DRAFT, "data"),
        prevent_initial_call=True,
    )
    def _edit(_c, _e, sample, fmt, skip, trace_contents, machines_contents, failure_contents, _a, _t,
              cluster_choice, _s, failure_choice, trace_name, machines_name, failure_name, rows, clusters_name, draft):
        payload = {"sample": sample, "format": fmt, "skip": bool(skip), "trace_contents": trace_contents,
                   "trace_name": trace_name, "machines_contents": machines_contents, "machines_name": machines_name,
                   "failure_contents": failure_contents, "failure_name": failure_name, "rows": rows or [],
                   "cluster_choice": cluster_choice, "clusters_name": clusters_name, "failure_choice": failure_choice}
        draft = draft if isinstance(draft, dict) else initial_draft()   # the page's own store, unless forged
        out = edit_draft(ctx.triggered_id, draft, payload, uploads)
        settings = out.get("settings")
        preset = [settings[k] for k in PRESET_FIELDS] if settings else [no_update] * len(PRESET_FIELDS)
        # The format controls follow the trace in use. They are set here, not from the draft by another
        # callback: that would close a loop of callbacks, and Dash then skips a re-run (an upload made while
        # the page loads was shown as loaded while the page kept describing the old trace).
        trace = out["draft"]["trace"] if "draft" in out else None
        controls = ((trace.get("format", "auto"), ["skip"] if trace.get("skip_malformed") else [])
                    if trace and trace != draft["trace"] else (no_update, no_update))
        return (*[out.get(name, no_update) for name in outputs[:5]], *controls, *preset)

    @app.callback(Output(SAMPLE, "options"), Output(CLUSTER_CHOICE, "options"), Output(FAILURE_CHOICE, "options"),
                  Input(SAMPLE, "id"), Input(DRAFT, "data"))
    def _choices(_, __):
        return trace_choices(uploads), cluster_choices(uploads), failure_choices(uploads)

    @app.callback(Output(CLUSTERS, "data", allow_duplicate=True), Input(CLUSTERS, "id"), State(DRAFT, "data"),
                  prevent_initial_call="initial_duplicate")
    def _cluster_rows(_, draft):
        return draft["clusters"]

    @app.callback(Output(TRACE_INFO, "children"), Output(SIZES, "figure"), Output(HARDWARE, "children"),
                  Input(DRAFT, "data"), Input(MAX_JOBS, "value"))
    def _trace_info(draft, max_jobs):
        trace = draft["trace"]
        try:
            workload = parse_trace(trace, uploads)
        except ScenarioError as exc:
            return _error(exc), figures.size_histogram(pd.DataFrame({"procs": []})), _error(exc)
        return (trace_info(workload, trace["label"]), figures.size_histogram(workload.jobs),
                hardware_statement(draft, workload, max_jobs))

    @app.callback(
        Output(RUNS, "data"), Output(RUN_MSG, "children"),
        Input(RUN, "n_clicks"),
        State(DRAFT, "data"), State(MAX_JOBS, "value"), State(FAILURE_KIND, "value"), State(FAILURE_ALIGN, "value"),
        State({"type": FAILURE_PARAM, "name": ALL}, "value"), State({"type": FAILURE_PARAM, "name": ALL}, "id"),
        State(REQ_SHARE, "value"), State(ESTIMATES, "value"), State(LOAD_FACTOR, "value"), State(POLICIES, "value"),
        State(SCENARIOS, "value"), State(SEEDS, "value"),
        background=True, interval=POLL_MS,
        running=[(Output(RUN, "disabled"), True, False), (Output(CANCEL, "disabled"), False, True)],
        cancel=[Input(CANCEL, "n_clicks")],
        progress=[Output(PROGRESS, "value"), Output(PROGRESS, "max")],
        progress_default=EMPTY_PROGRESS,
        prevent_initial_call=True,
    )
    def _run(set_progress, _, draft, max_jobs, failure_kind, align, values, ids, share, estimates, load_factor,
             policies, scenarios, seeds):
        settings = {"max_jobs": max_jobs, "failure_kind": failure_kind, "align": align,
                    "failure_params": {i["name"]: v for i, v in zip(ids, values)}, "req_share": share,
                    "estimates": estimates, "load_factor": load_factor, "scenarios": scenarios or []}
        try:
            models = scenario_models(draft, settings, uploads)
            hardware = hardware_text(*next_run_hardware(draft, parse_trace(draft["trace"], uploads)))
            records, message = run_matrix(results, models, policies or [], seeds,
                                          throttled(set_progress), hardware)
        except ScenarioError as exc:
            return no_update, _error(f"Not run: {exc}")
        return records, html.Span(message, className="ok")

    @app.callback(
        Output(OBJECTIVES, "figure"), Output(SUMMARY, "data"), Output(SUMMARY, "columns"), Input(RUNS, "data"),
    )
    def _objectives(records):
        loaded = loaded_runs(results, records)
        table = figures.objective_table([(r["scenario"], r["label"], res.summary) for r, res in loaded])
        rows = summary_rows(loaded)
        columns = [{"name": k, "id": k, **({"presentation": "markdown"} if k == "open" else {})}
                   for k in (rows[0] if rows else {})]
        return figures.objective_bars(table), rows, columns

    @app.callback(
        Output(WINDOW, "data"),
        Input(UTILISATION, "relayoutData"), Input(QUEUE, "relayoutData"), Input(KILLED, "relayoutData"),
        Input(GANTT, "relayoutData"), Input(RESET_WINDOW, "n_clicks"), State(WINDOW, "data"),
        prevent_initial_call=True,
    )
    def _window(u, q, k, g, _reset, current):
        if ctx.triggered_id == RESET_WINDOW:
            return None
        relayout = ctx.triggered[0]["value"] if ctx.triggered else None
        return window_from_relayout(relayout, current, unit_seconds=figures.HOUR)

    @app.callback(
        Output(UTILISATION, "figure"), Output(QUEUE, "figure"), Output(KILLED, "figure"), Output(WAITS, "figure"),
        Output(GANTT, "figure"), Output(WINDOW_MSG, "children"), Output(DRAWN, "data"),
        Output(DETAIL_SCENARIO, "options"), Output(DETAIL_SCENARIO, "value"),
        Output(DETAIL_POLICY, "options"), Output(DETAIL_POLICY, "value"),
        Input(RUNS, "data"), Input(DETAIL_SCENARIO, "value"), Input(DETAIL_POLICY, "value"), Input(WINDOW, "data"),
        State(DRAWN, "data"),
    )
    def _detail(records, scenario, policy, window, drawn):
        # One callback settles the two dropdowns and draws: the charts follow the runs (page
        # re-opened, run finished) in one round trip, not one per dropdown.
        loaded = [record for record, _ in loaded_runs(results, records)]
        scenario, policy = detail_choice(loaded, scenario, policy)
        key = memo.key(records, scenario, policy, window)
        if key == drawn:
            raise PreventUpdate
        scenarios = list(dict.fromkeys(r["scenario"] for r in loaded))
        labels = list(dict.fromkeys(r["label"] for r in loaded if r["scenario"] == scenario))
        note = "whole run" if not window else f"window {window[0] / figures.HOUR:.1f}–{window[1] / figures.HOUR:.1f} h"
        return (*memo.detail(results, records, scenario, policy, window), f"{scenario or ''} · {note}", key,
                scenarios, scenario, labels, policy)

    @app.callback(
        Output(DOWNLOAD, "data"), Input({"type": EXPORT_BUTTONS, "frame": ALL}, "n_clicks"),
        State(DETAIL_SCENARIO, "value"), State(DETAIL_POLICY, "value"), State(RUNS, "data"), State(WINDOW, "data"),
        prevent_initial_call=True,
    )
    def _export(clicks, scenario, policy, records, window):
        if not any(clicks or []) or not records:
            return no_update
        frame = ctx.triggered_id["frame"]
        if frame == "matrix":
            rows = pd.DataFrame(summary_rows(loaded_runs(results, records))).drop(columns="open", errors="ignore")
            return send_csv(rows, "batch-matrix.csv")
        text = batch_report(results, records, scenario, policy, window,
                            datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
        return dcc.send_string(text, "batch-report.html")

    @app.callback(Output({"type": FRAME_LINKS, "frame": ALL}, "href"),
                  Output({"type": FRAME_LINKS, "frame": ALL}, "download"),
                  Input(DETAIL_POLICY, "value"), Input(RUNS, "data"), State(DETAIL_SCENARIO, "value"))
    def _frame_links(policy, records, scenario):
        links = frame_links(records, scenario, policy)
        return [links.get(frame, (None, None))[0] for frame in FRAMES], \
            [links.get(frame, (None, f"{frame}.csv"))[1] for frame in FRAMES]
