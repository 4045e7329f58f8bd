"""Capacity planning on the batch engine: the scenario at a size, and the searches of :mod:`.sizing` over it.

Three ways to vary a batch scenario (``mode``):

* ``pool``: the hardware becomes one cluster of ``size`` one-CPU machines
  (jobs may span machines in the batch engine, so only the CPU count
  matters); the search never goes below the widest job's CPU count, since
  a job wider than the machine is cancelled and would leave the time
  metrics, which count completed jobs, looking better than they are;
* ``scale``: every cluster keeps its machines' CPUs and speed and gets
  ``round(machines × size)`` machines (at least one);
* ``load``: the hardware stays, the model's ``load_factor`` becomes
  ``size`` (the arrival-rate scale, see :mod:`sched_engine.batch.model`).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Mapping

import numpy as np

from ..core.errors import ScenarioError
from ..core.result import SimulationResult
from ..runner import normalize_scenario, run_scenario
from . import probe_pool
from .sizing import SizingResult, Target, largest_load, smallest_size

MODES = ("pool", "scale", "load")


def scenario_at(scenario: Mapping[str, Any], mode: str, size: float) -> dict:
    """The normalised batch ``scenario`` (as a dict) with its hardware or load set by ``mode`` and ``size``."""
    result = copy.deepcopy(dict(scenario))
    model = result["model"]
    if mode == "pool":
        model["clusters"] = [{"name": "pool", "machines": int(size), "cpus_per_machine": 1, "speed": 1.0,
                              "properties": []}]
    elif mode == "scale":
        if not model.get("clusters"):
            raise ScenarioError("mode", "scaling needs the clusters named in the scenario; "
                                        "use the pool mode for a trace header's machine")
        for cluster in model["clusters"]:
            per = cluster["cpus_per_machine"]
            machines = max(1, round(cluster["machines"] * size))
            if isinstance(per, list):   # one CPU count per machine: repeat the list's pattern
                per = [per[i % len(per)] for i in range(machines)]
            cluster["machines"], cluster["cpus_per_machine"] = machines, per
    elif mode == "load":
        model["load_factor"] = float(size)
    else:
        raise ScenarioError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    return result


def without_reasons(scenario: dict) -> dict:
    """``scenario`` run without recording why jobs waited (the model's ``reasons: false``): a probe's summary is
    the same, and a full log's reasons (23 M rows for RICC under EASY) are most of a probe's time and storage."""
    return {**scenario, "model": {**scenario["model"], "reasons": False}}


def _metric(result: SimulationResult, name: str) -> float:
    rows = result.summary.loc[result.summary["metric"] == name, "value"]
    if rows.empty:
        known = ", ".join(result.summary["metric"])
        raise ScenarioError("target", f"the run has no summary metric {name!r} (known: {known})")
    return float(rows.iloc[0])


def size_batch(scenario: Mapping[str, Any], target: Target, mode: str = "pool", *,
               run: Callable[[dict], SimulationResult] = run_scenario, progress=None, workers: int = 1) -> SizingResult:
    """Search the size (``pool``: CPUs; ``scale``: factor) or the load factor (``load``) that meets ``target``.

    ``run`` simulates one scenario dict (the app passes its result cache's
    run, so probes are cached like any run); ``progress(probe)`` is told of
    each probe as it finishes. ``workers`` > 1: that many probes side by side
    on local processes forked from this one (:mod:`.probe_pool`; the search's
    steps then narrow ``workers + 1``-fold, :mod:`.sizing`).
    """
    if mode not in MODES:
        raise ScenarioError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    base = normalize_scenario(scenario).to_dict()
    if base["engine"] != "batch":
        raise ScenarioError("engine", "sizing runs on batch scenarios")
    today = run(base)
    _metric(today, target.metric)   # fail early on an unknown metric

    def measure(size: float) -> float:   # a probe needs its summary only: no reasons why jobs waited
        return _metric(run(without_reasons(scenario_at(base, mode, size))), target.metric)

    side = {"progress": progress, "width": workers,
            "measure_many": probe_pool.in_processes(measure, workers) if workers > 1 else None}
    if mode == "load":
        return largest_load(measure, target, start=float(base["model"].get("load_factor", 1.0)), **side)
    if mode == "scale":
        return smallest_size(measure, target, 1.0, minimum=0.01, maximum=64.0, integer=False, **side)
    widest = int(np.nanmax(today.jobs["procs"].to_numpy(float))) if len(today.jobs) else 1
    return smallest_size(measure, target, _metric(today, "cpus"), minimum=max(1, widest), **side)
