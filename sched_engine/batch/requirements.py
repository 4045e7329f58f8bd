"""Specific job requirements matched against cluster properties.

Klusáček & Rudová §2.2: a job may run on a cluster iff the cluster meets all
of the job's requirements; a job that no cluster can serve is cancelled.
Requirement strings are PBS-style resource lists as in the CERIT-SC trace,
``1:ppn=64:x86_64:cl_zewura#excl`` -- chunks joined by ``+``, each
``<machines>:ppn=<cpus>:<property>...`` with an optional ``#`` suffix.

Reading used here:

* ``ppn=P`` needs a machine with at least P CPUs;
* ``cl_<name>`` names the cluster itself;
* any other token is a property the cluster must list -- unless no cluster
  in the system lists it, in which case nothing can be said about it and it
  is ignored (and counted, see :func:`suitable_clusters`);
* ``#excl`` (exclusive machines) and the machine count do not restrict
  *which* clusters are suitable and are not modelled.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def parse_requirement(text: str) -> tuple[int, frozenset[str]]:
    """``(max ppn, properties)`` of a requirement string; ``(0, {})`` when empty."""
    ppn, props = 0, set()
    for chunk in (text or "").split("+"):
        chunk = chunk.split("#", 1)[0]
        for token in chunk.split(":"):
            token = token.strip()
            if not token or token.isdigit():
                continue
            if token.startswith("ppn="):
                try:
                    ppn = max(ppn, int(token[4:]))
                except ValueError:
                    props.add(token)
            else:
                props.add(token)
    return ppn, frozenset(props)


def suitable_clusters(
    requirements: Sequence[str],
    names: Sequence[str],
    properties: Sequence[Sequence[str]],
    max_cpus_per_machine: Sequence[int],
) -> tuple[list[tuple[int, ...] | None], int]:
    """Per job the indices of clusters meeting its requirement (``None`` = all).

    Returns the list and the number of jobs with at least one ignored
    (undeclared) property. Distinct requirement strings are evaluated once.
    """
    declared = {p for props in properties for p in props}
    prop_sets = [frozenset(p) for p in properties]
    cache: dict[str, tuple[tuple[int, ...] | None, bool]] = {}
    ignored_jobs = 0
    result: list[tuple[int, ...] | None] = []
    for text in requirements:
        if text not in cache:
            ppn, props = parse_requirement(text)
            ignored = any(not p.startswith("cl_") and p not in declared for p in props)
            wanted = {p for p in props if p.startswith("cl_") or p in declared}
            if not ppn and not wanted:
                cache[text] = (None, ignored)
            else:
                cache[text] = (
                    tuple(
                        index
                        for index, name in enumerate(names)
                        if max_cpus_per_machine[index] >= ppn
                        and all(p[3:] == name if p.startswith("cl_") else p in prop_sets[index] for p in wanted)
                    ),
                    ignored,
                )
        suitable, ignored = cache[text]
        ignored_jobs += ignored
        result.append(suitable)
    return result, ignored_jobs


#: How a ``.machines`` file says a cluster's machines belong to a partition (``sched_engine.logs.slurm_conf``).
PARTITION_PROPERTY = "partition="


def partition_property(name: str) -> str:
    """The cluster property saying its machines belong to partition ``name``."""
    return PARTITION_PROPERTY + name


def partitions_named(properties: Sequence[str]) -> tuple[str, ...]:
    """The partitions a cluster's properties name, in their order (the inverse of :func:`partition_property`)."""
    return tuple(p[len(PARTITION_PROPERTY):] for p in properties if p.startswith(PARTITION_PROPERTY))


def partition_clusters(partitions: Sequence[str], properties: Sequence[Sequence[str]]
                       ) -> tuple[list[tuple[int, ...] | None], dict[int, str]]:
    """Per job the clusters of its partition (``None``: any), and why a job has none.

    Partitions are honoured only when the hardware names them (a cluster
    property ``partition=<name>``); a job without a partition may use any
    cluster. A job whose partition no cluster names gets no cluster, and the
    returned dict says so for it (job index -> reason).
    """
    named = [frozenset(partitions_named(props)) for props in properties]
    if not any(named):
        return [None] * len(partitions), {}
    by_name: dict[str, tuple[int, ...] | None] = {"": None}
    result, missing = [], {}
    for job, partition in enumerate(partitions):
        if partition not in by_name:
            by_name[partition] = tuple(index for index, names in enumerate(named) if partition in names)
        clusters = by_name[partition]
        if clusters == ():
            missing[job] = f"partition {partition} has no machine"
        result.append(clusters)
    return result, missing


def both(first: tuple[int, ...] | None, second: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The clusters two restrictions allow together (``None``: no restriction)."""
    if first is None or second is None:
        return second if first is None else first
    return tuple(index for index in first if index in second)


def synthetic_requirements(
    requirements: list[str], properties: list[tuple[str, ...]], share: float, rng: np.random.Generator
) -> list[str]:
    """Give a ``share`` of the jobs without a requirement one cluster property.

    For workloads without recorded requirements on clusters with known
    properties (e.g. a PWA log on the MetaCentrum clusters): the property is
    drawn uniformly from those the clusters declare, so a job becomes
    restricted to the clusters offering it. This is a what-if device, not the
    paper's workload-analysis reconstruction (§4.2), which needs per-job
    execution sites.
    """
    declared = sorted({p for props in properties for p in props})
    if not declared:
        return list(requirements)
    chosen = rng.random(len(requirements)) < share
    picks = rng.integers(len(declared), size=len(requirements))
    return [
        text if text or not take else f"1:{declared[pick]}"
        for text, take, pick in zip(requirements, chosen.tolist(), picks.tolist())
    ]
