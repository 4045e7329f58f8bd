"""The network-isolation model: machines with access links, applications of containers.

Scenario ``model`` format (JSON)::

    {
      "machines": [{"name": "M", "count": 512, "cpu": 32, "ram": 64,
                    "uplink": 1, "downlink": 1}],
      "applications": [{"name": "A1", "arrival": 0, "weight": 1,
                        "pattern": "all-to-all", "volume": 0.5,
                        "containers": [{"count": 4, "cpu": 1, "ram": 1,
                                        "downlink": 0.5, "uplink": 0.5}]}],
      "generate": {"count": 100, "mean_interval": 0.1, "width": 128,
                   "pattern": "many-to-many", "volume": 0.03, "weight": 1,
                   "container": {"cpu": 1, "ram": 1, "downlink": 1, "uplink": 1}},
      "horizon": null
    }

``machines`` lists groups of identical machines (``count`` defaults to 1; a
group of several is named ``<name>1 .. <name>N``). Bandwidth is in Gbps, data
``volume`` in Gb per flow, CPU in cores, RAM in GB. Each application is a
set of containers with the paper's demand vector (CPU, RAM, downlink, uplink)
(Sec. II-A), a weight ``omega`` in (0, 1] (Table I) and a communication
``pattern`` (see :data:`PATTERNS`). ``generate`` (optional) adds ``count``
identical applications with Poisson arrivals (exponential gaps of mean
``mean_interval`` seconds, the first at ``start``), drawn from the run's
random generator. ``horizon`` (optional) stops the simulation early.

:func:`normalize_model` checks everything a user can get wrong and raises a
:class:`~sched_engine.core.ScenarioError` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core import validate
from ..core.errors import ScenarioError

PATTERNS = {
    "all-to-all": "every container sends one flow to every other container",
    "one-to-one": "containers pair up (0-1, 2-3, ...; an odd last one pairs with 0) and exchange a flow each way",
    "many-to-many": "the first half of the containers sends one flow to every container of the second half (shuffle)",
    "external": "each container exchanges one flow per direction with outside the cluster",
}
MACHINE_KEYS = {"name", "count", "cpu", "ram", "uplink", "downlink"}
CONTAINER_KEYS = {"count", "cpu", "ram", "uplink", "downlink"}
APP_KEYS = {"name", "arrival", "weight", "pattern", "volume", "containers"}
GENERATE_KEYS = {"count", "mean_interval", "width", "pattern", "volume", "weight", "container", "start", "prefix"}
MODEL_KEYS = {"machines", "applications", "generate", "horizon"}
#: Bounds checked before anything is built per machine, container or flow (the paper's largest set-up,
#: Fig. 6, has 512 machines and applications of 128 containers; an all-to-all application of width w has
#: w (w - 1) flows).
MAX_MACHINES = 100_000          # in all machine groups together
MAX_WIDTH = 4_096               # containers of one application
MAX_GENERATED_APPS = 100_000


def _bandwidth(raw: Mapping[str, Any], key: str, field: str, *, positive: bool) -> float:
    value = validate.number(raw.get(key, 0.0 if not positive else None), f"{field}.{key}")
    if value < 0:
        raise ScenarioError(f"{field}.{key}", f"bandwidth cannot be negative, got {value:g} Gbps")
    if positive and value == 0:
        raise ScenarioError(f"{field}.{key}", "link capacity must be greater than 0 Gbps")
    return value


def _pattern(value: Any, field: str) -> str:
    if not isinstance(value, str) or value not in PATTERNS:
        raise ScenarioError(field, f"unknown pattern {value!r} (known: {', '.join(PATTERNS)})")
    return value


def _weight(raw: Mapping[str, Any], field: str) -> float:
    weight = validate.number(raw.get("weight", 1.0), f"{field}.weight", above=0)
    if weight > 1:
        raise ScenarioError(f"{field}.weight", f"a weight is in (0, 1] (Table I), got {weight:g}")
    return weight


def _machines(raw: Any) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("machines", "the cluster needs at least one machine group")
    groups = []
    for index, item in enumerate(raw):
        field = f"machines[{index}]"
        item = validate.mapping(item, field, MACHINE_KEYS)
        groups.append({
            "name": validate.name(item.get("name", "M"), f"{field}.name"),
            "count": validate.whole(item.get("count", 1), f"{field}.count", above=0, maximum=MAX_MACHINES),
            "cpu": validate.number(item.get("cpu"), f"{field}.cpu", above=0),
            "ram": validate.number(item.get("ram"), f"{field}.ram", above=0),
            "uplink": _bandwidth(item, "uplink", field, positive=True),
            "downlink": _bandwidth(item, "downlink", field, positive=True),
        })
    total = sum(group["count"] for group in groups)
    if total > MAX_MACHINES:
        raise ScenarioError("machines", f"{total:,} machines in all, at most {MAX_MACHINES:,}")
    seen: set[str] = set()
    for name in machine_names(groups):
        if name in seen:
            raise ScenarioError("machines", f"machine name {name!r} occurs twice; give the groups distinct names")
        seen.add(name)
    return groups


def _container(raw: Any, field: str, machines: list[dict]) -> dict:
    raw = validate.mapping(raw, field, CONTAINER_KEYS)
    container = {
        "count": validate.whole(raw.get("count", 1), f"{field}.count", above=0, maximum=MAX_WIDTH),
        "cpu": validate.number(raw.get("cpu"), f"{field}.cpu", minimum=0.0),
        "ram": validate.number(raw.get("ram"), f"{field}.ram", minimum=0.0),
        "downlink": _bandwidth(raw, "downlink", field, positive=False),
        "uplink": _bandwidth(raw, "uplink", field, positive=False),
    }
    if not any(m["cpu"] >= container["cpu"] and m["ram"] >= container["ram"] for m in machines):
        largest_cpu = max(m["cpu"] for m in machines)
        largest_ram = max(m["ram"] for m in machines)
        raise ScenarioError(
            field,
            f"a container needing {container['cpu']:g} CPU and {container['ram']:g} GB RAM fits on no machine "
            f"(largest: {largest_cpu:g} CPU, {largest_ram:g} GB RAM)",
        )
    return container


def _check_fits_cluster(containers: list[dict], machines: list[dict], field: str) -> None:
    for resource in ("cpu", "ram"):
        need = sum(c["count"] * c[resource] for c in containers)
        have = sum(m["count"] * m[resource] for m in machines)
        if need > have:
            raise ScenarioError(field, f"the application needs {need:g} {resource.upper()} in all, the cluster has {have:g}")


def _application(raw: Any, field: str, machines: list[dict]) -> dict:
    raw = validate.mapping(raw, field, APP_KEYS)
    items = raw.get("containers")
    if not isinstance(items, list) or not items:
        raise ScenarioError(f"{field}.containers", "an application needs at least one container")
    containers = [_container(c, f"{field}.containers[{i}]", machines) for i, c in enumerate(items)]
    pattern = _pattern(raw.get("pattern", "all-to-all"), f"{field}.pattern")
    width = sum(c["count"] for c in containers)
    if width > MAX_WIDTH:
        raise ScenarioError(f"{field}.containers", f"{width:,} containers in all, at most {MAX_WIDTH:,}")
    if pattern != "external" and width < 2:
        raise ScenarioError(f"{field}.containers", f"pattern {pattern!r} needs at least 2 containers")
    _check_fits_cluster(containers, machines, f"{field}.containers")
    return {
        "name": validate.name(raw.get("name"), f"{field}.name"),
        "arrival": validate.number(raw.get("arrival", 0.0), f"{field}.arrival", minimum=0.0),
        "weight": _weight(raw, field),
        "pattern": pattern,
        "volume": validate.number(raw.get("volume", 1.0), f"{field}.volume", above=0),
        "containers": containers,
    }


def _generate(raw: Any, machines: list[dict]) -> dict | None:
    if raw is None:
        return None
    field = "generate"
    raw = validate.mapping(raw, field, GENERATE_KEYS)
    pattern = _pattern(raw.get("pattern", "many-to-many"), f"{field}.pattern")
    width = validate.whole(raw.get("width"), f"{field}.width", above=0, maximum=MAX_WIDTH)
    if pattern != "external" and width < 2:
        raise ScenarioError(f"{field}.width", f"pattern {pattern!r} needs at least 2 containers")
    container = _container({**validate.mapping(raw.get("container"), f"{field}.container", CONTAINER_KEYS - {"count"}),
                            "count": width}, f"{field}.container", machines)
    _check_fits_cluster([container], machines, f"{field}.width")
    return {
        "count": validate.whole(raw.get("count"), f"{field}.count", above=0, maximum=MAX_GENERATED_APPS),
        "mean_interval": validate.number(raw.get("mean_interval"), f"{field}.mean_interval", above=0),
        "start": validate.number(raw.get("start", 0.0), f"{field}.start", minimum=0.0),
        "width": width,
        "pattern": pattern,
        "volume": validate.number(raw.get("volume", 1.0), f"{field}.volume", above=0),
        "weight": _weight(raw, field),
        "container": {k: container[k] for k in ("cpu", "ram", "downlink", "uplink")},
        "prefix": validate.name(raw.get("prefix", "app-"), f"{field}.prefix"),
    }


def normalize_model(model: Mapping[str, Any]) -> dict:
    """Validate a network model and return its canonical form (see module doc)."""
    model = validate.mapping(model, "", MODEL_KEYS)
    machines = _machines(model.get("machines"))
    raw_apps = model.get("applications", [])
    if not isinstance(raw_apps, list):
        raise ScenarioError("applications", "must be a list of applications")
    apps = [_application(a, f"applications[{i}]", machines) for i, a in enumerate(raw_apps)]
    names: set[str] = set()
    for i, app in enumerate(apps):
        if app["name"] in names:
            raise ScenarioError(f"applications[{i}].name", f"application name {app['name']!r} is used twice")
        names.add(app["name"])
    generate = _generate(model.get("generate"), machines)
    if not apps and generate is None:
        raise ScenarioError("applications", "give at least one application or a 'generate' block")
    horizon = model.get("horizon")
    return {
        "machines": machines,
        "applications": apps,
        "generate": generate,
        "horizon": None if horizon is None else validate.number(horizon, "horizon", above=0),
    }


def machine_names(groups: list[dict]) -> list[str]:
    """Machine names in index order: a group of one keeps its name, larger groups are numbered."""
    names = []
    for group in groups:
        if group["count"] == 1:
            names.append(group["name"])
        else:
            names.extend(f"{group['name']}{i + 1}" for i in range(group["count"]))
    return names


@dataclass(frozen=True)
class Cluster:
    """Machine capacities as arrays indexed by machine (links: uplink k, downlink M + k)."""

    names: tuple[str, ...]
    cpu: np.ndarray
    ram: np.ndarray
    uplink: np.ndarray
    downlink: np.ndarray

    @classmethod
    def from_groups(cls, groups: list[dict]) -> "Cluster":
        def column(key):
            return np.repeat([g[key] for g in groups], [g["count"] for g in groups]).astype(float)

        return cls(tuple(machine_names(groups)), column("cpu"), column("ram"), column("uplink"), column("downlink"))

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def link_capacity(self) -> np.ndarray:
        """Capacity (Gbps) of every link: uplinks first, then downlinks."""
        return np.concatenate([self.uplink, self.downlink])

    def link_names(self) -> list[str]:
        return [f"{n}/up" for n in self.names] + [f"{n}/down" for n in self.names]


@dataclass(frozen=True)
class Application:
    """One application expanded to containers and to flow counts per container.

    ``cpu, ram, up, down`` are per-container arrays; ``out_flows`` and
    ``in_flows`` count the flows leaving and entering each container under
    the pattern. A container's demand on a direction without flows is 0
    (nothing would use it), so ``up``/``down`` are the *effective* demands.
    """

    name: str
    arrival: float
    weight: float
    pattern: str
    volume: float
    cpu: np.ndarray
    ram: np.ndarray
    up: np.ndarray
    down: np.ndarray
    out_flows: np.ndarray
    in_flows: np.ndarray

    @property
    def width(self) -> int:
        return len(self.cpu)


def flow_counts(pattern: str, width: int, up: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flows leaving and entering each container under ``pattern`` (:data:`PATTERNS`)."""
    if pattern == "external":
        return (up > 0).astype(int), (down > 0).astype(int)
    if pattern == "all-to-all":
        both = np.full(width, width - 1)
        return both, both.copy()
    if pattern == "one-to-one":
        both = np.ones(width, dtype=int)
        if width % 2:
            both[0] += 1
        return both, both.copy()
    senders = width // 2
    out_flows = np.where(np.arange(width) < senders, width - senders, 0)
    in_flows = np.where(np.arange(width) < senders, 0, senders)
    return out_flows, in_flows


def flow_pairs(pattern: str, width: int, up: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sender, receiver)`` container of every flow under ``pattern``; -1 is outside the cluster.

    The same flows :func:`flow_counts` counts. ``up``/``down`` matter only
    for ``external``: a container sends out if it has uplink demand and
    receives from outside if it has downlink demand.
    """
    index = np.arange(width)
    if pattern == "external":
        senders, receivers = index[up > 0], index[down > 0]
        return (np.concatenate([senders, np.full(len(receivers), -1)]),
                np.concatenate([np.full(len(senders), -1), receivers]))
    if pattern == "all-to-all":
        sender, receiver = np.meshgrid(index, index, indexing="ij")
        other = sender != receiver
        return sender[other], receiver[other]
    if pattern == "one-to-one":
        first = index[0:width - 1:2]
        second = first + 1
        if width % 2:
            first, second = np.append(first, width - 1), np.append(second, 0)
        return np.concatenate([first, second]), np.concatenate([second, first])
    half = width // 2
    sender, receiver = np.meshgrid(index[:half], index[half:], indexing="ij")
    return sender.ravel(), receiver.ravel()


def make_application(name, arrival, weight, pattern, volume, containers) -> Application:
    counts = [c["count"] for c in containers]

    def column(key):
        return np.repeat([c[key] for c in containers], counts).astype(float)

    up, down = column("uplink"), column("downlink")
    out_flows, in_flows = flow_counts(pattern, int(sum(counts)), up, down)
    return Application(
        name=name, arrival=float(arrival), weight=float(weight), pattern=pattern, volume=float(volume),
        cpu=column("cpu"), ram=column("ram"),
        up=np.where(out_flows > 0, up, 0.0), down=np.where(in_flows > 0, down, 0.0),
        out_flows=out_flows, in_flows=in_flows,
    )


def applications(model: Mapping[str, Any], rng: np.random.Generator) -> list[Application]:
    """Every application of a normalised model, listed ones and generated ones, by arrival."""
    apps = [
        make_application(a["name"], a["arrival"], a["weight"], a["pattern"], a["volume"], a["containers"])
        for a in model["applications"]
    ]
    spec = model["generate"]
    if spec is not None:
        gaps = rng.exponential(spec["mean_interval"], size=spec["count"])
        arrivals = spec["start"] + np.concatenate([[0.0], np.cumsum(gaps[1:])])
        digits = len(str(spec["count"]))
        container = {**spec["container"], "count": spec["width"]}
        apps.extend(
            make_application(f"{spec['prefix']}{i + 1:0{digits}d}", t, spec["weight"], spec["pattern"],
                             spec["volume"], [container])
            for i, t in enumerate(arrivals)
        )
    order = sorted(range(len(apps)), key=lambda i: (apps[i].arrival, i))
    return [apps[i] for i in order]
