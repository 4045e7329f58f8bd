"""The sweep form: each kind's fields, their starting values, and the checked sweep spec they describe.

Choices come back from the browser: only the offered ones are accepted.
An error is shown with the field's label, not the spec's parameter name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sched_engine import ScenarioError
from sched_engine.core.inputs import SAMPLE, SHA256, UPLOAD, upload_reference
from sched_engine.elastic import DISTRIBUTIONS
from sched_engine.registry import REGISTRY
from sched_engine.sweeps import VARIANTS, normalize_spec, point_count
from sched_engine.sweeps.calibrate import CAPACITY_WORDS, FROM_LOG

from ...services.uploads import upload_choices

SAMPLE_TRACES = ("hpc2n-excerpt.swf", "cerit-sc-2013-slice.swf")
SAMPLE_MACHINES = ("metacentrum-2009.machines", "hpc2n-excerpt.machines", "cerit-sc-2013.machines")
#: The kind whose workload may also be one of the user's uploaded traces (``upload:<sha256>``): the log
#: a site calibrates against is its own.
UPLOADS_KIND = "calibrate"
#: The calibrate form's clusters "as the log says": the sample's own ``.machines`` where it has no header
#: line for them (the CERIT-SC slice), else the log's header (every upload, the HPC2N excerpt).
OWN_CLUSTERS = "own"
SAMPLE_OWN_MACHINES = {"cerit-sc-2013-slice.swf": "cerit-sc-2013.machines"}
#: What the calibrate form's limits field says when the limits come from the log (any of these, or blank).
FROM_LOG_TEXT = "from the log"
FROM_LOG_WORDS = {"", "from the log", "from log", "from_log", "log"}


@dataclass(frozen=True)
class Param:
    """One form field: ``widget`` is number, integer, numbers (comma-separated text), limits (numbers, or
    :data:`FROM_LOG_TEXT`), checklist, radio or dropdown."""

    name: str
    label: str
    widget: str
    options: list = field(default_factory=list)
    hint: str | None = None


FORM = {
    "elastic-fig6": [
        Param("distributions", "Distributions", "checklist", list(DISTRIBUTIONS)),
        Param("maxima", "Maxima per parameter", "integer", hint="evenly spaced in each Table 2 interval"),
        Param("traces", "Traces per configuration", "integer"),
        Param("penalties", "Penalty factors", "numbers", hint="comma-separated, e.g. 1.5, 3"),
        Param("penalty_model", "Penalty model", "radio", [{"label": "spill (reducers)", "value": "spill"},
                                                          {"label": "step (mappers)", "value": "step"}]),
        Param("nodes", "Nodes", "integer"),
        Param("cores", "Cores per node", "integer"),
        Param("node_memory_gb", "Memory per node (GB)", "number"),
        Param("jobs", "Jobs per trace", "integer"),
        Param("seed", "Base seed", "integer", hint="trace t of configuration c: seed + 1000 c + t"),
    ],
    "batch-ls-seeds": [
        Param("trace", "Workload", "dropdown", list(SAMPLE_TRACES)),
        Param("jobs", "First N jobs", "integer"),
        Param("machines", "Clusters", "dropdown", list(SAMPLE_MACHINES)),
        Param("variant", "Scenario", "radio", list(VARIANTS),
              hint="EXT-FAIL / EXT-ALL: MetaCentrum 2009 failures; EXT-REQ / EXT-ALL: job requirements "
                   "(half of the jobs without one get a random cluster property)"),
        Param("policies", "Policies", "checklist", REGISTRY.options("batch")),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
    "calibrate": [
        Param("trace", "Workload (with recorded waits)", "dropdown", list(SAMPLE_TRACES)),
        Param("machines", "Clusters", "dropdown",
              [{"label": "the log's own", "value": OWN_CLUSTERS},
               *({"label": name, "value": name} for name in SAMPLE_MACHINES)]),
        Param("jobs", "First N jobs", "integer"),
        Param("policy", "Policy", "radio", ["fcfs", "fcfs-lb", "easy"]),
        Param("estimates", "Estimates", "checklist", ["trace", "perfect"]),
        Param("allocation", "Allocation", "checklist", ["cpus", "whole_nodes"]),
        Param("priorities", "Queue priorities", "checklist", [{"label": "off", "value": False},
                                                              {"label": "on (by recorded wait)", "value": True}]),
        Param("running_jobs_limits", "Per-user limits", "limits",
              hint=f"{FROM_LOG_TEXT}: none, and ¼ to 2× the busiest user's running jobs and CPUs; or running jobs "
                   "per user, comma-separated (0 = none)"),
        Param("capacities", "Capacities", "radio",
              [{"label": "from the log", "value": FROM_LOG}, {"label": "the hardware only", "value": "hardware"}],
              hint="from the log: the hardware and, where the log used more, its p99.9 and peak of CPUs"),
    ],
    "libra-intervals": [
        Param("schemes", "Schemes", "checklist", REGISTRY.options("network")),
        Param("intervals", "Mean arrival intervals (s)", "numbers", hint="comma-separated, e.g. 0.1, 1, 10"),
        Param("width", "Containers per application", "integer"),
        Param("machines", "Machines (1 Gbps)", "integer"),
        Param("applications", "Applications", "integer"),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
    "libra-sensitivity": [
        Param("schemes", "Schemes", "checklist", REGISTRY.options("network")),
        Param("volumes", "Data per flow (Gb)", "numbers", hint="comma-separated, e.g. 0.01, 0.03, 0.1"),
        Param("slots", "Container slots per machine", "numbers", hint="whole numbers, e.g. 1, 2, 4, 32"),
        Param("interval", "Mean arrival interval (s)", "number"),
        Param("width", "Containers per application", "integer"),
        Param("machines", "Machines (1 Gbps)", "integer"),
        Param("applications", "Applications", "integer"),
        Param("seeds", "Seeds", "integer", hint="seeds 0 .. N-1"),
    ],
}
# Starting values: each finishes in well under a minute on two cores.
PAGE_DEFAULTS = {
    "elastic-fig6": {"distributions": ["uniform", "exponential"], "maxima": 2, "traces": 1, "penalties": [1.5, 3.0],
                     "penalty_model": "spill", "nodes": 100, "cores": 16, "node_memory_gb": 10.0, "jobs": 100,
                     "seed": 0},
    "batch-ls-seeds": {"trace": "hpc2n-excerpt.swf", "jobs": 1000, "machines": "metacentrum-2009.machines",
                       "variant": "EXT-ALL", "policies": ["ls", "cons"], "seeds": 5},
    "calibrate": {"trace": "hpc2n-excerpt.swf", "machines": OWN_CLUSTERS, "jobs": 1000, "policy": "easy",
                  "estimates": ["trace", "perfect"], "allocation": ["cpus"], "priorities": [False, True],
                  "running_jobs_limits": FROM_LOG, "capacities": FROM_LOG},
    "libra-intervals": {"schemes": ["baseline", "drf", "hug", "libra"], "intervals": [0.1, 0.5, 1.0, 5.0, 10.0],
                        "width": 128, "machines": 512, "applications": 30, "seeds": 2},
    "libra-sensitivity": {"schemes": ["drf", "libra"], "volumes": [0.03], "slots": [1, 2, 4, 32], "interval": 0.1,
                          "width": 128, "machines": 512, "applications": 30, "seeds": 1},
}
DESCRIPTIONS = {
    "elastic-fig6": "YARN-ME paper, Fig. 6: Table 2 traces (each parameter's max swept over its interval), every "
                    "trace under YARN, Meganode and YARN-ME at each penalty; ratio of average job runtimes.",
    "batch-ls-seeds": "Local Search's spread over random seeds on one batch scenario (Klusáček & Rudová), "
                      "beside any other policy; mean ± std per policy.",
    "calibrate": "Which setting of the batch model reproduces the waits the log records: every combination of "
                 "estimates, allocation, queue priorities, a per-user limit and a capacity, ranked by fit (mean wait "
                 "off by, share within 10 minutes, rank correlation) against the first of each. The limits and "
                 "capacities start from what the log says: its busiest users and the CPUs it had in use.",
    "libra-intervals": "Libra paper, Fig. 6: isolation, duration and link utilisation of the network schemes as "
                       "applications arrive more or less often (Poisson, many-to-many traffic).",
    "libra-sensitivity": "Libra paper, Fig. 6 at one arrival interval, over what the paper does not state: the "
                         "data each flow carries and how many containers (1 CPU, 1 GB each) a machine holds; an "
                         "application waits for free slots (§IV-A).",
}


def form_values(kind: str) -> dict:
    """The form's starting values for a kind (lists of numbers as text)."""
    def shown(param: Param):
        value = PAGE_DEFAULTS[kind][param.name]
        if param.widget == "limits" and value == FROM_LOG:
            return FROM_LOG_TEXT
        return ", ".join(f"{v:g}" for v in value) if param.widget in ("numbers", "limits") else value

    return {p.name: shown(p) for p in FORM[kind]}


def workload_options(uploads) -> list[dict]:
    """The workload choices of :data:`UPLOADS_KIND`: the samples, then :func:`upload_options`."""
    samples = next(p.options for p in FORM[UPLOADS_KIND] if p.name == "trace")
    return [{"label": name, "value": name} for name in samples] + upload_options(uploads)


def upload_options(uploads) -> list[dict]:
    """The uploaded traces the user may sweep (theirs, or shared with them: ``uploads`` is their view), newest
    first, each valued by its content reference ``upload:<sha256>``."""
    return [{**option, "value": upload_reference(option["value"].partition(".")[0])}
            for option in upload_choices(uploads, "trace")]


def upload_labels(uploads) -> dict[str, str]:
    """``{upload:<sha256>: the file's name as uploaded}`` of the uploaded traces the user sees."""
    return {upload_reference(entry["name"].partition(".")[0]): entry["label"] for entry in uploads.listing()
            if entry["kind"] == "trace"}


def linked_trace(kind: str, trace: str | None) -> tuple[str | None, str]:
    """``(workload, message)`` for a link's ``trace`` (``sample:<name>`` or ``upload:<sha256>``): the value the
    kind's workload field starts with (None: its default), and what the page says of a link it cannot take."""
    if not trace:
        return None, ""
    offered = next((p.options for p in FORM.get(kind, []) if p.name == "trace"), None)
    if offered is None:
        return None, ""
    if trace.startswith(SAMPLE) and trace[len(SAMPLE):] in offered:
        return trace[len(SAMPLE):], ""
    if kind == UPLOADS_KIND and trace.startswith(UPLOAD) and SHA256.fullmatch(trace[len(UPLOAD):]):
        return trace, ""   # whether the user may use it, the page's workload choices tell (not the link)
    return None, (f"The link's workload {trace!r:.80} is not one this sweep offers; it starts on "
                  f"{PAGE_DEFAULTS[kind]['trace']} instead.")


def parse_value(param: Param, value, extra: tuple = ()):
    if param.widget == "limits" and " ".join(str(value or "").lower().split()) in FROM_LOG_WORDS:
        return FROM_LOG
    if param.widget in ("numbers", "limits"):
        tokens = [t for t in re.split(r"[,\s;]+", str(value or "").strip()) if t]
        if not tokens:
            raise ScenarioError(param.name, "enter at least one number")
        numbers = []
        for token in tokens:
            try:
                numbers.append(float(token))
            except ValueError:
                raise ScenarioError(param.name, f"{token!r} is not a number") from None
        return numbers
    if param.widget in ("number", "integer"):
        if value is None or value == "":
            raise ScenarioError(param.name, "enter a number")
        return value
    # Choices come back from the browser: only the offered ones are accepted (a forged value
    # could otherwise name any file on the server as a workload).
    allowed = [option["value"] if isinstance(option, dict) else option for option in param.options] + list(extra)
    chosen = list(value or []) if param.widget == "checklist" else [value]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise ScenarioError(param.name, f"{unknown[0]!r} is not one of the choices")
    return chosen if param.widget == "checklist" else value


def spec_from_form(kind: str, ids: list[dict], values: list, uploads: tuple = ()) -> dict:
    """The sweep spec the form describes (only the chosen kind's fields); raises :class:`ScenarioError`.

    ``uploads``: the ``upload:<sha256>`` references the user may choose as the workload of
    :data:`UPLOADS_KIND` (:func:`upload_options`); any other upload is refused as not one of the choices.
    """
    if kind not in FORM:
        raise ScenarioError("kind", f"choose a sweep kind ({', '.join(FORM)})")
    params = {p.name: p for p in FORM[kind]}
    spec = {"kind": kind}
    for component_id, value in zip(ids, values):
        if component_id["kind"] == kind and component_id["name"] in params:
            extra = tuple(uploads) if kind == UPLOADS_KIND and component_id["name"] == "trace" else ()
            spec[component_id["name"]] = parse_value(params[component_id["name"]], value, extra)
    return _calibrate_spec(spec) if kind == "calibrate" else spec


def _calibrate_spec(spec: dict) -> dict:
    """The calibrate form's choices as the sweep's values: the log's own clusters (:data:`OWN_CLUSTERS`) as the
    sample's ``.machines`` or none (the header), the hardware only as a list of one capacity."""
    if spec.get("machines") == OWN_CLUSTERS:
        spec["machines"] = SAMPLE_OWN_MACHINES.get(spec.get("trace"))
    if spec.get("capacities") == "hardware":
        spec["capacities"] = ["hardware"]
    return spec


def explain(kind: str, exc: ScenarioError) -> str:
    """An error as the form shows it: the field's label instead of the spec's parameter name."""
    if exc.source:
        return str(exc)
    match = re.match(r"(\w+)(?:\[(\d+)\])?", exc.field or "")
    labels = {p.name: p.label for p in FORM.get(kind, [])}
    if not match or match.group(1) not in labels:
        return str(exc)
    item = f" (item {int(match.group(2)) + 1})" if match.group(2) is not None else ""
    return f"{labels[match.group(1)]}{item}: {exc.message}"


def calibrate_plan(spec: dict, count: int, from_log: frozenset = frozenset()) -> str:
    """The calibrate sweep's point count and the per-user limits and capacities it tries; ``from_log``: the
    fields (``running_jobs_limits``, ``capacities``) whose values were read from the log."""
    jobs, cpus = spec["running_jobs_limits"], spec.get("cpu_limits") or [0] * len(spec["running_jobs_limits"])
    limits = ", ".join("none" if not j else f"{j}/{c:,}" if c else f"{j}" for j, c in zip(jobs, cpus))
    what = "running jobs/CPUs per user" if any(cpus) else "running jobs per user"
    capacities = spec["capacities"]
    plural = "y" if len(capacities) == 1 else "ies"
    source = {name: " from the log" if name in from_log else "" for name in ("running_jobs_limits", "capacities")}
    return (f"{count} points: {len(spec['estimates'])} estimate(s) × {len(spec['allocation'])} allocation(s) × "
            f"{len(spec['priorities'])} priority setting(s) × {len(jobs)} per-user limit(s) × {len(capacities)} "
            f"capacit{plural}, {spec['policy'].upper()}, "
            f"{'all' if spec['jobs'] is None else 'first ' + format(spec['jobs'], ',')} jobs. Limits"
            f"{source['running_jobs_limits']} ({what}): {limits}. Capacit{plural}{source['capacities']}: "
            f"{', '.join(CAPACITY_WORDS.get(name, name) for name in capacities)}"
            f"{' (the log used no more)' if source['capacities'] and capacities == ['hardware'] else ''}.")


def plan_text(spec: dict, count: int, from_log: frozenset = frozenset()) -> str:
    """How many points a checked spec has, and what each one runs (``from_log``: see :func:`calibrate_plan`)."""
    kind = spec["kind"]
    if kind == "elastic-fig6":
        configurations = spec["maxima"] ** 3
        sims = count * (2 + len(spec["penalties"]))
        return (f"{count} points: {len(spec['distributions'])} distribution(s) × {configurations} configurations × "
                f"{spec['traces']} trace(s); {sims} simulations (YARN, Meganode, YARN-ME at "
                f"{len(spec['penalties'])} penalties per trace).")
    if kind == "batch-ls-seeds":
        return (f"{count} points: {len(spec['policies'])} polic{'y' if len(spec['policies']) == 1 else 'ies'} × "
                f"{len(spec['seeds'])} seed(s), {spec['variant']}, first {spec['jobs']} jobs.")
    if kind == "calibrate":
        return calibrate_plan(spec, count, from_log)
    if kind == "libra-sensitivity":
        return (f"{count} points: {len(spec['schemes'])} scheme(s) × {len(spec['volumes'])} volume(s) × "
                f"{len(spec['slots'])} slot count(s) × {len(spec['seeds'])} seed(s), {spec['interval']:g} s apart.")
    return (f"{count} points: {len(spec['schemes'])} scheme(s) × {len(spec['intervals'])} interval(s) × "
            f"{len(spec['seeds'])} seed(s).")


def preview(kind: str, ids: list[dict], values: list, uploads: tuple = ()) -> tuple[str, bool]:
    """``(text, ok)``: the point count of the form's sweep, or what is wrong with it."""
    try:
        asked = spec_from_form(kind, ids, values, uploads)
        spec = normalize_spec(asked)
        from_log = frozenset(name for name, value in asked.items() if value == FROM_LOG)
        return plan_text(spec, point_count(spec), from_log), True
    except ScenarioError as exc:
        return explain(kind, exc), False
