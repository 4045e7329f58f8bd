"""What every run would otherwise pay in its own process, paid once in the server before it forks runs.

The embedded manager forks a process per run (:mod:`.jobs`); a forked run
inherits what its server process computed, and pays again for what it did
not (measured by ``bench/run_fixed_cost.py``):

* the code digests that key the results cache
  (:func:`sched_engine.core.scenario.code_version`): 0.08-0.33 CPU-s per
  engine, to read and parse every module the engine imports;
* loading the batch kernel's compiled loops (numba and its cached machine
  code, about 0.7 CPU-s; :func:`sched_engine.batch.compiled.warm`), which
  every run of a large enough log takes;
* the garbage collector's walk over the server's objects: a run's first
  collection touches every page it inherited, copying them all. Objects
  frozen before forking (:func:`gc.freeze`) are never walked again.
"""

from __future__ import annotations

import gc

from sched_engine.batch import compiled
from sched_engine.core.scenario import code_version
from sched_engine.registry import REGISTRY


def warm_code_digests() -> None:
    """Compute every engine's code digest now (each is computed once per process)."""
    for engine in REGISTRY.engines():
        code_version(engine.name)


def warm_compiled_kernels() -> None:
    """Load the compiled loops in a serving process (not in every app the tests build: the first load may
    compile them, seconds of CPU)."""
    compiled.warm()


def freeze_for_forks() -> None:
    """Move every object alive now out of the collector's reach (the server's, built once per process): the runs
    it forks share its pages instead of copying them. Only for a serving process: objects frozen are never
    collected, so a process that builds many apps (the tests) must not call it."""
    gc.collect()
    gc.freeze()
