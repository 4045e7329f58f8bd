"""The draft (workload, failure trace and clusters, by reference) and its edits: presets, uploads, choices, the table.

An upload is parsed before it replaces anything: a bad file gets a message
naming its line and field, and the previous workload and results stay.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from dash import html

from sched_engine import ScenarioError
from sched_engine.batch import TraceError, read_failures, read_machines
from sched_engine.logs import checked_timezone

from ...services.uploads import UploadError
from ...widgets import run_time
from ...widgets.fields import error
from . import ids
from .clusters import (
    adopt_trace,
    cluster_rows,
    clusters_from_rows,
    load_cluster_choice,
    next_run_hardware,
    save_cluster_rows,
)
from .run import SCENARIO_KINDS
from .sources import SAMPLE_MACHINES, choice_ref, parse_trace, ref_path, sample_ref, store_trace, trace_choice_ref


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
        return {"trace": {**sample_ref("trace", "hpc2n-excerpt.swf"), "format": "auto", "skip_malformed": False},
                "failure_trace": sample_ref("failures", "metacentrum-2009.failures"),
                "clusters": cluster_rows(read_machines(Path(SAMPLE_MACHINES[machines]).resolve(), source=machines)),
                "clusters_label": machines, "clusters_chosen": True, "rejected": None}
    machines = "cerit-sc-2013.machines"
    return {"trace": {**sample_ref("trace", "cerit-sc-2013-slice.swf"), "format": "auto", "skip_malformed": False},
            "failure_trace": sample_ref("failures", "metacentrum-2009.failures"),
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
# Above this many jobs an own trace starts without Local Search (:func:`own_trace_settings`): on RICC's busy
# log its first 5,000 jobs took over 9 minutes (EASY: under a second).
LOCAL_SEARCH_JOBS = 5000
PRESET_FIELDS = ("max_jobs", "failure_kind", "req_share", "load_factor", "policies", "scenarios", "seeds")


def failure_misfit(draft: dict, workload, uploads) -> str | None:
    """Why the draft's failure trace cannot run on the clusters the next run uses, or None if it can.

    The engine refuses a failure naming a cluster or a machine the hardware
    lacks (:func:`sched_engine.batch.failures.failure_events`): the same check,
    made when the hardware changes rather than when Run is pressed.
    """
    ref = draft.get("failure_trace")
    if not ref:
        return "there is no failure trace"
    try:
        clusters, _ = next_run_hardware(draft, workload)
        frame = read_failures(ref_path(ref, uploads), source=ref["label"])
    except ScenarioError as exc:
        return str(exc)
    machines = {cluster["name"]: cluster["machines"] for cluster in clusters}
    for name, machine in zip(frame["cluster"], frame["machine"]):
        if name not in machines:
            return f"it names cluster {name!r}, which these clusters lack"
        if machine >= machines[name]:
            return f"it names machine {machine} of {name}, which has {machines[name]}"
    return None


def own_trace_settings(draft: dict, workload, settings: dict, uploads) -> tuple[dict, list[str]]:
    """The form's settings adapted to a newly loaded trace, and a sentence per change.

    The page opens on the paper's set-up for its sample (a failure trace of
    MetaCentrum's clusters, a cut to 2,000 jobs submitted 4.7 times as fast):
    what belongs to that sample gives way to the new trace, so that Run with
    nothing else touched runs the whole trace as logged, on its own hardware.
    ``settings`` holds the form's current values (:data:`PRESET_FIELDS`);
    only the fields that change are returned.
    """
    changes, notes = {}, []
    label = draft["trace"]["label"]
    scenarios = list(settings.get("scenarios") or [])
    if settings.get("failure_kind") == "trace":
        why = failure_misfit(draft, workload, uploads)
        if why:
            kept = [name for name in scenarios if not SCENARIO_KINDS[name][0]] or ["BASIC"]
            dropped = [name for name in scenarios if name not in kept]
            changes.update(failure_kind="none", scenarios=kept)
            notes.append(f"Failures set to none: the failure trace {draft['failure_trace']['label']} does not fit "
                         f"this hardware ({why})" + (f"; scenarios {', '.join(dropped)} dropped." if dropped else "."))
    if settings.get("max_jobs"):
        changes["max_jobs"] = None
        notes.append(f"Jobs to simulate: all {len(workload.jobs):,} of {label} (was the first "
                     f"{int(settings['max_jobs']):,}).")
    policies = list(settings.get("policies") or [])
    if "ls" in policies and len(workload.jobs) > LOCAL_SEARCH_JOBS:
        changes["policies"] = [name for name in policies if name != "ls"]
        notes.append(f"Local Search left out: its search grows with the backlog, minutes per thousand jobs on a busy "
                     f"log ({len(workload.jobs):,} jobs here); tick it to run it anyway.")
    if settings.get("load_factor") not in (None, 1, 1.0):
        changes["load_factor"] = 1.0
        notes.append(f"Load factor 1 (the jobs as logged; was {settings['load_factor']}).")
    return changes, notes


def names_by_jobs(names: pd.Series, shown: int = 6) -> str:
    """``"gpu (1,200 jobs), batch (300), … 4 more"``: the names with most jobs first."""
    counts = names.value_counts()
    parts = [f"{name} ({count:,} job{'' if count == 1 else 's'})" if i == 0 else f"{name} ({count:,})"
             for i, (name, count) in enumerate(counts.head(shown).items())]
    more = len(counts) - shown
    return ", ".join(parts) + (f", … {more:,} more" if more > 0 else "")


def run_time_note(jobs: int) -> str:
    """How long a whole run of ``jobs`` jobs takes per policy and scenario, from the engine's measured speed."""
    fast, slow = (run_time.whole_run_seconds(jobs, kernel) for kernel in ("compiled", "python"))
    return (f"about {fast:,} s per policy and scenario for EASY and Conservative, up to {slow:,} s for the others "
            "or with failures; lower \"Jobs to simulate\" for a quicker look (every headline then says it ran the "
            "first jobs)")


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
    if len(jobs) >= run_time.LARGE_TRACE:
        facts.append(("Time to run it whole", run_time_note(len(jobs))))
    header = workload.header or {}
    if header.get("MaxProcs"):
        facts.append(("Header MaxProcs / MaxNodes", f"{header.get('MaxProcs')} / {header.get('MaxNodes', '–')}"))
    if workload.dropped:
        facts.append(("Dropped (no run time or size)", f"{workload.dropped:,}"))
    if workload.skipped_lines:
        facts.append(("Malformed lines skipped", f"{workload.skipped_lines:,} (first: line {workload.first_skipped_line})"))
    facts += [(f"Read ({workload.format})", note) for note in workload.notes]
    for column, title in (("partition", "Partitions"), ("group", "Groups"), ("account", "Accounts")):
        named = jobs[column].replace("", pd.NA).dropna() if column in jobs.columns else pd.Series(dtype="string")
        if len(named):
            facts.append((title, names_by_jobs(named)))
    return [html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")]


def apply_upload(draft: dict, contents: str, filename: str, kind: str, uploads,
                 skip: bool | None = None, timezone: str | None = None, anonymise: bool = False) -> tuple[dict, str]:
    """Store an upload and check it parses; returns ``(new draft, message)``.

    Raises :class:`ScenarioError` (with file, line and field) or
    :class:`UploadError`; the caller then keeps the previous draft. A trace
    that fails to parse is remembered as ``rejected`` so that ticking
    "skip malformed lines" or choosing its format retries it. ``skip``: the
    box as the page shows it (None: as the trace in use was read), so a
    trace is read the way the box says, whatever the previous file did.
    """
    filename = filename if isinstance(filename, str) else None   # the browser's word, checked
    if kind == "trace":   # read in the page's time zone; anonymised, kept as SWF (store_trace)
        skip = draft["trace"].get("skip_malformed", False) if skip is None else bool(skip)
        zone = checked_timezone(timezone or draft["trace"].get("timezone", "UTC"), "time zone")
        path, label = store_trace(uploads, contents, filename, timezone=zone, anonymise=anonymise,
                                  skip_malformed=skip)
        ref = {"source": "upload", "kind": kind, "name": path.name, "label": label if anonymise else filename or label,
               "format": "auto" if anonymise else draft["trace"].get("format", "auto"), "skip_malformed": skip,
               **({"timezone": zone} if zone != "UTC" and not anonymise else {})}
        try:
            workload = parse_trace(ref, uploads)
        except ScenarioError:
            draft["rejected"] = ref
            raise
        zone_said = f" (times read in {ref['timezone']})" if "timezone" in ref else ""
        return adopt_trace(draft, ref, workload), f"Loaded {ref['label']}: {len(workload.jobs):,} jobs{zone_said}."
    path = uploads.save_data_url(contents, kind, filename)
    ref = {"source": "upload", "kind": kind, "name": path.name, "label": filename or path.name}
    if kind == "machines":
        clusters = read_machines(path, source=ref["label"])
        return ({**draft, "clusters": cluster_rows(clusters), "clusters_label": ref["label"], "clusters_chosen": True},
                f"Loaded {len(clusters)} clusters from {ref['label']}.")
    frame = read_failures(path, source=ref["label"])
    return {**draft, "failure_trace": ref}, f"Loaded {len(frame):,} failure records from {ref['label']}."


def edit_draft(trigger, draft: dict, payload: dict, uploads) -> dict:
    """Apply one input action; returns the outputs that change, by name.

    Names: ``draft``, ``trace_msg``, ``clusters_msg``, ``failure_msg``,
    ``clusters`` (table rows), ``settings`` (a preset's control values).
    On any error the draft is left as it was and the message says why.
    """
    try:
        if trigger in (ids.PRESET_COMPLETE, ids.PRESET_CERIT):
            name = "complete" if trigger == ids.PRESET_COMPLETE else "cerit"
            new = preset_draft(name)
            return {"draft": new, "clusters": new["clusters"], "settings": PRESET_SETTINGS[name],
                    "trace_msg": "", "clusters_msg": f"Clusters from {new['clusters_label']}.", "failure_msg": ""}
        if trigger == ids.SAMPLE:
            if not payload["sample"]:
                return {}
            ref = {**trace_choice_ref(payload["sample"], uploads), "format": draft["trace"].get("format", "auto"),
                   "skip_malformed": draft["trace"].get("skip_malformed", False)}
            workload = parse_trace(ref, uploads)
            out = _trace_loaded(draft, adopt_trace(draft, ref, workload), workload)
            return _adapted(out, workload, payload, uploads) if ref["source"] == "upload" else out
        if trigger in (ids.FORMAT, ids.SKIP_MALFORMED, ids.TIMEZONE):
            current = draft.get("rejected") or draft["trace"]
            wanted = (payload["format"], payload["skip"], payload.get("timezone", "UTC"))
            if not draft.get("rejected") and (current.get("format", "auto"), bool(current.get("skip_malformed")),
                                              current.get("timezone", "UTC")) == wanted:
                return {}   # the trace in use is read that way already
            ref = {**current, "format": payload["format"], "skip_malformed": payload["skip"],
                   "timezone": checked_timezone(wanted[2], "time zone")}
            try:
                workload = parse_trace(ref, uploads)
            except ScenarioError as exc:
                return {"trace_msg": error(f"{ref['label']} not loaded: {exc}")}
            return _trace_loaded(draft, adopt_trace(draft, ref, workload), workload)
        if trigger in (ids.TRACE_UPLOAD, ids.MACHINES_UPLOAD, ids.FAILURE_UPLOAD):
            kind, message_key, contents, filename = {
                ids.TRACE_UPLOAD: ("trace", "trace_msg", payload["trace_contents"], payload["trace_name"]),
                ids.MACHINES_UPLOAD: ("machines", "clusters_msg", payload["machines_contents"], payload["machines_name"]),
                ids.FAILURE_UPLOAD: ("failures", "failure_msg", payload["failure_contents"], payload["failure_name"]),
            }[trigger]
            if not contents:
                return {}
            working = dict(draft)
            try:
                new, message = apply_upload(working, contents, filename, kind, uploads, payload.get("skip"),
                                            payload.get("timezone"), bool(payload.get("anonymise")))
            except (ScenarioError, UploadError) as exc:
                # Skipping rescues a file whose bad lines are rows (a line and a field named), not one that is
                # no text at all; and it is offered only while the box is not ticked already.
                rescuable = kind == "trace" and isinstance(exc, TraceError) and exc.line and exc.field
                again = " and upload it again" if payload.get("anonymise") else ""   # an anonymised file is not kept
                hint = (f" Tick 'skip malformed lines'{again} to load the rest, or fix the file."
                        if rescuable and not payload.get("skip") else "")
                keep = "The previous file stays in use."
                out = {message_key: error(f"{filename} not loaded: {exc}.{hint} {keep}")}
                if working.get("rejected") != draft.get("rejected"):
                    out["draft"] = working
                return out
            out = {"draft": new, message_key: html.Span(message, className="ok")}
            if new["clusters"] != draft["clusters"]:
                out["clusters"] = new["clusters"]
                if kind == "trace":
                    out["clusters_msg"] = html.Span(f"Clusters from {new['clusters_label']}.", className="ok")
            if kind == "trace":
                return _adapted(out, parse_trace(new["trace"], uploads), payload, uploads)
            return out
        if trigger == ids.ADD_CLUSTER:
            rows = [*payload["rows"], {"name": f"cluster{len(payload['rows']) + 1}", "machines": 1,
                                       "cpus_per_machine": "1", "speed": 1.0, "properties": ""}]
            return {"draft": {**draft, "clusters": rows, "clusters_label": "the edited table", "clusters_chosen": True},
                    "clusters": rows, "clusters_msg": "Added a cluster: edit its cells."}
        if trigger == ids.CLUSTERS:
            rows = payload["rows"]
            edited = {**draft, "clusters": rows, "clusters_label": "the edited table", "clusters_chosen": True}
            try:
                clusters_from_rows(rows)
            except ScenarioError as exc:
                return {"draft": edited, "clusters_msg": error(exc)}
            return {"draft": edited, "clusters_msg": ""}
        if trigger == ids.CLUSTER_CHOICE:
            if not payload["cluster_choice"]:
                return {}
            try:
                rows, label = load_cluster_choice(payload["cluster_choice"], uploads)
            except ScenarioError as exc:
                return {"clusters_msg": error(f"{str(exc).rstrip('.')}. The table is unchanged.")}
            return {"draft": {**draft, "clusters": rows, "clusters_label": label, "clusters_chosen": True}, "clusters": rows,
                    "clusters_msg": html.Span(f"Loaded {len(rows)} clusters from {label}.", className="ok")}
        if trigger == ids.SAVE_CLUSTERS:
            try:
                label = save_cluster_rows(payload["rows"], payload["clusters_name"], uploads)
            except (ScenarioError, UploadError) as exc:
                return {"clusters_msg": error(f"Not saved: {exc}")}
            return {"draft": {**draft, "clusters_label": label, "clusters_chosen": True},
                    "clusters_msg": html.Span(f"Saved the clusters as {label!r} in the workspace.", className="ok")}
        if trigger == ids.FAILURE_CHOICE:
            if not payload["failure_choice"]:
                return {}
            ref = choice_ref(payload["failure_choice"], "failures", uploads)
            try:
                frame = read_failures(ref_path(ref, uploads), source=ref["label"])
            except ScenarioError as exc:
                return {"failure_msg": error(f"{ref['label']} not loaded: {str(exc).rstrip('.')}. The previous failure trace stays.")}
            return {"draft": {**draft, "failure_trace": ref},
                    "failure_msg": html.Span(f"Loaded {len(frame):,} failure records from {ref['label']}.",
                                             className="ok")}
    except ScenarioError as exc:
        return {"trace_msg": error(exc)}
    return {}


def _trace_loaded(draft: dict, new: dict, workload) -> dict:
    """Outputs of a trace switch: the draft, its message and, when the header replaced them, the clusters."""
    out = {"draft": new, "trace_msg": html.Span(f"Loaded {new['trace']['label']}: {len(workload.jobs):,} jobs.",
                                                className="ok")}
    if new["clusters"] != draft["clusters"]:
        out["clusters"] = new["clusters"]
        out["clusters_msg"] = html.Span(f"Clusters from {new['clusters_label']}.", className="ok")
    return out


def _adapted(out: dict, workload, payload: dict, uploads) -> dict:
    """A trace switch's outputs with the form's settings adapted to the trace (:func:`own_trace_settings`)."""
    changes, notes = own_trace_settings(out["draft"], workload, payload.get("settings") or {}, uploads)
    if not changes:
        return out
    message = out["trace_msg"]
    return {**out, "settings": changes,
            "trace_msg": html.Div([message, *(html.Div(note, className="hint") for note in notes)])}
