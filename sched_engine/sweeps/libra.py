"""``libra-intervals`` and ``libra-sensitivity``: Libra against the other network schemes (Libra paper, Sec. V).

Both run the Sec. V-B set-up (1 Gbps machines, Poisson arrivals,
many-to-many applications): ``libra-intervals`` over mean arrival
intervals (Fig. 6), ``libra-sensitivity`` at one interval over the two
quantities the paper does not state, data volume and slots per machine.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core import validate
from ..core.errors import ScenarioError
from ..network import normalize_model, run
from ..network.model import MAX_GENERATED_APPS, MAX_MACHINES, MAX_WIDTH
from ..network.presets import fig6_model
from ..registry import REGISTRY
from .fields import check_fields, mean_std, metrics, numbers, seeds
from .kind import SweepKind

INTERVALS_DEFAULTS = {
    "schemes": ["baseline", "drf", "hug", "libra"], "intervals": [0.1, 0.5, 1.0, 5.0, 10.0], "width": 128,
    "machines": 512, "applications": 100, "seeds": 3, "demand": 1.0, "volume": 0.03, "slots": 2,
}
SENSITIVITY_DEFAULTS = {
    "schemes": ["baseline", "drf", "hug", "libra"], "interval": 0.1, "volumes": [0.01, 0.03, 0.1],
    "slots": [1, 2, 3, 4, 8, 32], "width": 128, "machines": 512, "applications": 100, "seeds": 3, "demand": 1.0,
}
METRICS = ("mean_isolation", "mean_duration_s", "link_utilisation", "mean_wait_s")


def libra_model(interval: float, width: int, applications: int, machines: int, demand: float, volume: float,
                slots: int = INTERVALS_DEFAULTS["slots"]) -> dict:
    """The normalised Sec. V-B model: 1 Gbps machines of ``slots`` containers, Poisson arrivals, many-to-many."""
    model = fig6_model(mean_interval=interval, width=width, count=applications, machines=machines, volume=volume,
                       slots=slots)
    model["generate"]["container"].update(downlink=demand, uplink=demand)
    return normalize_model(model)


def check_model(normal: dict, interval: float, volume: float, slots: int) -> None:
    """Raise the model's own error, on the sweep's field, if the set-up cannot run (e.g. a width beyond the cluster)."""
    try:
        libra_model(interval, normal["width"], normal["applications"], normal["machines"], normal["demand"], volume,
                    slots)
    except ScenarioError as exc:
        raise ScenarioError("width" if "width" in exc.field else exc.field, exc.message) from None


def set_up(s: Mapping[str, Any]) -> dict:
    """The fields both Libra sweep kinds check alike: schemes, cluster, applications, seeds, demand."""
    return {
        "schemes": validate.choices(s["schemes"], "schemes", [p.name for p in REGISTRY.policies("network")]),
        "width": validate.whole(s["width"], "width", minimum=2, maximum=MAX_WIDTH),
        "machines": validate.whole(s["machines"], "machines", minimum=1, maximum=MAX_MACHINES),
        "applications": validate.whole(s["applications"], "applications", minimum=1, maximum=MAX_GENERATED_APPS),
        "seeds": seeds(s["seeds"]),
        "demand": validate.number(s["demand"], "demand", above=0),
    }


def run_point(point: Mapping[str, Any]) -> dict:
    model = libra_model(point["interval"], point["width"], point["applications"], point["machines"],
                        point["demand"], point["volume"], point["slots"])
    policy = REGISTRY.create("network", point["scheme"])   # the registered scheme, its parameters checked
    _, _, summary = run(model, policy, np.random.default_rng(point["seed"]))
    return metrics(dict(zip(summary["metric"], summary["value"])), METRICS)


# --- libra-intervals ----------------------------------------------------------------------------------------

def intervals_normalize(spec: Mapping[str, Any]) -> dict:
    s = check_fields(spec, INTERVALS_DEFAULTS)
    normal = {
        "kind": INTERVALS_NAME,
        **set_up(s),
        "intervals": numbers(s["intervals"], "intervals", above=0),
        "volume": validate.number(s["volume"], "volume", above=0),
        "slots": validate.whole(s["slots"], "slots", minimum=1),
    }
    check_model(normal, normal["intervals"][0], normal["volume"], normal["slots"])
    return normal


def intervals_count(s: dict) -> int:
    return len(s["schemes"]) * len(s["intervals"]) * len(s["seeds"])


def intervals_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("width", "machines", "applications", "demand", "volume", "slots")}
    return [{"scheme": scheme, "interval": interval, "seed": seed, **common}
            for scheme in s["schemes"] for interval in s["intervals"] for seed in s["seeds"]]


def intervals_parameters(point: Mapping[str, Any]) -> dict:
    return {"scheme": point["scheme"], "interval_s": point["interval"], "seed": point["seed"]}


def intervals_summary(table):
    return mean_std(table, ["scheme", "interval_s"], METRICS)


# --- libra-sensitivity --------------------------------------------------------------------------------------

def sensitivity_normalize(spec: Mapping[str, Any]) -> dict:
    s = check_fields(spec, SENSITIVITY_DEFAULTS)
    normal = {
        "kind": SENSITIVITY_NAME,
        **set_up(s),
        "interval": validate.number(s["interval"], "interval", above=0),
        "volumes": numbers(s["volumes"], "volumes", above=0),
        "slots": [int(v) for v in numbers(s["slots"], "slots", integer=True, minimum=1)],
    }
    for slots in normal["slots"]:
        check_model(normal, normal["interval"], normal["volumes"][0], slots)
    return normal


def sensitivity_count(s: dict) -> int:
    return len(s["schemes"]) * len(s["volumes"]) * len(s["slots"]) * len(s["seeds"])


def sensitivity_points(s: dict) -> list[dict]:
    common = {k: s[k] for k in ("interval", "width", "machines", "applications", "demand")}
    return [{"scheme": scheme, "volume": volume, "slots": slots, "seed": seed, **common}
            for scheme in s["schemes"] for volume in s["volumes"] for slots in s["slots"] for seed in s["seeds"]]


def sensitivity_parameters(point: Mapping[str, Any]) -> dict:
    return {"scheme": point["scheme"], "volume_gb": point["volume"], "slots": point["slots"], "seed": point["seed"]}


def sensitivity_summary(table):
    return mean_std(table, ["scheme", "volume_gb", "slots"], METRICS)


INTERVALS_NAME = "libra-intervals"
SENSITIVITY_NAME = "libra-sensitivity"
INTERVALS = SweepKind(INTERVALS_NAME, "Libra over arrival intervals", INTERVALS_DEFAULTS,
                      {"applications": 30, "seeds": 1, "intervals": [0.1, 1.0, 10.0]},
                      intervals_normalize, intervals_count, intervals_points, run_point, intervals_parameters,
                      intervals_summary)
SENSITIVITY = SweepKind(SENSITIVITY_NAME, "Libra over data volume and slots", SENSITIVITY_DEFAULTS,
                        {"applications": 30, "seeds": 1, "volumes": [0.03], "slots": [1, 2, 4, 32]},
                        sensitivity_normalize, sensitivity_count, sensitivity_points, run_point,
                        sensitivity_parameters, sensitivity_summary)
