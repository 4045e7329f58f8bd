"""The site engine's model: the batch engine's workload, clusters and failures, plus memory, organisation, elasticity.

Normalised form (plain JSON, the scenario's ``model``)::

    {
      "trace": {...}, "clusters": [...], "failures": {...}, "requirements": false,
      "estimates": "perfect", "load_factor": 1.0,              # as the batch engine's model
      "capacity": "log",                                     # optional: the capacity the log used (batch/capacity.py)
      "memory_per_machine_mb": null,                         # or {"<cluster>": MB per machine, ...}
      "default_memory_per_cpu_mb": 2048,                     # a machine's memory when none is given
      "job_memory_per_cpu_mb": 0,                            # a job's memory when the log records none
      "organisation": {"derive": "equal"},                   # or {"derive": "cpu_hours"}, or {"tree": {...}}
      "memory_elastic": {"enabled": false, "min_fraction": 0.5, "penalty": {"kind": "spill", "factor": 2.0}}
    }

Memory per machine comes from ``memory_per_machine_mb`` (by cluster name);
a cluster it does not name gets ``default_memory_per_cpu_mb`` per CPU on each
machine, and the run's summary says so (``memory_assumed``): SWF headers and
``.machines`` files carry no memory. A job asks for its log's memory per CPU
(SWF field 10, else 7) on every CPU; a job whose log records none asks
``job_memory_per_cpu_mb`` (0: it is not limited by memory), counted in the
summary (``jobs_without_memory``).

``organisation``: ``derive`` builds root -> groups -> users from the log
(:mod:`.organisation`; weights ``equal`` or by ``cpu_hours``); ``tree`` gives
the tree itself (checked by :func:`~.organisation.normalize_organisation`).

``memory_elastic``: a job blocked only by memory (its CPUs are free) may
start with a share ``f >= min_fraction`` of its memory and runs
``penalty.runtime(f)`` instead of its run time (a model of
:mod:`sched_engine.elastic.penalty`, YARN-ME's rule applied to batch jobs).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..batch.model import normalize_model as normalize_batch_model
from ..core import validate
from ..core.errors import ScenarioError
from ..elastic.penalty import normalize_penalty
from .organisation import WEIGHTINGS, normalize_organisation

BATCH_FIELDS = ("trace", "clusters", "machines_path", "failures", "requirements", "synthetic_requirements",
                "estimates", "load_factor", "capacity")
SITE_FIELDS = ("memory_per_machine_mb", "default_memory_per_cpu_mb", "job_memory_per_cpu_mb", "organisation",
               "memory_elastic")
DEFAULT_MEMORY_PER_CPU_MB = 2048.0
DEFAULT_ELASTIC = {"enabled": False, "min_fraction": 0.5, "penalty": {"kind": "spill", "factor": 2.0}}


def normalize_model(model: Mapping[str, Any]) -> dict:
    """Check a site model and return its canonical form (see the module docstring)."""
    if not isinstance(model, Mapping):
        raise ScenarioError("", "the model must be an object")
    unknown = sorted(set(model) - set(BATCH_FIELDS) - set(SITE_FIELDS))
    if unknown:
        raise ScenarioError(unknown[0], f"unknown field (known: {', '.join(sorted(BATCH_FIELDS + SITE_FIELDS))})")
    normalized = normalize_batch_model({k: v for k, v in model.items() if k in BATCH_FIELDS})

    memory = model.get("memory_per_machine_mb") or {}
    if not isinstance(memory, Mapping):
        raise ScenarioError("memory_per_machine_mb", "must be an object mapping cluster names to MB per machine")
    names = {c["name"] for c in normalized["clusters"]} or {"cluster"}
    checked_memory = {}
    for name, value in memory.items():
        if name not in names:
            raise ScenarioError(f"memory_per_machine_mb.{name}", f"no cluster is named {name!r} "
                                                                 f"(clusters: {', '.join(sorted(names))})")
        checked_memory[name] = validate.number(value, f"memory_per_machine_mb.{name}", above=0)
    normalized["memory_per_machine_mb"] = dict(sorted(checked_memory.items()))
    normalized["default_memory_per_cpu_mb"] = validate.number(
        model.get("default_memory_per_cpu_mb", DEFAULT_MEMORY_PER_CPU_MB), "default_memory_per_cpu_mb", above=0)
    normalized["job_memory_per_cpu_mb"] = validate.number(
        model.get("job_memory_per_cpu_mb", 0.0), "job_memory_per_cpu_mb", minimum=0.0)

    organisation = model.get("organisation") or {"derive": "equal"}
    if not isinstance(organisation, Mapping) or ("tree" in organisation) == ("derive" in organisation):
        raise ScenarioError("organisation", "give either {\"derive\": \"equal\" | \"cpu_hours\"} or {\"tree\": {...}}")
    if "tree" in organisation:
        normalized["organisation"] = {"tree": normalize_organisation(organisation["tree"], "organisation.tree")}
    else:
        if organisation["derive"] not in WEIGHTINGS:
            raise ScenarioError("organisation.derive", f"must be one of {', '.join(WEIGHTINGS)}, "
                                                       f"got {organisation['derive']!r}")
        normalized["organisation"] = {"derive": organisation["derive"]}

    elastic = model.get("memory_elastic") or {}
    if not isinstance(elastic, Mapping):
        raise ScenarioError("memory_elastic", "must be an object with enabled, min_fraction and penalty")
    unknown = sorted(set(elastic) - set(DEFAULT_ELASTIC))
    if unknown:
        raise ScenarioError(f"memory_elastic.{unknown[0]}", "unknown field (known: enabled, min_fraction, penalty)")
    enabled = elastic.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ScenarioError("memory_elastic.enabled", f"must be true or false, got {enabled!r}")
    fraction = validate.number(elastic.get("min_fraction", DEFAULT_ELASTIC["min_fraction"]),
                               "memory_elastic.min_fraction", above=0)
    if fraction >= 1:
        raise ScenarioError("memory_elastic.min_fraction", f"must be below 1 (a share of the job's memory), "
                                                           f"got {fraction:g}")
    penalty = normalize_penalty(elastic.get("penalty", DEFAULT_ELASTIC["penalty"]), "memory_elastic.penalty")
    normalized["memory_elastic"] = {"enabled": enabled, "min_fraction": fraction, "penalty": penalty}
    return normalized
