"""What every run would otherwise pay in its own process, paid once in the server before it forks runs.

The embedded manager forks a process per run (:mod:`.jobs`); a forked run
inherits what its server process computed, and pays again for what it did
not (measured by ``bench/run_fixed_cost.py``):

* the engine's modules imported lazily, where a run first needs them (the
  log readers a trace's format sniffer tries, the compiled loops, the CSV
  writers): 0.1-0.3 CPU-s in every run that imports them, about a third of
  a small run's own time under load (``bench/load.py``, profiled);
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
import importlib
import pkgutil

import sched_engine
from sched_engine.batch import compiled
from sched_engine.core.scenario import code_version
from sched_engine.registry import REGISTRY


def warm_imports() -> None:
    """Import every module of the engine now, once per process (about 0.3 CPU-s), so that no run imports one.

    Also keeps imports out of the server's request threads, where a test
    server's shutdown can interrupt one half-way (see ``tests/conftest.py``).
    ``sched_engine.__main__`` (the command line) is left out.
    """
    for module in pkgutil.walk_packages(sched_engine.__path__, "sched_engine."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)


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
