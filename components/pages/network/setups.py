"""The page's set-ups: the machine and application tables and generators, presets, and the model they make.

Run assembles one network model from them (see :func:`build_model`); an
error names the table row, generator field or file line at fault.
"""

from __future__ import annotations

import re

from sched_engine import ScenarioError
from sched_engine.network import (
    PRESETS,
    apps_from_rows,
    fig6_model,
    is_blank,
    normalize_model,
    number_cell,
    read_app_list,
)
from sched_engine.registry import REGISTRY

from ...services.uploads import UploadError
from .ids import ENGINE

FIG1, FIG6 = "Libra Fig. 1 example", "Libra Fig. 6, 512 machines"
FIG6_PAGE_APPS = 30
MACHINE_COLUMNS = ("name", "count", "cpu", "ram", "uplink", "downlink")
MACHINE_GEN_FIELDS = (("count", "Machines"), ("cpu", "Cores each"), ("ram", "RAM (GB) each"),
                      ("uplink", "Uplink (Gbps)"), ("downlink", "Downlink (Gbps)"))
APP_GEN_FIELDS = (("count", "Applications"), ("mean_interval", "Mean gap between arrivals (s)"),
                  ("width", "Width (containers)"), ("volume", "Data per flow (Gb)"), ("weight", "Weight (0, 1]"),
                  ("cpu", "Cores per container"), ("ram", "RAM (GB) per container"),
                  ("downlink", "Downlink demand (Gbps)"), ("uplink", "Uplink demand (Gbps)"))
DEFAULT_MACHINE_GEN = {"count": 16, "cpu": 8, "ram": 16, "uplink": 1, "downlink": 1}
DEFAULT_APP_GEN = {"count": 12, "mean_interval": 0.5, "width": 8, "volume": 0.5, "weight": 1,
                   "cpu": 1, "ram": 1, "downlink": 0.5, "uplink": 0.5}
UNBOUNDED_MACHINE = {"name": "any", "cpu": 1e300, "ram": 1e300, "uplink": 1, "downlink": 1}
FIELD_PATH = re.compile(r"^(machines|applications)\[(\d+)\](?:\.containers\[(\d+)\])?\.?(.*)$")


def machine_rows(groups: list[dict]) -> list[dict]:
    return [{c: group.get(c, 1 if c == "count" else None) for c in MACHINE_COLUMNS} for group in groups]


def app_rows(apps: list[dict]) -> list[dict]:
    """One table row per container group; an application's own fields repeat on each of its rows."""
    return [
        {**{k: app.get(k) for k in ("name", "arrival", "pattern", "volume", "weight")},
         **{k: group.get(k, 1 if k == "count" else None) for k in ("count", "cpu", "ram", "downlink", "uplink")}}
        for app in apps for group in app["containers"]
    ]


def machines_from_rows(rows: list[dict]) -> tuple[list[dict], list[int]]:
    """Machine groups from table rows and each group's row number; a bad cell names row and column."""
    groups, numbers = [], []
    for number, row in enumerate(rows or [], start=1):
        if is_blank(row, MACHINE_COLUMNS):
            continue
        where = f"machines row {number}"
        group = {c: number_cell(row.get(c), where, c) for c in MACHINE_COLUMNS if c != "name"}
        groups.append({"name": str(row.get("name") or "").strip(), **{k: v for k, v in group.items() if v is not None}})
        numbers.append(number)
    return groups, numbers


def check_app_list(apps: list[dict], origin: dict, label: str) -> None:
    """Check an uploaded list on its own (fields, patterns, numbers); fit on the machines is checked at Run."""
    try:
        normalize_model({"machines": [UNBOUNDED_MACHINE], "applications": apps})
    except ScenarioError as exc:
        raise ui_error(exc, None, origin, label) from None


def ui_error(exc: ScenarioError, machine_rows_at: list[int] | None, origin: dict | None, upload: str | None):
    """Rename a model error after what the person edited: table row, generator field or file line.

    ``machine_rows_at``: table row number per machine group (``None`` when
    the machine generator is used); ``origin``: row or line per container
    group (``None`` when the application generator is used); ``upload``:
    the uploaded file's name when applications come from a file.
    """
    if exc.source:
        return exc
    if exc.field.startswith("generate"):
        rest = exc.field.removeprefix("generate").lstrip(".").removeprefix("container.")
        return ScenarioError(f"application generator, {rest}" if rest else "application generator", exc.message)
    match = FIELD_PATH.match(exc.field)
    if not match:
        return ScenarioError(exc.field, exc.message, source=upload) if upload else exc
    kind, item, group, rest = match.group(1), int(match.group(2)), match.group(3), match.group(4)
    if kind == "machines":
        place = "machine generator" if machine_rows_at is None else f"machines row {machine_rows_at[item]}"
        return ScenarioError(f"{place}, {rest}" if rest else place, exc.message)
    number = (origin or {}).get((item, int(group or 0)))
    rest = rest or ("containers" if group is None else "")
    if upload:
        return ScenarioError(rest if number else exc.field, exc.message, source=upload, line=number)
    place = f"applications row {number}" if number else f"application {item + 1}"
    return ScenarioError(f"{place}, {rest}" if rest else place, exc.message)


def generated_apps(settings: dict) -> tuple[dict | None, list[dict]]:
    """The generator's applications: Poisson arrivals as the model's ``generate`` block, periodic ones listed."""
    gen = settings["app_gen"]
    container = {k: gen.get(k) for k in ("cpu", "ram", "downlink", "uplink")}
    common = {"pattern": settings.get("pattern"), "volume": gen.get("volume"), "weight": gen.get("weight")}
    if settings.get("arrivals") != "periodic":
        return {"count": gen.get("count"), "mean_interval": gen.get("mean_interval"), "width": gen.get("width"),
                "container": container, **common}, []
    count, gap = gen.get("count"), gen.get("mean_interval")
    if not isinstance(count, int) or count < 1:
        raise ScenarioError("application generator, count", f"must be a whole number ≥ 1, got {count!r}")
    if not isinstance(gap, (int, float)) or gap < 0:
        raise ScenarioError("application generator, mean_interval", f"must be a number ≥ 0, got {gap!r}")
    digits = len(str(count))
    return None, [{"name": f"app-{i + 1:0{digits}d}", "arrival": i * gap, **common,
                   "containers": [{"count": gen.get("width"), **container}]} for i in range(count)]


def build_model(settings: dict, draft: dict, uploads) -> dict:
    """The checked network model of the page's set-up; raises :class:`ScenarioError` named for the page.

    ``settings``: ``machine_mode`` (generate|table), ``machine_gen``,
    ``app_mode`` (generate|table|upload), ``app_gen``, ``arrivals``
    (poisson|periodic), ``pattern``.
    """
    if settings["machine_mode"] == "table":
        machines, rows_at = machines_from_rows(draft["machines"])
    else:
        machines, rows_at = [{"name": "M", **settings["machine_gen"]}], None
    generate, apps, origin, upload = None, [], None, None
    if settings["app_mode"] == "table":
        apps, origin = apps_from_rows(list(enumerate(draft["apps"], start=1)), "applications row")
    elif settings["app_mode"] == "upload":
        ref = draft.get("upload")
        if not ref:
            raise ScenarioError("applications", "upload an application list first, or choose the table or generator")
        try:
            data = uploads.path_of(ref["name"]).read_bytes()
        except UploadError as exc:
            raise ScenarioError("applications", f"{ref['label']}: {exc}") from None
        apps, origin = read_app_list(data, ref["label"])
        upload = ref["label"]
    else:
        generate, apps = generated_apps(settings)
    try:
        return normalize_model({"machines": machines, "applications": apps, "generate": generate})
    except ScenarioError as exc:
        raise ui_error(exc, rows_at, origin, upload) from None


def settings_from_model(model: dict) -> dict:
    """Page controls and draft tables showing a model (one machine group of several -> the generator)."""
    groups, gen = model["machines"], model["generate"]
    one_group = len(groups) == 1 and groups[0]["count"] > 1
    machine_gen = {k: groups[0][k] for k, _ in MACHINE_GEN_FIELDS} if one_group else dict(DEFAULT_MACHINE_GEN)
    if gen:
        app_gen = {**{k: gen[k] for k in ("count", "mean_interval", "width", "volume", "weight")}, **gen["container"]}
    else:
        app_gen = dict(DEFAULT_APP_GEN)
    return {
        "machine_mode": "generate" if one_group else "table", "machine_gen": machine_gen,
        "machines": [] if one_group else machine_rows(groups),
        "app_mode": "generate" if gen else "table", "app_gen": app_gen, "arrivals": "poisson",
        "pattern": gen["pattern"] if gen else "many-to-many", "apps": app_rows(model["applications"]),
    }


def preset_model(name: str) -> dict:
    """A preset button's model; Fig. 6 keeps :data:`FIG6_PAGE_APPS` applications so it runs in seconds."""
    return fig6_model(count=FIG6_PAGE_APPS) if name == FIG6 else PRESETS[name]["model"]()


def preset_params(model: dict) -> dict:
    """The ``policy_params`` of the preset whose model ``model`` is (e.g. Fig. 1's candidate set), else ``{}``.

    A run carries a preset's parameters only while the set-up is still the
    preset's: once the person edits a machine or an application, it is their
    own set-up and runs with the registry's defaults.
    """
    for name in PRESETS:
        if normalize_model(preset_model(name)) == model:
            return dict(PRESETS[name]["policy_params"])
    return {}


def preset(name: str) -> dict:
    """Settings of a preset button (see :func:`preset_model`)."""
    model = preset_model(name)
    return {**settings_from_model(model), "schemes": [p["value"] for p in REGISTRY.options(ENGINE)],
            "placement": "paper", "seed": PRESETS[name]["seed"]}


def initial_draft() -> dict:
    settings = preset(FIG1)
    return {"machines": settings["machines"], "apps": settings["apps"], "upload": None}
