"""The machines each job held, as the jobs frame's text (``"0,1,2,7"``), written compiled from a replay's holdings.

:func:`.replay.hold_machines` leaves every job's holding as entries of two
arrays (:func:`.first_fit.replay`'s ``first`` and ``second``): machine ranges
``[first, second)`` on a cluster of one-CPU machines, ``(machine, CPUs
taken)`` pairs elsewhere. The text is the same as
:meth:`~sched_engine.batch.cluster.ClusterState.machines_text` gives for the
Python kernel's holdings (the machines in ascending order, comma-separated),
built as one Arrow string column: its bytes and offsets filled here, no
Python string per job (a full log holds hundreds of thousands).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit


@njit(cache=True)
def _digits(value):
    count = 1
    while value >= 10:
        value //= 10
        count += 1
    return count


@njit(cache=True)
def _machine(k, m, ranges, first):
    """The machine of entry ``k``'s ``m``-th machine (ranges: ``first[k] + m``; pairs: one machine per entry)."""
    return first[k] + m if ranges else first[k]


@njit(cache=True)
def _offsets(ptr, length, cluster_of, one_cpu, first, second):
    """Byte offsets of each job's text (``n + 1``, the last the total)."""
    n = len(ptr)
    offsets = np.zeros(n + 1, dtype=np.int64)
    for job in range(n):
        size = 0
        items = 0
        if length[job] > 0:
            ranges = one_cpu[cluster_of[job]]
            for k in range(ptr[job], ptr[job] + length[job]):
                span = second[k] - first[k] if ranges else 1
                for m in range(span):
                    size += _digits(_machine(k, m, ranges, first))
                    items += 1
        offsets[job + 1] = offsets[job] + size + (items - 1 if items else 0)
    return offsets


@njit(cache=True)
def _fill(ptr, length, cluster_of, one_cpu, first, second, offsets, data):
    for job in range(len(ptr)):
        at = offsets[job]
        if length[job] == 0:
            continue
        ranges = one_cpu[cluster_of[job]]
        for k in range(ptr[job], ptr[job] + length[job]):
            span = second[k] - first[k] if ranges else 1
            for m in range(span):
                if at > offsets[job]:
                    data[at] = 44   # ","
                    at += 1
                value = _machine(k, m, ranges, first)
                end = at + _digits(value)
                for position in range(end - 1, at - 1, -1):
                    data[position] = 48 + value % 10
                    value //= 10
                at = end


def machines_column(ptr, length, cluster_of, one_cpu, first, second) -> pa.Array:
    """Every job's machines as text, in job order (``""`` for a job that held none): ``length[job]`` entries of
    ``first``/``second`` from ``ptr[job]`` on, read as ranges where ``one_cpu[cluster_of[job]]``."""
    offsets = _offsets(ptr, length, cluster_of, one_cpu, first, second)
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    _fill(ptr, length, cluster_of, one_cpu, first, second, offsets, data)
    kind, offsets = (pa.large_string(), offsets) if offsets[-1] >= 2 ** 31 else (pa.string(), offsets.astype(np.int32))
    return pa.Array.from_buffers(kind, len(ptr), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
