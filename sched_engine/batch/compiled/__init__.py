"""The batch kernel's compiled loops: when a run may take them, and running them on a :class:`BatchSimulation`.

A compiled loop is the Python kernel's decisions, made by numba code over
arrays (:mod:`.easy_kernel`); it fills the simulation's lists as the event
loop does (start and end times, statuses, clusters, machines, timeline
samples, the pending recorder's places and heads), so every frame is built
from it by the same code. The Python kernel stays the reference and the
only path for everything else (failures, queue ranks, user limits, memory,
observers, other policies): :func:`eligible` says which runs are which.

``kernel`` (a :class:`BatchSimulation` argument, or the ``SCHEDSCOPE_KERNEL``
environment variable for the command line and benchmarks): ``"auto"`` takes
the compiled loop for an eligible run of at least :data:`MIN_JOBS` jobs (a
smaller run finishes before numba would have loaded), ``"compiled"`` for
every eligible run, ``"python"`` never.
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
import sys
from pathlib import Path

import numpy as np

from ..cluster import ClusterState

MIN_JOBS = 5_000
MAX_CLUSTER_JOBS = 20_000_000   # clusters × jobs: the per-cluster arrays of a compiled run stay in memory
KERNELS = ("auto", "compiled", "python")


def _point_numba_cache() -> None:
    """Keep numba's machine code in a directory named by the digest of this package's sources.

    numba checks a cached function against its own file only: a loop that
    calls a changed function of another module (:mod:`.parts`,
    :mod:`.segment`) would load its old machine code. Under a directory per
    version of the whole package, any edit compiles everything once again.
    Set before numba is imported (it reads ``NUMBA_CACHE_DIR`` then), or on
    its config if it was (the loops' caches are placed when they are defined).
    """
    here = Path(__file__).parent
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in sorted(here.glob("*.py")))).hexdigest()[:16]
    where = str(here / "__pycache__" / f"numba-{digest}")
    os.environ["NUMBA_CACHE_DIR"] = where
    if "numba" in sys.modules:
        sys.modules["numba"].config.CACHE_DIR = where


_point_numba_cache()


def chosen_kernel(kernel: str | None) -> str:
    kernel = kernel or os.environ.get("SCHEDSCOPE_KERNEL", "auto")
    if kernel not in KERNELS:
        raise ValueError(f"kernel {kernel!r}: one of {', '.join(KERNELS)}")
    return kernel


def eligible(sim, kernel: str) -> bool:
    """Whether ``sim`` runs on a compiled loop: EASY or Conservative on CPU-only clusters that never fail,
    without queue ranks, user limits, observers, memory or a decision log (and numba installed), and whose
    arrays fit in memory (a profile per cluster of up to twice as many breakpoints as jobs)."""
    if kernel == "python" or (kernel == "auto" and len(sim.submit) < MIN_JOBS):
        return False
    from ..policies.conservative import Conservative
    from ..policies.easy import EASY
    if type(sim.policy) not in (EASY, Conservative):
        return False
    plain = (not sim._failures and sim.rank is None and sim.limits is None and sim.best_effort is None
             and not sim.observers and sim.memory_per_cpu is None and sim.stretch is None
             and sim.decision_log is None and all(type(c) is ClusterState for c in sim.clusters))
    if not plain or (sim.submit and min(sim.submit) < 0):   # the event loop refuses a negative time itself
        return False
    if not all(map(math.isfinite, sim.planned)):   # the kernel's size trees hold estimates, infinity for "gone"
        return False
    if len(sim.clusters) * len(sim.submit) > MAX_CLUSTER_JOBS:
        return False
    try:
        from . import cons_kernel, easy_kernel  # noqa: F401  (numba, and the loops compiled or from its cache)
    except ImportError:
        return False
    return True


def run(sim) -> None:
    """Run ``sim`` (eligible, policy bound) on its compiled loop and fill its lists.

    The cyclic garbage collector is paused meanwhile: the lists filled here
    hold millions of numbers and no cycle, and each collection would walk
    them all again.
    """
    from .loops import run_loop
    collecting = gc.isenabled()
    gc.disable()
    try:
        run_loop(sim)
    finally:
        if collecting:
            gc.enable()


def warm() -> bool:
    """Load the compiled loops now (compiling them once if numba's cache has none), by running a tiny run of
    each policy on them and writing a tiny frame through the compiled CSV writer: a server does this before it
    forks runs, which then find them loaded. False without numba."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    from ..pending import exact_table
    from ..policies.conservative import Conservative
    from ..policies.easy import EASY
    from ..simulate import BatchSimulation
    for policy in (EASY, Conservative):
        sim = BatchSimulation(submit=[0.0, 0.0, 1.0], run_time=[2.0, 1.0, 1.0], estimate=[2.0, 1.0, 1.0],
                              procs=[2, 2, 1], suitable=[None] * 3, clusters=[ClusterState(0, "warm", [1, 1], 1.0)],
                              policy=policy(), rng=np.random.default_rng(0), kernel="compiled")
        sim.run()
        exact_table(sim)
    import io

    import pandas as pd

    from ...core import csv_rows  # the writer of a run's millions of reasons
    frame = pd.DataFrame({"job": pd.Categorical(["1"]), "time": [1.0]})
    csv_rows.write(frame, csv_rows.plan(frame), io.BytesIO(), 1)
    return True
