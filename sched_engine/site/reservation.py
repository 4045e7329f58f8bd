"""EASY's reservation on a site cluster: when a job that does not fit now could start, and what is left then.

Read from the cluster's running jobs in estimated-end order
(:class:`~.machines.SiteCluster`); nothing here changes the cluster.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import accumulate

import numpy as np

from .machines import SiteCluster, machine_givable


def shadow(cluster: SiteCluster, procs: int, memory_per_cpu: float) -> tuple[float, int, float] | None:
    """EASY's reservation for a job on ``cluster``: (shadow time, extra CPUs, extra memory).

    The earliest estimated end of running jobs after which the job fits
    (CPUs in all, as the batch engine; and memory machine by machine
    when it asks for memory), with the CPUs and memory left over then.
    ``-inf`` when it fits now; ``None`` when the machines that are up
    cannot hold it at all.
    """
    if procs > cluster.up_total or (memory_per_cpu > 0 and not cluster.fits_empty(procs, memory_per_cpu)):
        return None
    need_memory = procs * max(memory_per_cpu, 0.0)
    if cluster.fits(procs, memory_per_cpu):
        return float("-inf"), cluster.free_total - procs, float(cluster.free_memory.sum()) - need_memory
    running, running_cpus, up, held = cluster.running, cluster.running_cpus, cluster.up, cluster.held
    # The first end by which the CPUs in all suffice (no earlier end can hold the job): the running jobs' CPUs
    # summed in end order, every job ending at that time with it.
    freed_by = list(accumulate(running_cpus))
    first = bisect_left(freed_by, procs - cluster.free_total)
    if first == len(running):
        return None
    position = bisect_right(running, (running[first][0], math.inf))
    est_end, available = running[position - 1][0], cluster.free_total + freed_by[position - 1]
    if memory_per_cpu <= 0:
        memory_left = float(cluster.free_memory.sum()) + sum(
            float(sum(held[j][1])) * held[j][3] for _, j in running[:position])
        return est_end, available - procs, memory_left
    # The machines of the jobs ending by then give back their CPUs and memory, all at once: one numpy pass, not
    # one per machine. After it each further end's machines change the total one by one (machine_givable:
    # _givable's integers), ``freed`` holding those machines' free CPUs and memory, summed in the order given
    # back (np.add.at adds in the order listed).
    machines, counts, memory = [], [], []
    for _, job in running[:position]:
        held_machines, held_counts, held_memory, _ = held[job]
        machines += held_machines
        counts += held_counts
        memory += held_memory
    machines = np.array(machines, dtype=np.int64)
    counts, memory = np.array(counts, dtype=np.int64), np.array(memory, dtype=float)
    alive = up[machines]
    free_cpus, free_memory = cluster.free_cpus.copy(), cluster.free_memory.copy()
    np.add.at(free_cpus, machines[alive], counts[alive])
    np.add.at(free_memory, machines[alive], memory[alive])
    givable = int(SiteCluster._givable(free_cpus, free_memory, memory_per_cpu).sum())
    freed: dict[int, list] = {}
    while givable < procs:
        if position == len(running):
            return None
        est_end, applied = running[position][0], position
        while position < len(running) and running[position][0] == est_end:
            available += running_cpus[position]
            position += 1
        for _, job in running[applied:position]:
            held_machines, held_counts, held_memory, _ = held[job]
            for machine, count, given in zip(held_machines, held_counts, held_memory):
                if not up[machine]:
                    continue
                state = freed.get(machine)
                if state is None:
                    state = freed[machine] = [int(free_cpus[machine]), float(free_memory[machine])]
                givable -= machine_givable(state[0], state[1], memory_per_cpu)
                state[0] += count
                state[1] += given
                givable += machine_givable(state[0], state[1], memory_per_cpu)
    for machine, (_, memory_then) in freed.items():
        free_memory[machine] = memory_then
    return est_end, available - procs, float(free_memory.sum()) - need_memory
