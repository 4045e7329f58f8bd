"""One sentence per result: what it means, with units and the comparison that matters.

Pure functions of ``[(run record, result)]`` (a record has at least the
run's ``policy`` and ``label``). Each says the comparison a stakeholder would
ask for first -- against the baseline policy where one was run -- and says
so when the result is too weak to tell policies apart. Names and numbers come
from the metric catalogue (:mod:`.catalogue`).
"""

from __future__ import annotations

import math

import numpy as np

from . import catalogue

#: Below this utilisation the cluster is mostly idle and the policies' order hardly matters.
IDLE_UTILISATION = 0.15
#: Relative changes smaller than this are "about the same".
NEGLIGIBLE = 0.02


def _value(result, metric: str) -> float:
    try:
        return float(result.summary_value(metric))
    except (KeyError, IndexError, ValueError):
        return math.nan


def _change(before: float, after: float) -> float:
    """Relative change from ``before`` to ``after`` (NaN when ``before`` is 0 or missing)."""
    return (after - before) / abs(before) if before and not math.isnan(before) else math.nan


def _percent(fraction: float) -> str:
    return f"{abs(100 * fraction):.0f}%"


def _lower(label: str) -> str:
    """A label inside a sentence: its first word in lower case unless it is an acronym (``CPU utilisation``)."""
    first, _, rest = label.partition(" ")
    return label if first.isupper() else " ".join(part for part in (first.lower(), rest) if part)


def batch(loaded) -> str:
    """Mean wait of the best policy against FCFS (or the first run), on the run's hardware and workload."""
    if not loaded:
        return ""
    scenario = loaded[0][0].get("scenario")
    runs = [(rec, res) for rec, res in loaded if rec.get("scenario") == scenario]
    base_record, base = next(((rec, res) for rec, res in runs if rec.get("policy") == "fcfs"), runs[0])
    jobs, cpus = _value(base, "jobs"), _value(base, "cpus")
    # A cut says so: a run of as many jobs as "Jobs to simulate" allows ran the trace's first ones.
    cut = ((base.scenario.get("model") or {}).get("trace") or {}).get("max_jobs")
    count = f"the first {int(jobs):,} jobs of the trace" if cut and jobs >= int(cut) else f"{int(jobs):,} jobs"
    setting = f"On {int(cpus):,} CPUs with {count}" if not math.isnan(cpus + jobs) else "On this workload"
    wait = _value(base, "mean_wait_s")
    busy = _value(base, "utilisation")
    if len(runs) < 2:
        return (f"{setting}, {base_record['label']} keeps jobs waiting {catalogue.formatted('mean_wait_s', wait, 'batch')}"
                f" on average at {catalogue.formatted('utilisation', busy, 'batch')} CPU utilisation; "
                "run another policy to compare.")
    others = [(rec, res) for rec, res in runs if rec is not base_record]
    best_record, best = min(others, key=lambda pair: _value(pair[1], "mean_wait_s"))
    after = _value(best, "mean_wait_s")
    change = _change(wait, after)
    span = (f"({catalogue.formatted('mean_wait_s', wait, 'batch')} → "
            f"{catalogue.formatted('mean_wait_s', after, 'batch')})")
    if not math.isnan(busy) and busy < IDLE_UTILISATION:
        return (f"{setting}, the clusters are only {catalogue.formatted('utilisation', busy, 'batch')} busy: "
                f"policies barely differ (mean wait {span} for {best_record['label']} vs {base_record['label']}).")
    if math.isnan(change) or abs(change) < NEGLIGIBLE:
        return (f"{setting}, {best_record['label']} and {base_record['label']} wait about the same {span}: "
                "the queue rarely holds jobs that could be reordered.")
    verb = "cuts" if change < 0 else "raises"
    return (f"{setting}, {best_record['label']} {verb} average wait by {_percent(change)} vs "
            f"{base_record['label']} {span}.")


def network(loaded) -> str:
    """The worst-off application's isolation: Libra against the best other scheme."""
    if not loaded:
        return ""
    by_policy = {rec.get("policy"): (rec, res) for rec, res in loaded}
    worst = {rec["label"]: _value(res, "min_isolation") for rec, res in loaded}
    if "libra" not in by_policy or len(loaded) < 2:
        label, value = max(worst.items(), key=lambda item: item[1])
        return (f"{label} guarantees the worst-off application an isolation of "
                f"{catalogue.formatted('min_isolation', value, 'network')}; run Libra beside it to compare.")
    libra_label = by_policy["libra"][0]["label"]
    libra = worst.pop(libra_label)
    other_label, other = max(worst.items(), key=lambda item: item[1])
    if abs(libra - other) < 0.005:
        return (f"Libra and {other_label} give the worst-off application the same isolation "
                f"({catalogue.formatted('min_isolation', libra, 'network')}): on this workload the links are not "
                "contended enough for placement to matter.")
    verb = "raises" if libra > other else "lowers"
    return (f"Libra {verb} the worst-off application's isolation from "
            f"{catalogue.formatted('min_isolation', other, 'network')} ({other_label}) to "
            f"{catalogue.formatted('min_isolation', libra, 'network')}.")


def elastic(loaded) -> str:
    """YARN-ME against YARN: mean job runtime and how many jobs finish sooner."""
    by_policy = {rec.get("policy"): res for rec, res in loaded}
    if "yarn" not in by_policy or "yarn-me" not in by_policy:
        return "Run YARN and YARN-ME to see how much memory elasticity speeds jobs up." if loaded else ""
    yarn, elastic_run = by_policy["yarn"], by_policy["yarn-me"]
    before, after = _value(yarn, "mean_job_runtime_s"), _value(elastic_run, "mean_job_runtime_s")
    change = _change(before, after)
    runtimes = (yarn.jobs.set_index("job_id")["runtime_s"]
                .to_frame("yarn").join(elastic_run.jobs.set_index("job_id")["runtime_s"].rename("me"), how="inner")
                .dropna())
    sooner = int(np.sum(runtimes["me"].to_numpy() < runtimes["yarn"].to_numpy() - 1e-9))
    span = (f"({catalogue.formatted('mean_job_runtime_s', before, 'elastic')} → "
            f"{catalogue.formatted('mean_job_runtime_s', after, 'elastic')} on average)")
    if math.isnan(change) or abs(change) < NEGLIGIBLE:
        return (f"YARN-ME and YARN finish jobs in about the same time {span}: memory is not what holds tasks back "
                f"here ({sooner:,} of {len(runtimes):,} jobs sooner).")
    verb = "faster" if change < 0 else "slower"
    return (f"YARN-ME finishes jobs {_percent(change)} {verb} than YARN {span}; "
            f"{sooner:,} of {len(runtimes):,} jobs sooner.")


def fairshare(loaded) -> str:
    """The policies' CPU utilisation side by side; the spread says whether the choice of policy matters here."""
    if not loaded:
        return ""
    metric = next((m for m in ("utilisation_cpu", "utilisation_cpus")
                   if not math.isnan(_value(loaded[0][1], m))), None)
    if metric is None:
        metrics = [m for m in loaded[0][1].summary["metric"] if str(m).startswith(catalogue.RESOURCE_PREFIX)]
        metric = metrics[0] if metrics else None
    if metric is None:
        return f"{len(loaded)} polic{'y' if len(loaded) == 1 else 'ies'} run; no utilisation to compare."
    values = {rec["label"]: _value(res, metric) for rec, res in loaded}
    best, high = max(values.items(), key=lambda item: item[1])
    name = catalogue.label(metric, "fairshare")
    if len(values) < 2:
        return (f"{best} keeps {_lower(name)} at {catalogue.formatted(metric, high, 'fairshare')}; "
                "run another policy to compare shares.")
    worst, low = min(values.items(), key=lambda item: item[1])
    if high - low < 0.01:
        return (f"All {len(values)} policies keep {_lower(name)} at "
                f"{catalogue.formatted(metric, high, 'fairshare')}: they differ in who gets the resources, "
                "not in how much is used (see the shares over time).")
    return (f"{best} keeps the cluster busiest ({_lower(name)} "
            f"{catalogue.formatted(metric, high, 'fairshare')} vs {catalogue.formatted(metric, low, 'fairshare')} "
            f"under {worst}).")


#: The headline of each engine page, by engine name.
BY_ENGINE = {"batch": batch, "network": network, "elastic": elastic, "fairshare": fairshare}


#: The metrics a one-run summary sentence names, per engine (the paper's main quantities first).
KEY_METRICS = {
    "batch": ("mean_wait_s", "mean_bounded_slowdown_tau10", "utilisation"),
    "network": ("min_isolation", "mean_isolation", "mean_duration_s"),
    "elastic": ("mean_job_runtime_s", "makespan_s", "memory_utilisation"),
    "fairshare": ("makespan_s", "decisions_per_second"),
}


def one_run(result) -> str:
    """A sentence for one run on its own: its policy and its main quantities, with units."""
    engine, policy = result.scenario["engine"], result.scenario["policy"]
    parts = [f"{catalogue.label(m, engine)} {catalogue.formatted(m, _value(result, m), engine)}"
             for m in KEY_METRICS.get(engine, ()) if not math.isnan(_value(result, m))]
    return f"{catalogue.policy_label(engine, policy)}: " + ", ".join(_lower(part) for part in parts) + "."


def scenario_words(result) -> list[tuple[str, str]]:
    """The scenario in plain words, as ``(what, value)`` lines for a reader who never saw the form."""
    scenario, engine = result.scenario, result.scenario["engine"]
    lines = [("Question", catalogue.engine_label(engine)),
             ("Policy", catalogue.policy_label(engine, scenario["policy"]))]
    for metric in ("jobs", "applications", "tasks"):
        if not math.isnan(_value(result, metric)):
            lines.append(("Workload", catalogue.formatted(metric, _value(result, metric), engine)
                          + (f" ({scenario['name']})" if scenario.get("name") else "")))
            break
    hardware = [catalogue.formatted(m, _value(result, m), engine) for m in ("cpus", "clusters")
                if not math.isnan(_value(result, m))]
    if hardware:
        lines.append(("Hardware", ", ".join(hardware)))
    lines.append(("Seed", str(scenario.get("seed", 0))))
    return lines
