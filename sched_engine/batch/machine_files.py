"""Readers for a grid's cluster descriptions (Alea ``.machines`` files) and machine failure traces.

Both raise :class:`~sched_engine.core.io.FileError` (the batch readers'
``TraceError``) naming the file, the 1-based line and the field at fault;
gzip files are read directly (:func:`sched_engine.core.io.read_text`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io import FileError, read_text, text_number

# --- clusters ---------------------------------------------------------------------------------------


def read_machines(path: str | Path, *, source: str | None = None) -> list[dict]:
    """Read an Alea ``.machines`` file into cluster dicts (see :func:`parse_machines`).

    A Slurm ``slurm.conf`` or ``sinfo -N -o "%N %c %m %P"`` output is read
    too, through :mod:`sched_engine.logs.slurm_conf` (its partitions become
    clusters whose property ``partition=<name>`` the jobs' partitions follow).
    """
    name = source or Path(path).name
    return parse_hardware(read_text(path, source=name), source=name)


def parse_hardware(text: str, *, source: str = "machines", with_memory: bool = False) -> list[dict]:
    """:func:`parse_machines` of a ``.machines`` text, or of a ``slurm.conf`` or ``sinfo`` text converted to one."""
    from ..logs import slurm_conf

    head = text[: 1 << 16]
    if slurm_conf.sniff_slurm_conf(source, head):
        text = slurm_conf.read_slurm_conf(text, source=source)
    elif slurm_conf.sniff_sinfo(source, head):
        text = slurm_conf.read_sinfo(text, source=source)
    return parse_machines(text, source=source, with_memory=with_memory)


def parse_machines(text: str, *, source: str = "machines", with_memory: bool = False) -> list[dict]:
    """Cluster descriptions in either of Alea's two layouts.

    * short (6 columns): id, name, machines, CPUs per machine, speed, memory;
    * MetaCentrum (11 columns): id, name, CPU speed, memory (KB),
      architecture, OS, comma-separated properties, machines, CPUs,
      comma-separated CPUs per machine, machine ids.

    Each cluster becomes ``{name, machines, cpus_per_machine, speed,
    properties}`` with ``cpus_per_machine`` an int, or a list when machines
    differ; architecture and OS join the property list (lower case).
    ``with_memory`` adds ``memory_mb``, each machine's memory (the file's KB / 1024; None when not above 0).
    """
    clusters = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        tokens = line.split()
        if len(tokens) == 6:
            _, name, machines, cpus, speed, memory = tokens
            cluster = {
                "name": name,
                "machines": int(text_number(machines, number, "machines", source, whole=True)),
                "cpus_per_machine": int(text_number(cpus, number, "cpus_per_machine", source, whole=True)),
                "speed": text_number(speed, number, "speed", source),
                "properties": [],
            }
        elif len(tokens) >= 10:
            _, name, speed, memory, arch, os_name, props, machines, cpus, per_machine = tokens[:10]
            count = int(text_number(machines, number, "machines", source, whole=True))
            total = int(text_number(cpus, number, "cpus", source, whole=True))
            per = [int(text_number(v, number, "cpus_per_machine", source, whole=True))
                   for v in per_machine.split(",") if v]
            # The MetaCentrum file lists one machine too many for one cluster
            # (cluster_11: 19 machines, 152 CPUs, 20 entries of 8); the machine
            # count and CPU total agree, so they decide.
            per = per[:count]
            if len(per) != count or sum(per) != total:
                raise FileError("cpus_per_machine", f"lists {len(per)} machines with {sum(per)} CPUs; "
                                 f"the cluster has {count} machines and {total} CPUs", source=source, line=number)
            cluster = {
                "name": name,
                "machines": count,
                "cpus_per_machine": per[0] if len(set(per)) == 1 else per,
                "speed": text_number(speed, number, "speed", source),
                "properties": sorted({arch.lower(), os_name.lower(), *(p for p in props.split(",") if p)}),
            }
        else:
            raise FileError("", f"expected 6 (short) or 11 (MetaCentrum) fields, found {len(tokens)}",
                             source=source, line=number)
        if cluster["machines"] < 1:
            raise FileError("machines", "a cluster needs at least one machine", source=source, line=number)
        if with_memory:
            kb = text_number(memory, number, "memory", source)
            cluster["memory_mb"] = kb / 1024.0 if kb > 0 else None
        clusters.append(cluster)
    if not clusters:
        raise FileError("", "no cluster descriptions in the file", source=source)
    return clusters


# --- failures ---------------------------------------------------------------------------------------


def read_failures(path: str | Path, *, source: str | None = None) -> pd.DataFrame:
    name = source or Path(path).name
    return parse_failures(read_text(path, source=name), source=name)


def parse_failures(text: str, *, source: str = "failures") -> pd.DataFrame:
    """Alea failure trace: start (s), cluster name, duration (s), failed machine indices.

    Returns one row per failed machine: ``start, cluster, duration, machine``.
    """
    starts, clusters, durations, machines = [], [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        tokens = line.split()
        if len(tokens) < 4:
            fields = ("start", "cluster", "duration", "machines")
            raise FileError(fields[len(tokens)], f"expected start, cluster, duration and machine indices, "
                             f"found {len(tokens)} field(s)", source=source, line=number)
        start = text_number(tokens[0], number, "start", source)
        duration = text_number(tokens[2], number, "duration", source)
        if duration < 0:
            raise FileError("duration", f"must be non-negative, got {tokens[2]}", source=source, line=number)
        for token in tokens[3:]:
            index = text_number(token, number, "machines", source, whole=True)
            if index < 0 or index != int(index):
                raise FileError("machines", f"{token!r} is not a machine index", source=source, line=number)
            starts.append(start)
            clusters.append(tokens[1])
            durations.append(duration)
            machines.append(int(index))
    return pd.DataFrame(
        {
            "start": np.asarray(starts, dtype=float),
            "cluster": pd.Series(clusters, dtype="string"),
            "duration": np.asarray(durations, dtype=float),
            "machine": np.asarray(machines, dtype=np.int64),
        }
    )
