"""The Calibrate sweep's candidate values from what the log says, not from a blind grid.

Read once, before any run, from the log's recorded schedule as a run cuts
and sizes its jobs (:func:`findings`; the same numbers as the audit's
``user_max_running_jobs``, ``user_max_cpus``, ``recorded_peak_cpus`` and
``recorded_capacity_cpus``, on the run's clock):

* ``running_jobs`` (``P``) and ``cpus`` (``C``): the most running jobs and
  the most CPUs any one user had at once -- a likely per-user limit;
* the capacity the log used: its peak of CPUs in use and its time-weighted
  99.9th percentile (at least the largest job), where above the hardware.

The grid searches around them (:func:`limit_candidates`,
:func:`capacity_candidates`): per-user limits on a ladder of factors ``f``
a factor of sqrt(2) apart, from a quarter of the peaks to twice them
(:data:`LIMIT_FACTORS`; ``ceil(f * P)`` running jobs and
``max(ceil(f * C), largest job)`` CPUs, so no job is cancelled for asking
more than the limit), beside no limit. Below the peak because a uniform
limit at the busiest user's peak seldom binds: HPC2N's busiest user ran 10
jobs at once, and the limit that reproduces its mean wait best is 4. And the
hardware beside each distinct capacity the log used above it (the audit's
p99.9, then the peak). A log whose schedule fits the hardware has one
capacity: the hardware.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..batch.capacity import LOG, cpus_in_use, recorded_wait_of
from ..batch.model import load_inputs
from ..core import inputs as input_files
from ..runner import normalize_scenario
from .audit_schedule import recorded_schedule, user_peaks
from .baseline_steps import LOG_P999, cluster_specs, log_capacity_clusters, p999_cpus

HARDWARE = "hardware"
#: The factors on the users' peaks the grid tries, beside no limit: 1/4 to 2, sqrt(2) apart.
LIMIT_FACTORS = tuple(2 ** (step / 2) for step in range(-4, 3))


@dataclass(frozen=True)
class GridFindings:
    """What the log says about its site, for the grid (module docstring); 0 where the log records no waits."""

    hardware_cpus: float
    peak_cpus: float
    p999_cpus: float
    largest_job: int
    running_jobs: int        # P: the most running jobs any one user had at once
    cpus: int                # C: the most CPUs any one user had at once
    user: str                # the user with the most running jobs at once


def findings(scenario: dict, inputs=None) -> GridFindings:
    """The findings of a batch scenario's log (its jobs cut and sized as the scenario runs them)."""
    normal = normalize_scenario(scenario, inputs=inputs)
    with input_files.using(inputs):
        batch = load_inputs(normal.model, np.random.default_rng(normal.seed))
    jobs = batch.jobs
    hardware = float(sum(c.total for c in batch.clusters))
    # Without a single recorded wait the log says nothing of the capacity it used (a replay would start every
    # job at its submission): only the hardware is tried.
    _, used = cpus_in_use(jobs) if np.isfinite(recorded_wait_of(jobs)).any() else (None, np.empty(0))
    peaks = user_peaks(recorded_schedule(jobs)[0])
    running, user = (int(peaks["running_jobs"].iloc[0]), str(peaks["user"].iloc[0])) if len(peaks) else (0, "")
    return GridFindings(hardware, float(used.max()) if len(used) else 0.0, p999_cpus(jobs) if len(used) else 0.0,
                        int(jobs["procs"].max()), running, int(math.ceil(peaks["cpus"].max())) if len(peaks) else 0,
                        user)


def limit_candidates(found: GridFindings) -> list[tuple[int, int]]:
    """``(running jobs, CPUs)`` per user to try: no limit ``(0, 0)``, then the users' peaks times each of
    :data:`LIMIT_FACTORS`, each distinct pair once; only no limit where the log records no running job."""
    pairs = [(0, 0)]
    if found.running_jobs < 1:
        return pairs
    for factor in LIMIT_FACTORS:
        pair = (max(1, math.ceil(factor * found.running_jobs)), max(math.ceil(factor * found.cpus), found.largest_job))
        if pair not in pairs:
            pairs.append(pair)
    return pairs


def capacity_candidates(found: GridFindings) -> list[str]:
    """The capacities to try: the hardware, then the audit's p99.9 and the peak where above it, each distinct once
    (the model's ``capacity`` values; :data:`~.baseline_steps.LOG_P999` is built by :func:`capacity_model`)."""
    chosen, sizes = [HARDWARE], [found.hardware_cpus]
    for name, cpus in ((LOG_P999, found.p999_cpus), (LOG, found.peak_cpus)):
        if cpus > found.hardware_cpus and cpus not in sizes:
            chosen.append(name)
            sizes.append(cpus)
    return chosen


def capacity_model(model: dict, capacity: str, inputs=None) -> dict:
    """``model`` on ``capacity``: as it is (the hardware), the model's ``capacity`` field (``log``, ``log_p99``),
    or for :data:`~.baseline_steps.LOG_P999` the one cluster the baseline steps build (given as ``clusters``)."""
    if capacity == HARDWARE:
        return model
    if capacity != LOG_P999:
        return {**model, "capacity": capacity}
    normal = normalize_scenario({"engine": "batch", "policy": "fcfs", "model": model}, inputs=inputs)
    with input_files.using(inputs):
        batch = load_inputs(normal.model, np.random.default_rng(0))
    clusters = log_capacity_clusters(batch.clusters, batch.jobs, LOG_P999)
    if clusters is batch.clusters:
        return model
    return {**{key: value for key, value in model.items() if key != "machines_path"},
            "clusters": cluster_specs(clusters)}
