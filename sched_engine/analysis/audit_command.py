"""``python -m sched_engine audit --trace LOG [--machines M] --out DIR``: the log's audit as ``DIR/audit.csv``.

The hardware is the clusters of ``--machines`` (their CPUs summed), else the
trace header's ``MaxProcs``; a log with neither is refused with a message
(there is nothing to check the recorded schedule against).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from ..batch.machine_files import read_machines
from ..batch.model import cluster_cpus, header_clusters, normalize_clusters
from ..batch.traces import read_workload
from ..core.errors import ScenarioError
from .audit import audit


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", required=True, help="workload file: SWF, extended SWF, GWF or CSV, optionally .gz")
    parser.add_argument("--format", default="auto", choices=["auto", "swf", "swf-ext", "gwf", "csv"])
    parser.add_argument("--machines", help="Alea .machines file; without it the SWF header's MaxProcs is the hardware")
    parser.add_argument("--skip-malformed", action="store_true", help="skip malformed lines and count them")
    parser.add_argument("--out", required=True, help="directory for audit.csv")


def hardware_cpus(header: dict, machines: str | None, label: str) -> int:
    """The CPUs a run of this log would use: the clusters given, else the header's one cluster."""
    if machines:
        clusters = normalize_clusters(read_machines(machines, source=Path(machines).name))
    else:
        clusters = header_clusters(header, label)
    if not clusters:
        raise ScenarioError("machines", "no hardware to check the log against: give --machines or a log whose "
                                        "header has a MaxProcs line", source=label)
    return sum(map(cluster_cpus, clusters))


def run_audit(args: argparse.Namespace, log: Callable[[str], None] = print) -> int:
    label = Path(args.trace).name
    workload = read_workload(args.trace, args.format, source=label, skip_malformed=args.skip_malformed)
    frame = audit(workload.jobs, hardware_cpus(workload.header or {}, args.machines, label), workload.header)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "audit.csv", index=False)
    warnings = frame[frame["verdict"] == "warning"]
    log(f"wrote {out / 'audit.csv'}: {len(frame)} checks, {len(warnings)} warning(s)")
    for check, value, unit, verdict, detail in frame.itertuples(index=False):
        log(f"{'!' if verdict == 'warning' else ' '} {check:<28} {value:>14,.6g} {unit:<6} {detail}")
    return 0
