"""First fit over a cluster's machines, compiled: which machines each job of a finished schedule held.

The rule is :class:`~sched_engine.batch.cluster.ClusterState`'s: a job
takes the free CPUs of the lowest-numbered machines, the last one possibly
in part. Here minus every machine's free CPUs sits in a leaf of a min
segment tree (:mod:`.segment`), so the next machine with a free CPU (a leaf
at most -1) is found in ``O(log machines)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .segment import build, first_at_most, leaves_for, set_leaf


@njit(cache=True)
def replay(jobs, starting, cluster_of, procs, machine_cpus, first_machine, one_cpu, ptr, first, second):
    """Replay the schedule's events (``jobs[i]`` starts if ``starting[i]``, else ends), in order.

    A starting job's holding is written at ``ptr[job]`` onwards: on a
    cluster of one-CPU machines (``one_cpu``) as machine ranges
    ``[first, second)``, else as ``(machine, CPUs taken)`` pairs; ``ptr``
    must leave room for ``min(procs, machines)`` entries per job. Returns
    each job's number of entries.
    """
    machines = len(machine_cpus)
    size = leaves_for(machines)
    tree = np.zeros(2 * size, dtype=np.int64)   # leaf m: minus machine m's free CPUs
    for m in range(machines):
        tree[size + m] = -machine_cpus[m]
    build(tree, 0, size)
    length = np.zeros(len(procs), dtype=np.int64)
    rights = np.empty(64, dtype=np.int64)
    for i in range(len(jobs)):
        job = jobs[i]
        c = cluster_of[job]
        base = ptr[job]
        if starting[i]:
            need = procs[job]
            lo = first_machine[c]
            k = 0
            while need > 0:
                m = first_at_most(tree, 0, size, lo, first_machine[c + 1], -1, rights)
                if m < 0:
                    raise RuntimeError("first fit: a job starts on a cluster without its CPUs free")
                free = -tree[size + m]
                taken = free if free < need else need
                set_leaf(tree, 0, size, m, taken - free)
                need -= taken
                local = m - first_machine[c]   # holdings name machines by their index in the cluster
                if one_cpu[c]:
                    if k > 0 and second[base + k - 1] == local:
                        second[base + k - 1] = local + 1
                    else:
                        first[base + k] = local
                        second[base + k] = local + 1
                        k += 1
                else:
                    first[base + k] = local
                    second[base + k] = taken
                    k += 1
                lo = m + 1
            length[job] = k
        else:
            offset = first_machine[c]
            for k in range(length[job]):
                if one_cpu[c]:
                    for m in range(offset + first[base + k], offset + second[base + k]):
                        set_leaf(tree, 0, size, m, tree[size + m] - 1)
                else:
                    m = offset + first[base + k]
                    set_leaf(tree, 0, size, m, tree[size + m] - second[base + k])
    return length
