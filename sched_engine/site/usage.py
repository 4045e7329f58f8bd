"""What a site run holds per user and per group, observed from the batch kernel's jobs (a :class:`JobObserver`).

The kernel (:class:`~sched_engine.batch.simulate.BatchSimulation`) tells
:class:`SiteUsage` as jobs enter and leave the queue, start and end
(:class:`~sched_engine.batch.simulate.JobObserver`). It keeps, per leaf of
the organisation (a user), the CPUs and memory its running jobs hold, their
exponentially decayed usage (with a half-life) and, per group (the
organisation's first level), the jobs running and waiting. The fair orders
read the first two (:mod:`.order`); the timeline reads the samples.

Samples: every ``sample_step`` seconds (about :data:`SAMPLES` over the
trace's span; each holds from its time to the next), ``(time, CPUs per
group, memory per group, running jobs per group, waiting jobs per group,
CPUs in use, CPUs up, memory in use, memory up)``.

Invariant: between instants ``leaf_cpus[l]`` sums ``procs`` over leaf
``l``'s running jobs and ``leaf_memory[l]`` their memory held (``procs ×
memory per CPU × share held``).
"""

from __future__ import annotations

import numpy as np

SAMPLES = 2000


class SiteUsage:
    """Per leaf and per group usage of one site run, kept from the kernel's job events (module docstring)."""

    def __init__(self, *, leaf, group_of_leaf, leaf_count: int, clusters, half_life_s: float, span: float):
        self.leaf = list(map(int, leaf))
        self.group_of_leaf = list(group_of_leaf)
        self.clusters = clusters
        self.half_life_s = half_life_s
        self.total_cpus = float(sum(c.total for c in clusters))
        self.total_memory = float(sum(c.total_memory for c in clusters)) or 1.0
        self.leaf_cpus = [0.0] * leaf_count
        self.leaf_memory = [0.0] * leaf_count
        self.decayed = np.zeros((leaf_count, 2))
        self.groups = max(group_of_leaf, default=-1) + 1
        self.group_waiting = [0] * self.groups
        self.group_running = [0] * self.groups
        self.sample_step = max(1.0, span / SAMPLES)
        self.next_sample = 0.0
        self.samples: list[tuple] = []
        self.now = 0.0
        self.sim = None

    def bind(self, sim) -> None:
        """The run whose jobs these are (its ``procs``, ``memory_per_cpu`` and ``memory_fraction``)."""
        self.sim = sim

    def memory_held(self, job: int) -> float:
        """MB a running job holds in all."""
        sim = self.sim
        return sim.procs[job] * sim.memory_per_cpu[job] * sim.memory_fraction[job]

    # --- the kernel's job events (JobObserver) ----------------------------------------------------

    def queued(self, job: int) -> None:
        self.group_waiting[self.group_of_leaf[self.leaf[job]]] += 1

    def left_queue(self, job: int) -> None:
        self.group_waiting[self.group_of_leaf[self.leaf[job]]] -= 1

    def started(self, job: int) -> None:
        leaf = self.leaf[job]
        sim = self.sim
        self.leaf_cpus[leaf] += sim.procs[job]
        # procs × (memory per CPU × share), as the cluster was given it (the same rounding as it was kept)
        self.leaf_memory[leaf] += sim.procs[job] * (sim.memory_per_cpu[job] * sim.memory_fraction[job])
        self.group_running[self.group_of_leaf[leaf]] += 1

    def finished(self, job: int) -> None:
        leaf = self.leaf[job]
        self.leaf_cpus[leaf] -= self.sim.procs[job]
        self.leaf_memory[leaf] -= self.memory_held(job)
        self.group_running[self.group_of_leaf[leaf]] -= 1

    def advance(self, time: float) -> None:
        """Time passes to ``time``: past usage decays (with a half-life) and the samples before it are taken."""
        half_life = self.half_life_s
        if half_life > 0 and time > self.now:
            keep = 0.5 ** ((time - self.now) / half_life)
            current = np.stack([np.asarray(self.leaf_cpus) / max(self.total_cpus, 1.0),
                                np.asarray(self.leaf_memory) / self.total_memory], axis=1)
            self.decayed = self.decayed * keep + current * (1.0 - keep)
        self.sample_until(time)
        self.now = time

    def sample_until(self, time: float) -> None:
        """Take the samples due before ``time`` (the state holds from the last event until then)."""
        while self.next_sample < time:
            clusters = self.clusters
            used = sum(c.up_total - c.free_total for c in clusters)
            group_cpus = np.bincount(self.group_of_leaf, weights=self.leaf_cpus, minlength=self.groups)
            group_memory = np.bincount(self.group_of_leaf, weights=self.leaf_memory, minlength=self.groups)
            running = np.array(self.group_running, dtype=np.int64)
            waiting = np.array(self.group_waiting, dtype=np.int64)
            self.samples.append((self.next_sample, group_cpus, group_memory, running, waiting, used,
                                 sum(c.up_total for c in clusters), sum(c.used_memory for c in clusters),
                                 sum(c.up_memory for c in clusters)))
            self.next_sample += self.sample_step
