"""Parameter sweeps: many runs of one experiment, fanned out, gathered into one table.

A sweep is a plain JSON spec, ``{"kind": ..., <parameters>}``; omitted
parameters take the kind's defaults (:data:`KINDS`). Four kinds:

``elastic-fig6``
    the YARN-ME paper's Fig. 6 sweep (Iorgulescu et al., §6, Table 2). For
    each distribution, ``maxima`` evenly spaced maxima per Table 2 interval
    (tasks per job, memory per task, task duration; the minima stay) and
    every combination of them (a *configuration*); ``traces`` generated
    traces per configuration, trace ``t`` of configuration ``c`` drawn with
    seed ``seed + 1000 c + t``. Each trace runs under YARN, Meganode and
    YARN-ME at every penalty factor (``penalty_model`` spill or step) on
    ``nodes`` nodes of ``cores`` cores and ``node_memory_gb`` GB.
    Parameters: ``distributions``, ``maxima``, ``traces``, ``penalties``,
    ``penalty_model``, ``nodes``, ``cores``, ``node_memory_gb``, ``jobs``,
    ``arrival_s`` ([first, last] second of the uniform arrivals), ``seed``,
    ``disk_bandwidth_mb_s`` and ``elastic_spill_mb_s`` (YARN-ME's
    disk-contention limit, §3.3; ``disk_bandwidth_mb_s`` null -- the
    default, as in the paper's §6.1 set-up -- means no limit).
    Metrics per trace: ``yarn_s``, ``meganode_s`` (average job runtime) and
    per penalty ``F``: ``yarn_me_Fx_s``, ``ratio_Fx`` (YARN-ME / YARN) and
    ``vs_meganode_Fx`` (YARN-ME / Meganode).
``batch-ls-seeds``
    Local Search (and any other batch ``policies``) over ``seeds`` on one
    batch scenario: ``trace`` (a file in ``sample_traces/`` by name, or a
    path), ``jobs`` (first N jobs), ``machines`` (``.machines`` file),
    ``variant`` (BASIC, EXT-FAIL, EXT-REQ, EXT-ALL -- Klusáček & Rudová §5),
    ``failures`` (a failure trace, ``synthetic`` or ``none``),
    ``requirement_share`` (EXT-REQ without recorded requirements: the share
    of jobs given one random cluster property), ``estimates``. Metrics:
    ``mean_response_s``, ``mean_slowdown``, ``mean_bounded_slowdown_tau10``,
    ``mean_wait_s``, ``killed``, ``cancelled``, ``scheduler_cpu_s``.
``libra-intervals``
    Libra against the other network schemes over Poisson mean arrival
    ``intervals`` (Libra paper, Fig. 6): ``schemes``, ``width``, ``machines``
    (1 Gbps links), ``applications``, ``seeds``, ``demand`` (Gbps per
    container), ``volume`` (Gb per flow), ``slots`` (containers per
    machine; an application waits for free slots, Sec. IV-A). Metrics:
    ``mean_isolation``, ``mean_duration_s``, ``link_utilisation``,
    ``mean_wait_s``.
``libra-sensitivity``
    the same set-up at one mean arrival ``interval``, over the two
    quantities the paper does not state (docs/readings.md): ``volumes`` (Gb
    per flow) x ``slots`` (containers per machine), for ``schemes`` and
    ``seeds``; ``width``, ``machines``, ``applications``, ``demand`` as
    above. Metrics as ``libra-intervals``.

``seeds`` is a count ``n`` (seeds 0 .. n-1) or an explicit list. Every point
carries its own seed, used for one ``numpy.random.Generator``; nothing seeds
a global generator, so a spec always gives the same table, whichever
executor ran it and in whatever order the points finished -- except
``scheduler_cpu_s``, a measured CPU time.

:func:`expand` gives a spec's points (JSON dicts with everything needed to
run one); :func:`run_point` runs one and returns a flat dict of metrics (the
Celery task ``schedscope.sweep_point`` calls it); :func:`gather` makes the
table, one row per point (``point``, parameter columns, metric columns);
:func:`summarise` the comparison table; :func:`run_sweep` does all of it on
local processes, or through a :data:`RemoteExecutor` it is given (the web
app's Celery executor, ``components/scaleout/sweep_executor.py``, when
``REDIS_URL`` is set). This library never imports Celery.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from .core.errors import ScenarioError
from .registry import REGISTRY
from .runner import normalize_scenario, run_scenario

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = PROJECT_ROOT / "sample_traces"
EXECUTORS = ("auto", "processes", "serial", "celery")
SEED_STRIDE = 1000   # elastic-fig6: trace t of configuration c uses seed + 1000 c + t

#: Runs points somewhere else (the ``celery`` executor): ``remote(points, report, timeout)`` returns each point's
#: metrics in the points' order, calls ``report()`` after each finished point, raises :class:`SweepPointError`
#: naming a failing point and :class:`SweepError` when ``timeout`` seconds pass without a finished point.
RemoteExecutor = Callable[[list[dict], Callable[[], None], float | None], list[dict]]


class SweepError(ScenarioError):
    """A sweep could not run or finish (no workers, a point failed, ...)."""


class SweepPointError(SweepError):
    """One point of a sweep failed; ``index`` and ``point`` say which."""

    def __init__(self, index: int, point: Mapping[str, Any], reason: str):
        self.index = index
        self.point = dict(point)
        self.reason = reason
        super().__init__(f"points[{index}]", f"{describe(point)}: {reason}")


# --- checking parameters ----------------------------------------------------------------------------------------

def _number(value: Any, field: str, *, integer=False, minimum=None, above=None, maximum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ScenarioError(field, f"must be a number, got {value!r:.40}")
    if integer and value != int(value):
        raise ScenarioError(field, f"must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(field, f"must be at least {minimum:g}, got {value:g}")
    if above is not None and value <= above:
        raise ScenarioError(field, f"must be greater than {above:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise ScenarioError(field, f"must be at most {maximum:g}, got {value:g}")
    return int(value) if integer else float(value)


def _numbers(value: Any, field: str, **limits) -> list:
    if not isinstance(value, list) or not value:
        raise ScenarioError(field, f"must be a non-empty list of numbers, got {value!r:.40}")
    numbers = [_number(v, f"{field}[{i}]", **limits) for i, v in enumerate(value)]
    for i, v in enumerate(numbers):
        if v in numbers[:i]:
            raise ScenarioError(f"{field}[{i}]", f"{v:g} is listed twice")
    return numbers


def _choices(value: Any, field: str, known) -> list[str]:
    known = list(known)
    if not isinstance(value, list) or not value:
        raise ScenarioError(field, f"choose at least one of {', '.join(known)}")
    for i, v in enumerate(value):
        if v not in known:
            raise ScenarioError(f"{field}[{i}]", f"unknown value {v!r} (known: {', '.join(known)})")
        if v in value[:i]:
            raise ScenarioError(f"{field}[{i}]", f"{v!r} is listed twice")
    return list(value)


def _choice(value: Any, field: str, known) -> str:
    if value not in known:
        raise ScenarioError(field, f"unknown value {value!r:.40} (known: {', '.join(known)})")
    return value


def _seeds(value: Any, field: str = "seeds") -> list[int]:
    """A count ``n`` (seeds 0 .. n-1) or an explicit list of distinct seeds."""
    if isinstance(value, list):
        return _numbers(value, field, integer=True, minimum=0)
    return list(range(_number(value, field, integer=True, minimum=1, maximum=10_000)))


def _input_file(value: Any, field: str) -> str:
    """A file in ``sample_traces/`` by name (kept as the name), else an existing path (made absolute)."""
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(field, "name a file: a sample in sample_traces/ or a path")
    if "/" not in value and (SAMPLE_DIR / value).is_file():
        return value
    path = Path(value).expanduser()
    if path.is_file():
        return str(path.resolve())
    if (PROJECT_ROOT / value).is_file():
        return str((PROJECT_ROOT / value).resolve())
    samples = sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_file() and not p.name.endswith((".md", ".json")))
    raise ScenarioError(field, f"no such file {value!r} (samples: {', '.join(samples)})")


def _file_path(value: str) -> str:
    """The path an engine reads for a checked input name."""
    return str(SAMPLE_DIR / value) if "/" not in value else value


def _check_fields(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict:
    unknown = sorted(set(spec) - set(defaults) - {"kind"})
    if unknown:
        raise ScenarioError(unknown[0], f"unknown parameter (known: {', '.join(sorted(defaults))})")
    return {**defaults, **{k: v for k, v in spec.items() if k != "kind"}}


def _metrics(values: Mapping[str, Any], names) -> dict:
    return {name: float(values[name]) for name in names}


# --- elastic-fig6 -----------------------------------------------------------------------------------------------

ELASTIC_DEFAULTS = {
    "distributions": ["uniform", "exponential"], "maxima": 3, "traces": 5, "penalties": [1.5, 3.0],
    "penalty_model": "spill", "nodes": 100, "cores": 16, "node_memory_gb": 10.0, "jobs": 100,
    "arrival_s": [0.0, 1000.0], "seed": 0, "disk_bandwidth_mb_s": None, "elastic_spill_mb_s": 30.0,
}
ELASTIC_AXES = ("tasks_per_job", "memory_gb", "duration_s")


def penalty_label(factor: float) -> str:
    """``1.5`` -> ``1.5x``: the suffix of a penalty's metric columns."""
    return f"{factor:g}x"


def _elastic_normalize(spec: Mapping[str, Any]) -> dict:
    from .elastic.penalty import normalize_penalty
    from .elastic.traces import DISTRIBUTIONS

    s = _check_fields(spec, ELASTIC_DEFAULTS)
    penalties = _numbers(s["penalties"], "penalties", minimum=1.0)
    model = _choice(s["penalty_model"], "penalty_model", ("spill", "step"))
    for i, factor in enumerate(penalties):
        normalize_penalty({"kind": model, "factor": factor}, f"penalties[{i}]")
    arrival = s["arrival_s"]
    if not isinstance(arrival, list) or len(arrival) != 2:
        raise ScenarioError("arrival_s", "must be [first, last] second of the arrivals")
    first = _number(arrival[0], "arrival_s[0]", minimum=0)
    last = _number(arrival[1], "arrival_s[1]", minimum=first)
    disk = s["disk_bandwidth_mb_s"]
    return {
        "kind": "elastic-fig6",
        "distributions": _choices(s["distributions"], "distributions", DISTRIBUTIONS),
        "maxima": _number(s["maxima"], "maxima", integer=True, minimum=1, maximum=20),
        "traces": _number(s["traces"], "traces", integer=True, minimum=1, maximum=SEED_STRIDE),
        "penalties": penalties,
        "penalty_model": model,
        "nodes": _number(s["nodes"], "nodes", integer=True, minimum=1),
        "cores": _number(s["cores"], "cores", integer=True, minimum=1),
        "node_memory_gb": _number(s["node_memory_gb"], "node_memory_gb", above=0),
        "jobs": _number(s["jobs"], "jobs", integer=True, minimum=1),
        "arrival_s": [first, last],
        "seed": _number(s["seed"], "seed", integer=True, minimum=0),
        "disk_bandwidth_mb_s": None if disk is None else _number(disk, "disk_bandwidth_mb_s", minimum=0),
        "elastic_spill_mb_s": _number(s["elastic_spill_mb_s"], "elastic_spill_mb_s", above=0),
    }


def elastic_configurations(distribution: str, maxima: int) -> list[dict]:
    """Table 2 configurations: each parameter's min with one of ``maxima`` evenly spaced maxima, all combinations."""
    from .elastic.traces import TABLE2

    axes = []
    for name in ELASTIC_AXES:
        low, (first, last) = TABLE2[distribution][name]
        axes.append([[low, int(m) if name == "tasks_per_job" else float(m)] for m in np.linspace(first, last, maxima)])
    return [dict(zip(ELASTIC_AXES, ranges)) for ranges in itertools.product(*axes)]


def _elastic_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("penalties", "penalty_model", "nodes", "cores", "node_memory_gb", "jobs", "arrival_s",
                                "disk_bandwidth_mb_s", "elastic_spill_mb_s")}
    points = []
    for distribution in s["distributions"]:
        for c, ranges in enumerate(elastic_configurations(distribution, s["maxima"])):
            for t in range(s["traces"]):
                points.append({"distribution": distribution, "configuration": c, **ranges, "trace": t,
                               "seed": s["seed"] + SEED_STRIDE * c + t, **common})
    return points


def _elastic_run(point: Mapping[str, Any]) -> dict:
    from .elastic import simulate_jobs
    from .elastic.policies import YARN, YARNME, Meganode
    from .elastic.traces import MB_PER_GB, generate_trace

    trace = {"distribution": point["distribution"], "jobs": point["jobs"], "arrival_s": point["arrival_s"],
             **{name: point[name] for name in ELASTIC_AXES}}
    jobs = generate_trace(trace, np.random.default_rng(point["seed"]))
    cores = [point["cores"]] * point["nodes"]
    memory = [int(round(point["node_memory_gb"] * MB_PER_GB))] * point["nodes"]
    model = point["penalty_model"]

    def average(policy, factor=1.0) -> float:
        sim = simulate_jobs(cores, memory, 100, {"kind": model, "factor": factor}, jobs, policy)
        return float(np.mean([s.end - s.job.arrival for s in sim.jobs]))

    yarn, meganode = average(YARN()), average(Meganode())
    out = {"yarn_s": yarn, "meganode_s": meganode}
    for factor in point["penalties"]:
        label = penalty_label(factor)
        me = average(YARNME(disk_bandwidth_mb_s=point["disk_bandwidth_mb_s"],
                            elastic_spill_mb_s=point["elastic_spill_mb_s"]), factor)
        out.update({f"yarn_me_{label}_s": me, f"ratio_{label}": me / yarn, f"vs_meganode_{label}": me / meganode})
    return out


def _elastic_parameters(point: Mapping[str, Any]) -> dict:
    return {"distribution": point["distribution"], "configuration": point["configuration"],
            "tasks_max": point["tasks_per_job"][1], "memory_gb_max": point["memory_gb"][1],
            "duration_s_max": point["duration_s"][1], "trace": point["trace"], "seed": point["seed"]}


def elastic_penalties(table: pd.DataFrame) -> list[float]:
    """The penalty factors of an elastic-fig6 table, from its ``ratio_<F>x`` columns."""
    return [float(c[len("ratio_"):-1]) for c in table.columns if c.startswith("ratio_")]


def _elastic_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per distribution and penalty, over configurations (the figures ``bench/elastic_sweep.py`` prints).

    ``median_ratio``: median over configurations of the configuration's
    median YARN-ME / YARN ratio; ``worst_ratio``: the largest ratio of any
    trace; ``share_le_0_7``: share of configurations whose median ratio is
    at most 0.7; ``beats_meganode``: share of traces on which YARN-ME's
    average job runtime is below Meganode's, with ``beats_meganode_low`` /
    ``beats_meganode_high`` its 95% Wilson interval over the traces
    (:func:`sched_engine.elastic.metrics.share_interval`);
    ``median_vs_meganode``: median YARN-ME / Meganode ratio over traces.
    """
    from .elastic.metrics import share_interval

    rows = []
    for distribution, part in table.groupby("distribution", sort=False):
        for factor in elastic_penalties(table):
            label = penalty_label(factor)
            medians = part.groupby("configuration", sort=True)[f"ratio_{label}"].median().to_numpy()
            beats = int(np.sum(part[f"yarn_me_{label}_s"] < part["meganode_s"]))
            low, high = share_interval(beats, len(part))
            rows.append({
                "distribution": distribution, "penalty": factor, "configurations": len(medians), "traces": len(part),
                "median_ratio": float(np.median(medians)), "worst_ratio": float(part[f"ratio_{label}"].max()),
                "share_le_0_7": float(np.mean(medians <= 0.7)),
                "beats_meganode": beats / len(part), "beats_meganode_low": low, "beats_meganode_high": high,
                "median_vs_meganode": float(np.median(part[f"vs_meganode_{label}"])),
            })
    return pd.DataFrame(rows)


# --- batch-ls-seeds ---------------------------------------------------------------------------------------------

BATCH_DEFAULTS = {
    "trace": "hpc2n-excerpt.swf", "jobs": 1000, "machines": "metacentrum-2009.machines",
    "failures": "metacentrum-2009.failures", "variant": "EXT-ALL", "requirement_share": 0.5,
    "estimates": "perfect", "policies": ["ls"], "seeds": 5,
}
VARIANTS = {  # name: (machine failures, job requirements) -- Klusáček & Rudová §5
    "BASIC": (False, False), "EXT-FAIL": (True, False), "EXT-REQ": (False, True), "EXT-ALL": (True, True),
}
BATCH_METRICS = ("mean_response_s", "mean_slowdown", "mean_bounded_slowdown_tau10", "mean_wait_s", "killed",
                 "cancelled", "scheduler_cpu_s")
BATCH_FIELDS = {"model.trace": "trace", "model.machines_path": "machines", "model.failures": "failures",
                "model.synthetic_requirements": "requirement_share", "model.estimates": "estimates",
                "policy": "policies"}


def _batch_scenario(point: Mapping[str, Any]) -> dict:
    with_failures, with_requirements = VARIANTS[point["variant"]]
    failures = {"kind": "none"}
    if with_failures:
        failures = ({"kind": point["failures"]} if point["failures"] in ("synthetic", "none")
                    else {"kind": "trace", "path": _file_path(point["failures"]), "align": "start"})
    share = point["requirement_share"]
    model = {
        "trace": {"path": _file_path(point["trace"]), "label": Path(point["trace"]).name, "max_jobs": point["jobs"]},
        "failures": failures,
        "requirements": with_requirements,
        "synthetic_requirements": {"share": share} if with_requirements and share else None,
        "estimates": point["estimates"],
    }
    if point["machines"]:
        model["machines_path"] = _file_path(point["machines"])
    return {"engine": "batch", "policy": point["policy"], "seed": point["seed"], "model": model}


def _batch_field(exc: ScenarioError) -> ScenarioError:
    """An engine error re-rooted in the sweep's parameters (files keep their own place)."""
    if exc.source:
        return exc
    field = next((name for prefix, name in BATCH_FIELDS.items() if exc.field.startswith(prefix)), exc.field)
    return ScenarioError(field, exc.message)


def _batch_normalize(spec: Mapping[str, Any]) -> dict:
    s = _check_fields(spec, BATCH_DEFAULTS)
    failures = s["failures"]
    variant = _choice(s["variant"], "variant", VARIANTS)
    normal = {
        "kind": "batch-ls-seeds",
        "trace": _input_file(s["trace"], "trace"),
        "jobs": None if s["jobs"] is None else _number(s["jobs"], "jobs", integer=True, minimum=1),
        "machines": _input_file(s["machines"], "machines") if s["machines"] else None,
        "failures": failures if failures in ("synthetic", "none") else _input_file(failures, "failures"),
        "variant": variant,
        "requirement_share": _number(s["requirement_share"], "requirement_share", minimum=0, maximum=1),
        "estimates": _choice(s["estimates"], "estimates", ("perfect", "trace")),
        "policies": _choices(s["policies"], "policies", [p.name for p in REGISTRY.policies("batch")]),
        "seeds": _seeds(s["seeds"]),
    }
    if VARIANTS[variant][0] and normal["failures"] == "none":
        raise ScenarioError("variant", f"{variant} needs failures: name a failure trace or 'synthetic'")
    _batch_model(normal)
    return normal


def _batch_model(s: dict) -> dict:
    """The normalised batch model (checks the files; their SHA-256 joins the sweep's hash)."""
    try:
        return normalize_scenario(_batch_scenario({**s, "policy": s["policies"][0], "seed": s["seeds"][0]})).model
    except ScenarioError as exc:
        raise _batch_field(exc) from None


def _batch_inputs(model: dict) -> dict:
    """What a batch sweep reads, by content: the trace's and failure trace's SHA-256 and the clusters."""
    return {"trace": model["trace"]["sha256"], "failures": model["failures"].get("sha256"),
            "clusters": model["clusters"]}


def _batch_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("trace", "jobs", "machines", "failures", "variant", "requirement_share", "estimates")}
    return [{"policy": policy, "seed": seed, **common} for policy in s["policies"] for seed in s["seeds"]]


def _batch_run(point: Mapping[str, Any]) -> dict:
    try:
        result = run_scenario(_batch_scenario(point))
    except ScenarioError as exc:
        raise _batch_field(exc) from None
    return {name: float(result.summary_value(name)) for name in BATCH_METRICS}


def _batch_parameters(point: Mapping[str, Any]) -> dict:
    return {"policy": point["policy"], "variant": point["variant"], "seed": point["seed"]}


# --- libra-intervals --------------------------------------------------------------------------------------------

LIBRA_DEFAULTS = {
    "schemes": ["baseline", "drf", "hug", "libra"], "intervals": [0.1, 0.5, 1.0, 5.0, 10.0], "width": 128,
    "machines": 512, "applications": 100, "seeds": 3, "demand": 1.0, "volume": 0.03, "slots": 2,
}
LIBRA_METRICS = ("mean_isolation", "mean_duration_s", "link_utilisation", "mean_wait_s")


def libra_model(interval: float, width: int, applications: int, machines: int, demand: float, volume: float,
                slots: int = LIBRA_DEFAULTS["slots"]) -> dict:
    """The normalised Sec. V-B model: 1 Gbps machines of ``slots`` containers, Poisson arrivals, many-to-many."""
    from .network import normalize_model
    from .network.presets import fig6_model

    model = fig6_model(mean_interval=interval, width=width, count=applications, machines=machines, volume=volume,
                       slots=slots)
    model["generate"]["container"].update(downlink=demand, uplink=demand)
    return normalize_model(model)


def _libra_check(normal: dict, interval: float, volume: float, slots: int) -> None:
    """Raise the model's own error, on the sweep's field, if the set-up cannot run (e.g. a width beyond the cluster)."""
    try:
        libra_model(interval, normal["width"], normal["applications"], normal["machines"], normal["demand"], volume,
                    slots)
    except ScenarioError as exc:
        raise ScenarioError("width" if "width" in exc.field else exc.field, exc.message) from None


def _libra_set_up(s: Mapping[str, Any]) -> dict:
    """The fields both Libra sweep kinds check alike: schemes, cluster, applications, seeds, demand."""
    return {
        "schemes": _choices(s["schemes"], "schemes", [p.name for p in REGISTRY.policies("network")]),
        "width": _number(s["width"], "width", integer=True, minimum=2),
        "machines": _number(s["machines"], "machines", integer=True, minimum=1),
        "applications": _number(s["applications"], "applications", integer=True, minimum=1),
        "seeds": _seeds(s["seeds"]),
        "demand": _number(s["demand"], "demand", above=0),
    }


def _libra_normalize(spec: Mapping[str, Any]) -> dict:
    s = _check_fields(spec, LIBRA_DEFAULTS)
    normal = {
        "kind": "libra-intervals",
        **_libra_set_up(s),
        "intervals": _numbers(s["intervals"], "intervals", above=0),
        "volume": _number(s["volume"], "volume", above=0),
        "slots": _number(s["slots"], "slots", integer=True, minimum=1),
    }
    _libra_check(normal, normal["intervals"][0], normal["volume"], normal["slots"])
    return normal


def _libra_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("width", "machines", "applications", "demand", "volume", "slots")}
    return [{"scheme": scheme, "interval": interval, "seed": seed, **common}
            for scheme in s["schemes"] for interval in s["intervals"] for seed in s["seeds"]]


def _libra_run(point: Mapping[str, Any]) -> dict:
    from .network import run
    from .network.policies import NetworkScheme

    model = libra_model(point["interval"], point["width"], point["applications"], point["machines"],
                        point["demand"], point["volume"], point["slots"])
    policy = NetworkScheme(**REGISTRY.policy("network", point["scheme"]).params)
    _, _, summary = run(model, policy, np.random.default_rng(point["seed"]))
    return _metrics(dict(zip(summary["metric"], summary["value"])), LIBRA_METRICS)


def _libra_parameters(point: Mapping[str, Any]) -> dict:
    return {"scheme": point["scheme"], "interval_s": point["interval"], "seed": point["seed"]}


# --- libra-sensitivity ------------------------------------------------------------------------------------------

SENSITIVITY_DEFAULTS = {
    "schemes": ["baseline", "drf", "hug", "libra"], "interval": 0.1, "volumes": [0.01, 0.03, 0.1],
    "slots": [1, 2, 3, 4, 8, 32], "width": 128, "machines": 512, "applications": 100, "seeds": 3, "demand": 1.0,
}


def _sensitivity_normalize(spec: Mapping[str, Any]) -> dict:
    s = _check_fields(spec, SENSITIVITY_DEFAULTS)
    normal = {
        "kind": "libra-sensitivity",
        **_libra_set_up(s),
        "interval": _number(s["interval"], "interval", above=0),
        "volumes": _numbers(s["volumes"], "volumes", above=0),
        "slots": [int(v) for v in _numbers(s["slots"], "slots", integer=True, minimum=1)],
    }
    for slots in normal["slots"]:
        _libra_check(normal, normal["interval"], normal["volumes"][0], slots)
    return normal


def _sensitivity_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("interval", "width", "machines", "applications", "demand")}
    return [{"scheme": scheme, "volume": volume, "slots": slots, "seed": seed, **common}
            for scheme in s["schemes"] for volume in s["volumes"] for slots in s["slots"] for seed in s["seeds"]]


def _sensitivity_parameters(point: Mapping[str, Any]) -> dict:
    return {"scheme": point["scheme"], "volume_gb": point["volume"], "slots": point["slots"], "seed": point["seed"]}


# --- the kinds --------------------------------------------------------------------------------------------------

def mean_std(table: pd.DataFrame, by: list[str], metrics) -> pd.DataFrame:
    """Per group (in order of first appearance): ``runs``, then ``<metric>_mean`` and ``<metric>_std``.

    ``std`` is the sample standard deviation (n - 1), empty for one run.
    """
    grouped = table.groupby(by, sort=False)
    out = grouped.size().rename("runs").to_frame()
    for metric in metrics:
        out[f"{metric}_mean"] = grouped[metric].mean()
        out[f"{metric}_std"] = grouped[metric].std(ddof=1)
    return out.reset_index()


@dataclass(frozen=True)
class SweepKind:
    name: str
    label: str
    defaults: Mapping[str, Any]
    quick: Mapping[str, Any]        # a small spec for --quick
    normalize: Callable[[Mapping[str, Any]], dict]
    points: Callable[[dict], list[dict]]
    run: Callable[[Mapping[str, Any]], dict]
    parameters: Callable[[Mapping[str, Any]], dict]
    summarise: Callable[[pd.DataFrame], pd.DataFrame]
    fingerprint: Callable[[dict], Any] = lambda spec: None   # input contents that join the spec's hash


KINDS = {kind.name: kind for kind in (
    SweepKind("elastic-fig6", "YARN-ME Fig. 6 (Table 2 sweep)", ELASTIC_DEFAULTS, {"maxima": 2, "traces": 2},
              _elastic_normalize, _elastic_points, _elastic_run, _elastic_parameters, _elastic_summary),
    SweepKind("batch-ls-seeds", "Local Search over seeds", BATCH_DEFAULTS, {"jobs": 500, "seeds": 3},
              _batch_normalize, _batch_points, _batch_run, _batch_parameters,
              lambda table: mean_std(table, ["policy"], BATCH_METRICS),
              fingerprint=lambda spec: _batch_inputs(_batch_model(spec))),
    SweepKind("libra-intervals", "Libra over arrival intervals", LIBRA_DEFAULTS,
              {"applications": 30, "seeds": 1, "intervals": [0.1, 1.0, 10.0]},
              _libra_normalize, _libra_points, _libra_run, _libra_parameters,
              lambda table: mean_std(table, ["scheme", "interval_s"], LIBRA_METRICS)),
    SweepKind("libra-sensitivity", "Libra over data volume and slots", SENSITIVITY_DEFAULTS,
              {"applications": 30, "seeds": 1, "volumes": [0.03], "slots": [1, 2, 4, 32]},
              _sensitivity_normalize, _sensitivity_points, _libra_run, _sensitivity_parameters,
              lambda table: mean_std(table, ["scheme", "volume_gb", "slots"], LIBRA_METRICS)),
)}


def kind_of(spec: Any) -> SweepKind:
    if not isinstance(spec, Mapping):
        raise ScenarioError("", "a sweep spec must be a JSON object with a kind")
    name = spec.get("kind")
    if name not in KINDS:
        raise ScenarioError("kind", f"unknown sweep kind {name!r:.40} (known: {', '.join(KINDS)})")
    return KINDS[name]


def normalize_spec(spec: Mapping[str, Any]) -> dict:
    """The spec checked, with every default filled in; raises :class:`ScenarioError` naming the parameter."""
    return kind_of(spec).normalize(spec)


def spec_hash(spec: Mapping[str, Any]) -> str:
    """SHA-256 of the normalised spec (canonical JSON) and of the contents of the files it reads."""
    normal = normalize_spec(spec)
    payload = {"spec": normal, "inputs": KINDS[normal["kind"]].fingerprint(normal)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def expand(spec: Mapping[str, Any]) -> list[dict]:
    """The spec's points, in order: ``{"kind", "index", <concrete parameters>, "seed"}`` each."""
    normal = normalize_spec(spec)
    return [{"kind": normal["kind"], "index": i, **point} for i, point in enumerate(KINDS[normal["kind"]].points(normal))]


def run_point(point: Mapping[str, Any]) -> dict:
    """Run one point; a flat JSON dict of metrics (numbers)."""
    return kind_of(point).run(point)


def describe(point: Mapping[str, Any]) -> str:
    """A point in a few words, e.g. ``libra-intervals scheme=libra interval_s=0.1 seed=2``."""
    kind = KINDS.get(point.get("kind"))
    if kind is None:
        return f"point {point.get('index')}"
    try:
        fields = kind.parameters(point)
    except (KeyError, TypeError, IndexError):
        fields = {}
    return " ".join([kind.name, *(f"{k}={v}" for k, v in fields.items())])


def gather(points: list[Mapping[str, Any]], results: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per point, sorted by point index: ``point``, parameter columns, metric columns."""
    if len(points) != len(results):
        raise ValueError(f"{len(points)} points but {len(results)} results")
    rows = sorted(({"point": p["index"], **kind_of(p).parameters(p), **r} for p, r in zip(points, results)),
                  key=lambda row: row["point"])
    return pd.DataFrame(rows)


def summarise(spec: Mapping[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    """The comparison table of a gathered sweep (mean ± std over seeds, or the Fig. 6 figures)."""
    return kind_of(spec).summarise(table)


# --- running ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepRun:
    """A finished sweep: the normalised spec, its points, the gathered table and how it ran."""

    spec: dict
    points: list[dict]
    table: pd.DataFrame
    executor: str        # processes, serial or celery
    workers: int
    wall_seconds: float

    def summary(self) -> pd.DataFrame:
        return summarise(self.spec, self.table)


def _watch_parent(parent: int) -> None:
    """In a pool worker: exit when the process that started the pool is gone (killed, cancelled)."""
    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _attempt(point: dict) -> tuple[bool, Any]:
    """Run a point, never raising: ``(True, metrics)`` or ``(False, reason)`` (exceptions may not pickle)."""
    try:
        return True, run_point(point)
    except Exception as exc:   # noqa: BLE001 -- any failure becomes the point's typed error
        return False, str(exc) if isinstance(exc, ScenarioError) else f"{type(exc).__name__}: {exc}"


def _serial(points, report) -> list[dict]:
    results = []
    for point in points:
        ok, value = _attempt(point)
        if not ok:
            raise SweepPointError(point["index"], point, value)
        results.append(value)
        report()
    return results


def _processes(points, workers: int, report) -> list[dict]:
    results: list[dict | None] = [None] * len(points)
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_watch_parent, initargs=(os.getpid(),))
    try:
        pending = {pool.submit(_attempt, point): i for i, point in enumerate(points)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.get):
                i = pending.pop(future)
                try:
                    ok, value = future.result()
                except Exception as exc:   # noqa: BLE001 -- e.g. the worker process died
                    ok, value = False, f"the worker process failed ({type(exc).__name__}: {exc})"
                if not ok:
                    raise SweepPointError(points[i]["index"], points[i], value)
                results[i] = value
                report()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def run_sweep(
    spec: Mapping[str, Any],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    executor: str = "auto",
    timeout: float | None = None,
    remote: RemoteExecutor | None = None,
) -> SweepRun:
    """Run every point of ``spec`` and gather the table.

    ``executor``: ``auto`` sends the points to ``remote`` when one is given
    (the web app passes its Celery executor when ``REDIS_URL`` is set), else
    runs them on ``workers`` local processes (default: the CPU count; one
    worker runs them in this process); ``processes``, ``serial`` and
    ``celery`` (``remote``, which must be given) force one way.
    ``progress(done, total)`` is called at the start and after each point.
    ``timeout``: with ``remote``, give up after that many seconds without a
    finished point. A failing point raises :class:`SweepPointError` naming
    it; points still queued are dropped.
    """
    if executor not in EXECUTORS:
        raise ScenarioError("executor", f"unknown executor {executor!r} (known: {', '.join(EXECUTORS)})")
    if workers is not None:
        workers = _number(workers, "workers", integer=True, minimum=1)
    normal = normalize_spec(spec)
    points = expand(normal)
    total = len(points)
    done = 0

    def report():
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    remote = remote if executor in ("auto", "celery") else None
    if executor == "celery" and remote is None:
        raise SweepError("executor", "Celery needs REDIS_URL (redis://host:port/db) in the environment")
    started = time.perf_counter()
    if remote is not None:
        used, count = "celery", 0
        results = remote(points, report, timeout)
    else:
        count = 1 if executor == "serial" else max(1, min(workers or os.cpu_count() or 1, total))
        used = "serial" if count == 1 else "processes"
        results = _serial(points, report) if count == 1 else _processes(points, count, report)
    return SweepRun(normal, points, gather(points, results), used, count, time.perf_counter() - started)


# --- command line -----------------------------------------------------------------------------------------------

def quick_spec(kind: str) -> dict:
    """A kind's small spec (``--quick``): a few seconds to a minute on two cores."""
    return {"kind": kind, **KINDS[kind].quick}


def terminal_progress(stream=None) -> Callable[[int, int], None]:
    """A ``progress`` callback printing ``runs done/total``: in place on a terminal, one line each otherwise."""
    stream = stream or sys.stderr
    live = stream.isatty()

    def show(done: int, total: int) -> None:
        start = "\r" if live else ""
        end = "\n" if not live or done == total else ""
        stream.write(f"{start}runs {done}/{total}{end}")
        stream.flush()

    return show


def write_sweep(run: SweepRun, out: str | os.PathLike) -> list[Path]:
    """``sweep.csv`` (points x metrics), ``summary.csv`` and the normalised ``spec.json`` in ``out``."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "sweep.csv", directory / "summary.csv", directory / "spec.json"]
    run.table.to_csv(written[0], index=False)
    run.summary().to_csv(written[1], index=False)
    written[2].write_text(json.dumps(run.spec, indent=2) + "\n", encoding="utf-8")
    return written


def mean_std_text(mean: float, std: float | None = None) -> str:
    """``9716 ± 222``, ``8.06 ± 5.6``: the mean to 4 significant digits, the std to 2, no exponents.

    A std of rounding noise (below 1e-9 of the mean) shows as 0; a missing
    one (a single run) is left out.
    """
    def digits(value: float, significant: int) -> str:
        if value == 0 or not math.isfinite(value):
            return f"{value:g}"
        value = float(f"{value:.{significant}g}")   # 0.99999 is 1.000, not 1.0000
        decimals = max(0, significant - 1 - math.floor(math.log10(abs(value))))
        return f"{value:.{decimals}f}"

    if mean is None or mean != mean:
        return ""
    text = digits(mean, 4)
    if std is None or std != std:
        return text
    return f"{text} ± {digits(0.0 if abs(std) <= 1e-9 * max(1.0, abs(mean)) else std, 2)}"


def format_summary(summary: pd.DataFrame) -> str:
    """The comparison table as text; ``<metric>_mean`` and ``<metric>_std`` pairs shown as ``mean ± std``."""
    table = summary.copy()
    for column in [c for c in summary.columns if c.endswith("_mean")]:
        metric = column[: -len("_mean")]
        if f"{metric}_std" in table:
            table[metric] = [mean_std_text(m, s) for m, s in zip(table.pop(column), table.pop(f"{metric}_std"))]
    return table.to_string(index=False, float_format=lambda v: f"{v:.4g}")
