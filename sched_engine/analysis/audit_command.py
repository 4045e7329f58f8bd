"""``python -m sched_engine audit --trace LOG [--machines M] --out DIR``: the log's audit as ``DIR/audit.csv``.

The hardware is the clusters of ``--machines`` (their CPUs summed; the
largest one bounds a job), else the trace header's ``MaxProcs``
(:func:`~sched_engine.batch.model.header_clusters`); a log with neither is
still audited, and the checks against the hardware say they need it.
``audit.csv`` has the columns of :data:`~.audit.AUDIT_COLUMNS`, one row per
check; rows that cannot be a schedule go, one line each, to
``audit_rows.csv`` when there are any. The table is printed as the panel
shows it (:attr:`~.audit.Audit.grouped`: the checks that only say what the
log lacks are named once, in the row that says it), warnings marked ``!``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

import pandas as pd

from ..batch.machine_files import read_machines
from ..batch.model import TRACE_FORMATS, cluster_cpus, header_clusters, normalize_clusters
from ..batch.traces import Workload, parse_workload
from ..core.errors import ScenarioError
from ..core.io import read_text
from .audit import Audit, audit
from .audit_lines import UNREAD_COLUMNS, SwfLines, swf_lines
from .audit_workload import header_lines

#: Records a reader refuses that the audit names one by one before it skips and counts the rest.
RECORDS_NAMED = 10


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", required=True, help="workload file: SWF, extended SWF, GWF or CSV, optionally .gz")
    parser.add_argument("--format", default="auto", choices=list(TRACE_FORMATS))
    parser.add_argument("--machines", help="Alea .machines file; without it the SWF header's MaxProcs is the hardware")
    parser.add_argument("--skip-malformed", action="store_true", help="skip malformed lines and count them")
    parser.add_argument("--out", required=True, help="directory for audit.csv")


def hardware(header: dict, machines: str | None, label: str) -> tuple[float | None, float | None]:
    """``(CPUs, CPUs of the largest cluster)`` a run of this log would use; ``(None, None)`` when nothing says."""
    if machines:
        clusters = normalize_clusters(read_machines(machines, source=Path(machines).name))
    else:
        try:
            clusters = header_clusters(header, label)
        except ScenarioError:
            return None, None   # no MaxProcs line: the audit says which checks need the hardware
    if not clusters:
        raise ScenarioError("machines", "the file describes no cluster", source=Path(machines).name)
    sizes = list(map(cluster_cpus, clusters))
    return float(sum(sizes)), float(max(sizes))


def audit_file(trace: str, machines: str | None = None, fmt: str = "auto", skip_malformed: bool = False) -> Audit:
    """Read a log once (its jobs and its header lines from one text) and audit it on its hardware."""
    label = Path(trace).name
    text = read_text(trace, source=label)
    workload, refused, text = read_refusing(text, fmt, label, skip_malformed)
    total, largest = hardware(workload.header or {}, machines, label)
    # Where each job is in the file, and the rows the reader left out (only an SWF reader drops rows by line).
    lines = swf_lines(text, len(workload.jobs)) if workload.format in ("swf", "swf-ext") else None
    if len(refused):
        unread = refused if lines is None else pd.concat([lines.unread, refused], ignore_index=True)
        lines = SwfLines(None if lines is None else lines.kept, unread)
    return audit(workload.jobs, total, largest_cluster_cpus=largest, header=workload.header,
                 header_lines=header_lines(text), dropped=workload.dropped + workload.skipped_lines + len(refused),
                 lines=lines)


def read_refusing(text: str, fmt: str, label: str, skip_malformed: bool) -> tuple[Workload, pd.DataFrame, str]:
    """``(workload, refused, text)``: the log read as a run reads it, except that a record the reader refuses (a job
    ending before it starts in a sacct log, a malformed line) does not stop the audit: it is named
    (``refused``: line, job_id, problem) and blanked out of ``text``, which is read again -- up to
    :data:`RECORDS_NAMED` records, past which the reader skips and counts the rest (its ``skipped_lines``)."""
    refused: list[tuple[int, str, str]] = []
    lines: list[str] | None = None
    while True:
        try:
            workload = parse_workload(text, fmt, source=label,
                                      skip_malformed=skip_malformed or len(refused) >= RECORDS_NAMED)
            return workload, pd.DataFrame(refused, columns=list(UNREAD_COLUMNS)), text
        except ScenarioError as exc:
            lines = text.splitlines() if lines is None else lines
            if exc.line is None or not 0 < exc.line <= len(lines) or not lines[exc.line - 1].strip():
                raise   # not one record's fault (or blanking it changes nothing): the file is at fault
            refused.append((exc.line, "", f"{exc.field + ': ' if exc.field else ''}{exc.message}"))
            lines[exc.line - 1] = ""
            text = "\n".join(lines) + "\n"


def format_table(table) -> list[str]:
    """The audit as text lines: ``!`` marks a warning."""
    width = max([len(c) for c in table["check"]] + [5])
    lines = []
    for check, value, unit, verdict, detail in table.itertuples(index=False):
        number = "" if value != value else f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
        lines.append(f"{'!' if verdict == 'warning' else ' '} {check:<{width}} {number:>14} {unit:<6} {detail}")
    return lines


def run_audit(args: argparse.Namespace, log: Callable[[str], None] = print) -> int:
    """The ``audit`` command; returns the exit status."""
    result = audit_file(args.trace, args.machines, args.format, args.skip_malformed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(out / "audit.csv", index=False)
    shown = result.grouped
    folded = f"; {len(result.folded)} checks without a value are named in the rows below that say why" \
        if result.folded else ""
    log(f"wrote {out / 'audit.csv'}: {len(result.table)} checks, one row each{folded}; "
        f"{int((shown['verdict'] == 'warning').sum())} warning(s)")
    if len(result.problems):
        result.problems.to_csv(out / "audit_rows.csv", index=False)
        log(f"wrote {out / 'audit_rows.csv'}: {len(result.problems):,} problems of rows left out or that cannot be a "
            "schedule, with their lines")
    for line in format_table(shown):
        log(line)
    return 0
