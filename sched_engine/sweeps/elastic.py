"""``elastic-fig6``: the YARN-ME paper's Fig. 6 sweep (Iorgulescu et al., §6, Table 2).

For each distribution, ``maxima`` evenly spaced maxima per Table 2 interval
and every combination of them (a *configuration*); ``traces`` generated
traces per configuration, trace ``t`` of configuration ``c`` drawn with seed
``seed + 1000 c + t``. Each trace runs under YARN, Meganode and YARN-ME at
every penalty factor.
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core import validate
from ..core.errors import ScenarioError
from ..elastic import simulate_jobs
from ..elastic.metrics import share_interval
from ..elastic.model import MAX_GENERATED_JOBS, MAX_NODES
from ..elastic.penalty import normalize_penalty
from ..elastic.policies import YARN, YARNME, Meganode
from ..elastic.traces import DISTRIBUTIONS, MB_PER_GB, TABLE2, generate_trace
from .fields import check_fields, numbers
from .kind import SweepKind

DEFAULTS = {
    "distributions": ["uniform", "exponential"], "maxima": 3, "traces": 5, "penalties": [1.5, 3.0],
    "penalty_model": "spill", "nodes": 100, "cores": 16, "node_memory_gb": 10.0, "jobs": 100,
    "arrival_s": [0.0, 1000.0], "seed": 0, "disk_bandwidth_mb_s": None, "elastic_spill_mb_s": 30.0,
}
AXES = ("tasks_per_job", "memory_gb", "duration_s")
SEED_STRIDE = 1000   # trace t of configuration c uses seed + 1000 c + t
MAX_MAXIMA = 20


def penalty_label(factor: float) -> str:
    """``1.5`` -> ``1.5x``: the suffix of a penalty's metric columns."""
    return f"{factor:g}x"


def normalize(spec: Mapping[str, Any]) -> dict:
    s = check_fields(spec, DEFAULTS)
    penalties = numbers(s["penalties"], "penalties", minimum=1.0)
    model = validate.choice(s["penalty_model"], "penalty_model", ("spill", "step"))
    for i, factor in enumerate(penalties):
        normalize_penalty({"kind": model, "factor": factor}, f"penalties[{i}]")
    arrival = s["arrival_s"]
    if not isinstance(arrival, list) or len(arrival) != 2:
        raise ScenarioError("arrival_s", "must be [first, last] second of the arrivals")
    first = validate.number(arrival[0], "arrival_s[0]", minimum=0)
    last = validate.number(arrival[1], "arrival_s[1]", minimum=first)
    disk = s["disk_bandwidth_mb_s"]
    return {
        "kind": KIND_NAME,
        "distributions": validate.choices(s["distributions"], "distributions", DISTRIBUTIONS),
        "maxima": validate.whole(s["maxima"], "maxima", minimum=1, maximum=MAX_MAXIMA),
        "traces": validate.whole(s["traces"], "traces", minimum=1, maximum=SEED_STRIDE),
        "penalties": penalties,
        "penalty_model": model,
        "nodes": validate.whole(s["nodes"], "nodes", minimum=1, maximum=MAX_NODES),
        "cores": validate.whole(s["cores"], "cores", minimum=1),
        "node_memory_gb": validate.number(s["node_memory_gb"], "node_memory_gb", above=0),
        "jobs": validate.whole(s["jobs"], "jobs", minimum=1, maximum=MAX_GENERATED_JOBS),
        "arrival_s": [first, last],
        "seed": validate.whole(s["seed"], "seed", minimum=0),
        "disk_bandwidth_mb_s": None if disk is None else validate.number(disk, "disk_bandwidth_mb_s", minimum=0),
        "elastic_spill_mb_s": validate.number(s["elastic_spill_mb_s"], "elastic_spill_mb_s", above=0),
    }


def configurations(distribution: str, maxima: int) -> list[dict]:
    """Table 2 configurations: each parameter's min with one of ``maxima`` evenly spaced maxima, all combinations."""
    axes = []
    for name in AXES:
        low, (first, last) = TABLE2[distribution][name]
        axes.append([[low, int(m) if name == "tasks_per_job" else float(m)] for m in np.linspace(first, last, maxima)])
    return [dict(zip(AXES, ranges)) for ranges in itertools.product(*axes)]


def count(s: dict) -> int:
    return len(s["distributions"]) * s["maxima"] ** len(AXES) * s["traces"]


def points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("penalties", "penalty_model", "nodes", "cores", "node_memory_gb", "jobs", "arrival_s",
                                "disk_bandwidth_mb_s", "elastic_spill_mb_s")}
    found = []
    for distribution in s["distributions"]:
        for c, ranges in enumerate(configurations(distribution, s["maxima"])):
            for t in range(s["traces"]):
                found.append({"distribution": distribution, "configuration": c, **ranges, "trace": t,
                              "seed": s["seed"] + SEED_STRIDE * c + t, **common})
    return found


def run(point: Mapping[str, Any]) -> dict:
    trace = {"distribution": point["distribution"], "jobs": point["jobs"], "arrival_s": point["arrival_s"],
             **{name: point[name] for name in AXES}}
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


def parameters(point: Mapping[str, Any]) -> dict:
    return {"distribution": point["distribution"], "configuration": point["configuration"],
            "tasks_max": point["tasks_per_job"][1], "memory_gb_max": point["memory_gb"][1],
            "duration_s_max": point["duration_s"][1], "trace": point["trace"], "seed": point["seed"]}


def penalties_of(table: pd.DataFrame) -> list[float]:
    """The penalty factors of an elastic-fig6 table, from its ``ratio_<F>x`` columns."""
    return [float(c[len("ratio_"):-1]) for c in table.columns if c.startswith("ratio_")]


def summary(table: pd.DataFrame) -> pd.DataFrame:
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
    rows = []
    for distribution, part in table.groupby("distribution", sort=False):
        for factor in penalties_of(table):
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


KIND_NAME = "elastic-fig6"
KIND = SweepKind(KIND_NAME, "YARN-ME Fig. 6 (Table 2 sweep)", DEFAULTS, {"maxima": 2, "traces": 2},
                 normalize, count, points, run, parameters, summary)
