"""The loaded trace: uploads (stored content-addressed as ``<sha256>.trace``), earlier uploads, and its facts.

A trace is referred to by stored name, never by a path the browser could
choose; an upload is parsed before it replaces anything.
"""

from __future__ import annotations

import numpy as np
from dash import html

from sched_engine import ScenarioError
from sched_engine.elastic import load_inputs, read_trace

from ...services.uploads import upload_choices


def trace_facts(model: dict, seed: int) -> list[tuple[str, str]]:
    """What a person checks before running: the jobs exactly as the engine will draw or read them."""
    jobs = load_inputs(model, np.random.default_rng(seed)).jobs
    groups = [g for job in jobs for g in job.groups]
    arrivals = [job.arrival for job in jobs]
    tasks = sum(g.count for g in groups)
    reduces = sum(g.count for g in groups if g.phase)
    trace = model["trace"]
    source = {"generated": f"generated ({trace.get('distribution')}, seed {seed})",
              "file": trace.get("label"), "jobs": "listed jobs"}[trace["kind"]]
    return [
        ("Trace", str(source)),
        ("Jobs", f"{len(jobs):,}"),
        ("Tasks", f"{tasks:,} ({tasks - reduces:,} map, {reduces:,} reduce)"),
        ("Arrivals", f"{min(arrivals):,.0f} – {max(arrivals):,.0f} s"),
        ("Task memory", f"{min(g.memory_mb for g in groups):,} – {max(g.memory_mb for g in groups):,} MB"),
        ("Task duration", f"{min(g.duration for g in groups):,.1f} – {max(g.duration for g in groups):,.1f} s"),
        ("Cluster", f"{sum(n['count'] for n in model['nodes'])} nodes × {model['nodes'][0]['cores']} cores, "
                    f"{model['nodes'][0]['memory_mb']:,} MB"),
    ]


def facts_list(facts: list[tuple[str, str]]) -> html.Dl:
    return html.Dl([item for key, value in facts for item in (html.Dt(key), html.Dd(value))], className="facts")


def apply_upload(contents: str, filename: str, uploads) -> tuple[dict, str]:
    """Store an uploaded trace and check it parses; returns ``(loaded trace ref, message)``.

    Raises :class:`ScenarioError` (file, line, field) or :class:`UploadError`.
    """
    path = uploads.save_data_url(contents, "trace", filename)
    return stored_trace(path, filename or path.name)


def stored_trace(path, label: str) -> tuple[dict, str]:
    """Check a stored trace file parses; returns ``(loaded trace ref, message)``; raises :class:`ScenarioError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("", "not a text file (expected SLS/DSS JSON or CSV)", source=label) from None
    jobs = read_trace(text, label)
    if not jobs:
        raise ScenarioError("", "the file holds no jobs, nothing to simulate", source=label)
    tasks = sum(g.count for job in jobs for g in job.groups)
    return ({"kind": "upload", "name": path.name, "label": label},
            f"Loaded {label}: {len(jobs):,} jobs, {tasks:,} tasks.")


def trace_choices(uploads) -> list[dict]:
    """Traces uploaded earlier in this page's formats (SLS/DSS JSON or CSV), newest first."""
    return upload_choices(uploads, "trace", suffixes=(".json", ".csv"))


def open_stored_trace(name: str, uploads) -> tuple[dict, str]:
    """``(loaded trace ref, message)`` for a trace uploaded earlier; raises ScenarioError or UploadError."""
    label = next((e["label"] for e in uploads.listing() if e["name"] == name), "upload")
    return stored_trace(uploads.path_of(name), label)
