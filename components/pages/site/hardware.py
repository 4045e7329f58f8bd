"""The site's hardware on the page: clusters of machines with CPUs and memory each, from the trace header by default.

The draft is ``{"rows": [...], "origin": "<where they come from>"}``; a row
is a cluster: ``name``, ``machines``, ``cpus_per_machine`` (a number, or a
comma-separated list, one per machine) and ``memory_per_machine_mb`` (empty:
the default memory per CPU times the machine's CPUs, which the page then
states). Rule as on the batch page: until the table is edited, a new trace's
header (``MaxNodes``/``MaxProcs``) defines it; "From the trace header" goes
back to that. A malformed table is refused with its row and column named;
the engine gets ``clusters``, ``memory_per_machine_mb`` and
``default_memory_per_cpu_mb`` (:mod:`sched_engine.site.model`). A row's
partitions (from a ``slurm.conf`` or ``sinfo`` file) become its cluster's
``partition=<name>`` properties, by which the engine holds each job to its
partition's clusters as the batch engine does (:mod:`sched_engine.batch.requirements`).
"""

from __future__ import annotations

import re

from dash import html

from sched_engine import ScenarioError
from sched_engine.batch import cluster_cpus, header_clusters
from sched_engine.batch.machine_files import parse_hardware
from sched_engine.batch.requirements import partition_clusters, partition_property, partitions_named
from sched_engine.site.model import DEFAULT_MEMORY_PER_CPU_MB

from ...services.saved_items import data_url_bytes
from ...widgets.fields import error
from ..batch.clusters import cluster_rows, clusters_from_rows
from ..batch.sources import parse_trace, trace_choice_ref
from .ids import HW_ADD, HW_HEADER, HW_TABLE, HW_UPLOAD, TRACE

COLUMNS = ("name", "machines", "cpus_per_machine", "memory_per_machine_mb")
#: Shown beside them, never edited: the partitions a ``slurm.conf`` or ``sinfo`` file gives each cluster.
PARTITIONS = "partitions"
HEADER = "the trace header of "
_ROW_FIELD = re.compile(r"clusters\[(\d+)\]\.?(.*)")


def header_draft(uploads, trace: str | None) -> dict:
    """The table the trace's header defines (one cluster of MaxNodes machines), memory left to the default."""
    if not trace:
        return {"rows": [], "origin": "no trace"}
    ref = trace_choice_ref(trace, uploads)
    clusters = header_clusters(parse_trace(ref, uploads).header or {}, ref["label"])
    return {"rows": [{**row_of(row), "memory_per_machine_mb": None} for row in cluster_rows(clusters)],
            "origin": HEADER + ref["label"]}


def row_of(row: dict) -> dict:
    """A table row: the model's columns, and the partitions where a file gave them."""
    return {**{column: row.get(column) for column in COLUMNS},
            **({PARTITIONS: row[PARTITIONS]} if row.get(PARTITIONS) else {})}


def partitions_of(cluster: dict) -> str:
    """The partitions a cluster serves (its ``partition=<name>`` properties), comma-separated."""
    return ", ".join(partitions_named([str(p) for p in cluster.get("properties") or ()]))


def partition_properties(row: dict) -> str:
    """A row's partitions (``batch, long``) as its cluster's properties (``partition=batch,partition=long``)."""
    names = [name.strip() for name in str(row.get(PARTITIONS) or "").split(",")]
    return ",".join(partition_property(name) for name in names if name)


def _row_error(exc: ScenarioError) -> ScenarioError:
    """An engine error on ``clusters[i].field`` said as the table's ``hardware row i+1, field``."""
    match = _ROW_FIELD.fullmatch(exc.field or "")
    if not match:
        return ScenarioError("hardware", f"{exc.field}: {exc.message}" if exc.field else exc.message)
    row, column = int(match.group(1)) + 1, match.group(2) or "row"
    return ScenarioError(f"hardware row {row}, {column}", exc.message)


def hardware_model(rows: list[dict] | None, default_memory) -> dict:
    """The model's hardware fields from the table; :class:`ScenarioError` naming the row and column.

    An empty table, a cluster without machines or CPUs, or memory that is
    not a positive number of MB are refused.
    """
    filled = [row for row in rows or [] if any(str(row.get(c) or "").strip() for c in COLUMNS)]
    if not filled:
        raise ScenarioError("hardware", "the table has no cluster: add one, or take the trace header's")
    try:
        clusters = clusters_from_rows([{**row, "speed": 1.0, "properties": partition_properties(row)}
                                       for row in filled])
    except ScenarioError as exc:
        raise _row_error(exc) from None
    memory = {}
    for number, (row, cluster) in enumerate(zip(filled, clusters), start=1):
        text = str(row.get("memory_per_machine_mb") if row.get("memory_per_machine_mb") is not None else "").strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < float("inf"):
            raise ScenarioError(f"hardware row {number}, memory_per_machine_mb",
                                f"must be a positive number of MB (empty: the default per CPU), got {text!r}")
        memory[cluster["name"]] = value
    try:
        per_cpu = float(default_memory if default_memory not in (None, "") else DEFAULT_MEMORY_PER_CPU_MB)
    except (TypeError, ValueError):
        per_cpu = float("nan")
    if not 0 < per_cpu < float("inf"):
        raise ScenarioError("default memory per CPU", f"must be a positive number of MB, got {default_memory!r}")
    return {"clusters": clusters, "memory_per_machine_mb": memory, "default_memory_per_cpu_mb": per_cpu}


def statement(hardware: dict, origin: str, jobs, rows: list[dict] | None = None) -> list:
    """What the next run runs on, in words, with the default memory stated where it is used and the jobs' warnings.

    ``rows``: the table's; their partitions (from a ``slurm.conf`` or ``sinfo`` file) hold each job to its
    partition's clusters, and the jobs of a partition no cluster serves are counted (they will be cancelled).
    """
    clusters, memory = hardware["clusters"], hardware["memory_per_machine_mb"]
    cpus = sum(map(cluster_cpus, clusters))
    machines = sum(c["machines"] for c in clusters)
    lines = [html.Span(["Next run on ", html.B(f"{len(clusters)} cluster{'s' if len(clusters) != 1 else ''}, "
                                               f"{machines:,} machines, {cpus:,} CPUs"), f", from {origin}."])]
    if any((row or {}).get(PARTITIONS) for row in rows or ()):
        lines.extend(partition_lines(clusters, jobs))
    assumed = [c["name"] for c in clusters if c["name"] not in memory]
    if assumed:
        lines.append(html.Span(f"Memory not given for {', '.join(assumed)}: "
                               f"{hardware['default_memory_per_cpu_mb']:,.0f} MB per CPU assumed "
                               "(SWF headers carry no memory).", className="hint"))
    asked = jobs["memory_per_cpu_mb"] if "memory_per_cpu_mb" in jobs.columns else None
    recorded = asked[asked > 0] if asked is not None else []
    if len(recorded):
        lines.append(html.Span(f"{len(recorded):,} of {len(jobs):,} jobs record their memory "
                               f"(median {recorded.median():,.0f} MB per CPU).", className="hint"))
    machine_memory = max(memory.get(c["name"], hardware["default_memory_per_cpu_mb"] * max(_cpus(c)))
                         for c in clusters)
    too_much = int((recorded > machine_memory).sum()) if len(recorded) else 0
    if too_much:
        lines.append(html.Span(f"{too_much:,} jobs ask more memory per CPU than the largest machine has "
                               f"({machine_memory:,.0f} MB): they will be cancelled.", className="warning"))
    largest = max(map(cluster_cpus, clusters))
    too_large = int((jobs["procs"] > largest).sum())
    if too_large:
        lines.append(html.Span(f"{too_large:,} jobs ask for more CPUs than the largest cluster has ({largest:,}): "
                               "they will be cancelled.", className="warning"))
    return [html.Div(line) for line in lines]


def partition_lines(clusters: list[dict], jobs) -> list:
    """What the clusters' partitions do to the jobs: each runs only on its partition's clusters; those of a
    partition no cluster serves are cancelled (the engine's own rule, :func:`partition_clusters`)."""
    lines = [html.Span("A job runs only on the clusters of its partition, as the file names them.", className="hint")]
    partitions = jobs["partition"].fillna("").astype(str).tolist() if "partition" in jobs.columns else []
    _, missing = partition_clusters(partitions, [c.get("properties") or () for c in clusters])
    if missing:
        reasons: dict[str, int] = {}
        for reason in missing.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        said = "; ".join(f"{reason} ({count:,} job{'s' if count != 1 else ''})" for reason, count in reasons.items())
        count = len(missing)
        lines.append(html.Span(f"{count:,} job{'s' if count != 1 else ''} will be cancelled: {said}.",
                               className="warning"))
    return lines


def _cpus(cluster: dict) -> list[int]:
    per = cluster["cpus_per_machine"]
    return per if isinstance(per, list) else [per]


def uploaded_draft(contents: str, filename: str, uploads) -> dict:
    """The table a hardware file describes: a ``.machines`` file, ``slurm.conf`` or ``sinfo`` output (each
    partition, or set of partitions naming the same nodes, a cluster; memory per machine as the file says)."""
    text = data_url_bytes(contents, uploads.max_bytes, filename).decode("utf-8", errors="strict")
    clusters = parse_hardware(text, source=filename, with_memory=True)
    rows = [{**row_of(row), "memory_per_machine_mb": cluster["memory_mb"], PARTITIONS: partitions_of(cluster)}
            for row, cluster in zip(cluster_rows(clusters), clusters)]
    return {"rows": rows, "origin": "the table"}


def edit(trigger, draft: dict | None, rows, uploads, trace, upload=(None, None)) -> dict:
    """One action on the hardware table; returns ``draft`` (and ``rows``) when they change, ``message`` on error.

    ``trigger``: the trace (header rows unless the table was edited), the
    table (edited), the add button (an empty row), the header button or a
    hardware file uploaded (``upload``: its data URL and name), which then
    stands as an edited table.
    """
    draft = draft or {"rows": [], "origin": "no trace"}
    try:
        if trigger == HW_UPLOAD and upload[0]:
            try:
                new = uploaded_draft(upload[0], upload[1] or "hardware", uploads)
            except UnicodeDecodeError:
                raise ScenarioError("", "not UTF-8 text", source=upload[1] or "hardware") from None
            return {"draft": new, "rows": new["rows"]}
        if (trigger in (None, TRACE) and draft.get("origin") != "the table") or trigger == HW_HEADER:
            new = header_draft(uploads, trace)
            return {"draft": new, "rows": new["rows"]}
        if trigger == HW_ADD:
            rows = [*(rows or []), dict.fromkeys(COLUMNS)]
            return {"draft": {"rows": rows, "origin": "the table"}, "rows": rows}
        if trigger == HW_TABLE:
            return {"draft": {"rows": [row_of(row) for row in rows or []], "origin": "the table"}}
    except ScenarioError as exc:
        return {"message": error(exc)}
    return {}
