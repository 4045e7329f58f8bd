"""The page's form and the elasticity model it describes: cluster, trace generator or loaded trace, penalty, presets.

Every form value is checked as a number before the engine sees it; an error
names the form field (or the trace's file, line and field).
"""

from __future__ import annotations

import math

from sched_engine import ScenarioError
from sched_engine.elastic import MB_PER_GB, normalize_model, normalize_penalty, paper_model, two_job_model
from sched_engine.registry import REGISTRY

from ...services.uploads import UploadError
from . import ids

RANGES = (
    # parameter, label, step, whole numbers
    ("tasks_per_job", "Tasks per job", 1, True),
    ("memory_gb", "Memory per task (GB)", 0.1, False),
    ("duration_s", "Task duration (s)", 1, False),
)


def number(value, label: str, *, integer=False, minimum=None, above=None):
    """A form value as a number; a :class:`ScenarioError` naming the form field otherwise."""
    if value is None or value == "":
        raise ScenarioError(label, "enter a number")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(label, f"must be a number, got {value!r}")
    if integer and value != int(value):
        raise ScenarioError(label, f"must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(label, f"must be at least {minimum:g}, got {value:g}")
    if above is not None and value <= above:
        raise ScenarioError(label, f"must be greater than {above:g}, got {value:g}")
    return int(value) if integer else float(value)


def controls_from_model(model: dict) -> dict:
    """Form values that reproduce an engine model (used by the presets).

    A generated trace fills the generator fields; listed jobs become the
    loaded trace (``loaded``).
    """
    group = model["nodes"][0]
    trace = model["trace"]
    penalty = model["penalty"]
    controls = {
        "nodes": group["count"], "cores": group["cores"], "node_memory_gb": group["memory_mb"] / MB_PER_GB,
        "penalty_kind": penalty["kind"], "factor": penalty.get("factor", 1.5),
        "policies": [option["value"] for option in REGISTRY.options(ids.ENGINE)],
    }
    if trace["kind"] == "generated":
        controls.update({"source": "generated", "jobs": trace["jobs"], "distribution": trace["distribution"],
                         **{name: trace[name] for name, *_ in RANGES}, "loaded": None})
    else:
        controls.update({"source": "loaded", "loaded": trace})
    return controls


PRESETS = {
    ids.PRESET_PAPER: ("YARN-ME paper, 100 nodes", paper_model),
    ids.PRESET_TWO_JOB: ("Two-job example", two_job_model),
}


def preset_controls(button: str) -> dict:
    label, factory = PRESETS[button]
    model = factory()
    controls = controls_from_model(model)
    if controls["loaded"] is not None:
        controls["loaded"] = {**controls["loaded"], "label": label.lower()}
    return controls


def penalty_from_form(kind: str, factor, shape: str, fraction, ratio) -> dict:
    """A checked penalty model from the form; raises :class:`ScenarioError` naming the input."""
    if kind == "fitted":
        model = {"kind": "fitted", "shape": shape,
                 "profile_fraction": number(fraction, "Profiling run: memory fraction"),
                 "profile_ratio": number(ratio, "Profiling run: runtime / ideal")}
    else:
        model = {"kind": kind, "factor": number(factor, "Penalty factor")}
    try:
        return normalize_penalty(model)
    except ScenarioError as exc:
        label = {"penalty.factor": "Penalty factor", "penalty.profile_fraction": "Profiling run: memory fraction",
                 "penalty.profile_ratio": "Profiling run: runtime / ideal"}.get(exc.field, exc.field)
        raise ScenarioError(label, exc.message) from None


def trace_spec(form: dict, loaded: dict | None, uploads) -> dict:
    """The model's ``trace``: generated from the form, or the loaded one (an upload resolved to its file)."""
    if form["source"] == "generated":
        ranges = {}
        for name, label, _, integer in RANGES:
            low, high = form["ranges"].get(name, (None, None))
            ranges[name] = [number(low, f"{label} min", integer=integer, above=0),
                            number(high, f"{label} max", integer=integer, above=0)]
            if ranges[name][1] < ranges[name][0]:
                raise ScenarioError(label, f"max {ranges[name][1]:g} is below min {ranges[name][0]:g}")
        return {"kind": "generated", "distribution": form["distribution"],
                "jobs": number(form["jobs"], "Jobs", integer=True, minimum=1), **ranges}
    if not loaded:
        raise ScenarioError("Trace", "no trace loaded: upload an SLS JSON or CSV trace, or generate one")
    if loaded["kind"] == "jobs":
        return {"kind": "jobs", "jobs": loaded["jobs"]}
    try:
        path = uploads.path_of(loaded["name"])
    except UploadError as exc:
        raise ScenarioError("Trace", f"{loaded['label']}: {exc}") from None
    return {"kind": "file", "path": str(path), "format": "auto", "label": loaded["label"]}


def build_model(form: dict, loaded: dict | None, uploads) -> dict:
    """The normalised elasticity model the form describes.

    ``form``: ``nodes``, ``cores``, ``node_memory_gb``, ``source``
    (generated|loaded), ``jobs``, ``distribution``, ``ranges`` ({parameter:
    [min, max]}), ``penalty`` (the form's penalty fields). Raises
    :class:`ScenarioError` naming the form field or the trace's file, line
    and field (e.g. a task needing more memory than any node).
    """
    nodes = [{"count": number(form["nodes"], "Nodes", integer=True, minimum=1),
              "cores": number(form["cores"], "Cores per node", integer=True, minimum=1),
              "memory_mb": int(round(number(form["node_memory_gb"], "Memory per node (GB)", above=0) * MB_PER_GB))}]
    penalty = penalty_from_form(**form["penalty"])
    return normalize_model({"nodes": nodes, "memory_step_mb": 100, "penalty": penalty,
                            "trace": trace_spec(form, loaded, uploads)})


def form_values(nodes, cores, memory, source, jobs, distribution, range_values, range_ids, kind, factor, shape,
          fraction, ratio) -> dict:
    ranges: dict[str, list] = {}
    for component_id, value in zip(range_ids, range_values):
        ranges.setdefault(component_id["name"], [None, None])[component_id["end"]] = value
    return {"nodes": nodes, "cores": cores, "node_memory_gb": memory, "source": source, "jobs": jobs,
            "distribution": distribution, "ranges": ranges,
            "penalty": {"kind": kind, "factor": factor, "shape": shape, "fraction": fraction, "ratio": ratio}}
