"""The hardware a run uses: the clusters table, saved definitions, the trace header's machine, what the page warns of."""

from __future__ import annotations

import pandas as pd
from dash import html

from sched_engine import ScenarioError
from sched_engine.batch import cluster_cpus, describe_hardware, header_clusters, normalize_clusters, read_machines

from ...services.saved_items import CLUSTERS as SAVED_CLUSTERS
from ...services.saved_items import clean_name, load_item, save_item
from ...widgets.fields import error
from .sources import UPLOADED, choice_ref, ref_path

CLUSTER_COLUMNS = ("name", "machines", "cpus_per_machine", "speed", "properties")


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


def load_cluster_choice(value: str, uploads) -> tuple[list[dict], str]:
    """``(table rows, label)`` for a cluster-definition choice; raises :class:`ScenarioError`."""
    if value.startswith(UPLOADED) and value.endswith("." + SAVED_CLUSTERS):
        document, label = load_item(uploads, SAVED_CLUSTERS, value[len(UPLOADED):])
        clusters = document.get("clusters")
        if not isinstance(clusters, list):
            raise ScenarioError("clusters", f"{label}: no cluster list in the saved definition")
        rows = cluster_rows(normalize_clusters(clusters))
        return rows, label
    ref = choice_ref(value, "machines", uploads)
    return cluster_rows(read_machines(ref_path(ref, uploads), source=ref["label"])), ref["label"]


def save_cluster_rows(rows: list[dict], name: str | None, uploads) -> str:
    """Validate the cluster table and save it to the workspace; returns the saved item's label."""
    label = clean_name(name, "clusters name")
    clusters = clusters_from_rows(rows)
    if not clusters:
        raise ScenarioError("clusters", "the table is empty: add a cluster before saving")
    save_item(uploads, SAVED_CLUSTERS, {"clusters": clusters}, label)
    return label


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
        return [error(f"Next run: no usable hardware: {exc}")]
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
