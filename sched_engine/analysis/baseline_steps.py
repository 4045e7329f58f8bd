"""The baseline explained: the gap between a run's mean wait and the log's, step by step.

Each step is a run of the same log under the same policy, with one more
thing the log itself says about the site than the step before
(:data:`STEPS`, cumulative):

``hardware``
    the scenario as given (the header's machine, or ``--machines``), with
    perfect estimates, no queue order and no per-user limit;
``capacity``
    on the capacity the log used: the model's ``capacity`` (``log``, the
    replayed schedule's peak, or ``log_p99``; :mod:`sched_engine.batch.capacity`),
    or :data:`LOG_P999`, the audit's ``recorded_capacity_cpus``: the
    time-weighted 99.9th percentile of CPUs in use, at least the largest job
    (the model has no such field: the step gives the cluster it builds as
    ``clusters``, as :func:`sched_engine.batch.capacity.capacity_clusters`
    builds one); the hardware kept where it holds the log;
``queues``
    with the log's queues (:mod:`sched_engine.batch.queues`, the order of
    :mod:`.baseline_findings`). A log naming one queue or none has nothing
    to add: the step repeats the run before it;
``user_limits``
    each user at most the running jobs and the CPUs that user had at once in
    the recorded schedule (the model's ``user_limits.users``, found by
    :func:`~.baseline_findings.find_settings`);
``downtime``
    the CPUs the log left idle while jobs waited held back over those
    periods and, on a capacity above the hardware, the CPUs above it the log
    was not using (:mod:`.baseline_downtime`: reservation jobs in a queue
    ranked above every other, a drain that never kills a job). The step runs on
    the log's jobs with the reservations added, written to
    :data:`DOWNTIME_FILE` (a CSV workload in the run's clock, its jobs cut
    and sized as the steps before ran them) on the clusters the step before
    ran on, given explicitly; in a model of several clusters each
    reservation is on the cluster whose idle CPUs it holds and pinned there
    (``requirements`` on), or the setting says which clusters it shared them
    across; a log with no such period repeats the run before;
``estimates``
    with the users' requested times as the scheduler's estimates (the
    model's ``estimates: "trace"``); a log with none repeats the run before.

Every step is compared with the log by
:func:`~.baseline.compare_with_log`: the simulated and recorded mean waits
over the jobs with a recorded wait that started, the gap ``simulated -
recorded`` and its share of the recorded mean, the change from the step
before, Spearman's rank correlation of the per-job waits, and the jobs a
failure killed. :func:`sentence`
names the step that moved the mean wait most and what is left unexplained
after the last one (and the size class most of it is in, :func:`gap_most_in`); :func:`goal` checks it against issue 36's goal (within
±25% of the recorded mean wait, rank correlation >= 0.5).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..batch.capacity import LOG, LOG_P99, capacity_clusters, clusters_holding, cpus_in_use
from ..batch.cluster import ClusterState
from ..batch.model import load_inputs
from ..core import inputs as input_files
from ..core.errors import ScenarioError
from ..runner import normalize_scenario, run_scenario
from .audit import OVER_HARDWARE_WARNING
from .audit_schedule import time_weighted_quantile
from .audit_workload import read_header_lines
from .baseline import compare_with_log
from .baseline_downtime import DOWN_QUEUE, DownTime, down_time, with_reservations, write_workload
from .baseline_findings import Findings, find_settings

STEPS = ("hardware", "capacity", "queues", "user_limits", "downtime", "estimates")
LABELS = {"hardware": "on the hardware", "capacity": "on the capacity the log used",
          "queues": "with the log's queues", "user_limits": "with each user's limits found in the log",
          "downtime": "with the down times found in the log", "estimates": "with the users' estimates"}
STEP_COLUMNS = ("step", "label", "setting", "ran", "simulated_mean_wait_s", "recorded_mean_wait_s", "gap_s",
                "gap_share", "change_s", "wait_rank_correlation", "share_within_10min", "compared_jobs", "cpus",
                "killed_jobs", "gap_most_in", "wall_s")
#: The down-time step's workload (the log's jobs and the reservations), in the folder the steps write to.
DOWNTIME_FILE = "downtime.csv"
#: Issue 36's goal: the explained baseline within this share of the recorded mean wait ...
GOAL_GAP_SHARE = 0.25
#: ... and at least this per-job rank correlation of simulated and recorded waits.
GOAL_RANK_CORRELATION = 0.5
#: The audit's capacity (``recorded_capacity_cpus``): the CPUs the log stays at or under for 99.9% of its time.
LOG_P999 = "log_p999"
CAPACITY_TEXT = {LOG: "the recorded peak of CPUs in use", LOG_P99: "the time-weighted 99th percentile of CPUs in use",
                 LOG_P999: "the time-weighted 99.9th percentile of CPUs in use"}


@dataclass(frozen=True)
class BaselineSteps:
    table: pd.DataFrame          # STEP_COLUMNS, one row per step
    findings: Findings
    results: list                # the run of each step (a repeated step repeats the object)
    downtime: DownTime | None = None


def _log_inputs(model: dict, capacity: str, seed):
    """The jobs a run of ``model`` on ``capacity`` replays (its clock, as the engine cuts and sizes them) with the
    clusters it runs on, the hardware's CPUs, and the trace's header lines."""
    batch = load_inputs({key: value for key, value in model.items() if key != "capacity"},
                        np.random.default_rng(seed))
    hardware = float(sum(c.total for c in batch.clusters))
    batch.clusters = log_capacity_clusters(batch.clusters, batch.jobs, capacity)
    trace = model["trace"]
    files = input_files.current()
    lines = read_header_lines(files.path(trace["path"], "trace.path"), source=trace.get("label"))
    return batch, hardware, lines


def p999_cpus(jobs: pd.DataFrame) -> float:
    """The CPUs :data:`LOG_P999` sizes the run to: the time-weighted 99.9th percentile of CPUs in use over the
    replayed schedule, or the largest job where that is larger (no job cancelled for want of room)."""
    times, used = cpus_in_use(jobs)
    if not len(used):
        return 0.0
    return max(time_weighted_quantile(times, used, 1 - OVER_HARDWARE_WARNING), float(jobs["procs"].max()))


def log_capacity_clusters(clusters: list[ClusterState], jobs: pd.DataFrame, capacity: str) -> list[ClusterState]:
    """The clusters the ``capacity`` step runs on: the kernel's for ``log`` and ``log_p99``; for :data:`LOG_P999`
    one cluster built as the kernel builds one (its machine size, name, fastest speed, every property), of
    :func:`p999_cpus`, where the hardware does not hold them."""
    if capacity != LOG_P999:
        return capacity_clusters(clusters, jobs, capacity)
    return clusters_holding(clusters, p999_cpus(jobs))


def cluster_specs(clusters: list[ClusterState]) -> list[dict]:
    """Clusters as the model's ``clusters`` field."""
    return [{"name": c.name, "machines": len(c.cpus),
             "cpus_per_machine": c.cpus[0] if len(set(c.cpus)) == 1 else list(c.cpus), "speed": c.speed,
             "properties": list(c.properties)} for c in clusters]


def _capacity_model(model: dict, capacity: str, clusters: list[ClusterState] | None) -> dict:
    """The capacity step's model: the model's ``capacity`` field, or for :data:`LOG_P999` the clusters built
    (``clusters`` None: the hardware holds the log, the model as it is)."""
    if capacity != LOG_P999:
        return {**model, "capacity": capacity}
    if clusters is None:
        return dict(model)
    base = {key: value for key, value in model.items() if key != "machines_path"}
    return {**base, "clusters": cluster_specs(clusters)}


def _step_models(model: dict, findings: Findings, capacity: str, clusters: list[ClusterState] | None,
                 downtime: dict | None) -> list[tuple[str, dict | None, str]]:
    """``(step, model or None to repeat the step before, setting)`` for each step, cumulative; ``clusters``: those
    the capacity step runs on, None where they are the hardware."""
    base = {key: value for key, value in model.items() if key not in ("capacity", "queues", "user_limits")}
    base["estimates"] = "perfect"
    steps = [("hardware", base, "")]
    current = _capacity_model(base, capacity, clusters)
    steps.append(("capacity", current, CAPACITY_TEXT[capacity]))
    if findings.queues is not None:
        current = {**current, "queues": findings.queues}
        steps.append(("queues", current, findings.queues_text))
    else:
        steps.append(("queues", None, findings.queues_text))
    if findings.users:
        current = {**current, "user_limits": {"users": findings.users}}
        steps.append(("user_limits", current, findings.limits_text()))
    else:
        steps.append(("user_limits", None, findings.limits_text()))
    if downtime is not None:
        queues = current.get("queues") or {"priority": [], "best_effort": []}
        current = {key: value for key, value in current.items() if key not in ("capacity", "machines_path")}
        current.update(downtime, queues={**queues, "priority": [DOWN_QUEUE, *queues["priority"]]}, load_factor=1.0)
        steps.append(("downtime", current, ""))
    else:
        steps.append(("downtime", None, "no period of an hour or more when a waiting job fit in the idle CPUs and "
                                        "none started"))
    if findings.has_estimates:
        current = {**current, "estimates": "trace"}
        steps.append(("estimates", current, "the requested times as estimates"))
    else:
        steps.append(("estimates", None, "the log records no requested times"))
    return steps


def _downtime_model(batch, found: DownTime, model: dict, folder: Path, reference=None) -> dict | None:
    """The down-time step's ``trace`` and ``clusters`` (module docstring), and where its reservations are pinned
    to their clusters ``requirements`` on (the run's synthetic ones off where it did not honour requirements);
    None when nothing is held back. ``reference(path, label)``: what the model names the workload written by
    (None: its path)."""
    if found.reservations.empty:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / DOWNTIME_FILE
    honoured = bool(model.get("requirements"))
    write_workload(with_reservations(batch.jobs, found, requirements=honoured), path)
    label = f"{model['trace']['label']} with its down time"
    step = {"trace": {"path": reference(path, label) if reference else str(path), "label": label, "format": "csv"},
            "clusters": cluster_specs(batch.clusters)}
    if found.pinned:
        step["requirements"] = True
        if not honoured:
            step["synthetic_requirements"] = None
    return step


def explain(scenario: dict, *, capacity: str = LOG, inputs=None, first=None, folder=None,
            run: Callable[..., Any] = run_scenario, progress: Callable[[str], None] | None = None,
            reference: Callable[[Path, str], str] | None = None) -> BaselineSteps:
    """Run the steps of the module docstring for a batch scenario (its files local paths or references).

    ``first``: a result already run for the first step's scenario, used instead of running it again.
    ``folder``: where the down-time step's workload is written (:data:`DOWNTIME_FILE`; a temporary
    folder, removed afterwards, when None). ``reference(path, label)``: what the down-time step's model
    names that workload by (None: its path; the web app stores it as an upload and names its reference).
    ``run(scenario, inputs=)``: runs one step (the web app's goes through its result cache).
    """
    if capacity not in CAPACITY_TEXT:
        raise ScenarioError("capacity", f"must be one of {', '.join(CAPACITY_TEXT)}, got {capacity!r}")
    base = normalize_scenario(scenario, inputs=inputs)
    if base.engine != "batch":
        raise ScenarioError("engine", f"the baseline steps replay a batch log, not a {base.engine} model")
    with input_files.using(inputs):
        batch, hardware, lines = _log_inputs(base.model, capacity, base.seed)
    findings = find_settings(batch.jobs, lines)
    # The clusters a job may use, where the capacity step kept the hardware (on the one cluster built, any).
    suitable = batch.suitable if sum(c.total for c in batch.clusters) == hardware else None
    found = down_time(batch.jobs, batch.clusters, hardware, suitable=suitable)
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="baseline-") as temporary:
            return _explain(base, findings, found, batch, hardware, capacity, Path(temporary), inputs, first,
                            run, progress, reference)
    return _explain(base, findings, found, batch, hardware, capacity, Path(folder), inputs, first, run, progress,
                    reference)


def _explain(base, findings: Findings, found: DownTime, batch, hardware: float, capacity: str, folder: Path, inputs,
             first, run, progress, reference) -> BaselineSteps:
    downtime = _downtime_model(batch, found, base.model, folder, reference)
    rows, results, previous = [], [], None
    built = None if sum(c.total for c in batch.clusters) == hardware else batch.clusters
    for step, model, setting in _step_models(base.model, findings, capacity, built, downtime):
        if model is None:
            result, ran = results[-1], False
        else:
            data = {**base.to_dict(), "model": model}
            data.pop("normalised", None)
            checked = normalize_scenario(data, inputs=inputs)
            reuse = first is not None and first.scenario_hash == checked.content_hash()
            result, ran = (first, True) if reuse else (run(checked, inputs=inputs), True)
        if step == "downtime" and ran:
            setting = found.text()
        results.append(result)
        rows.append(_row(step, setting, ran, result, previous))
        previous = rows[-1]
        if progress:
            progress(f"{LABELS[step]}: simulated mean wait {rows[-1]['simulated_mean_wait_s']:,.0f} s")
    return BaselineSteps(pd.DataFrame(rows, columns=list(STEP_COLUMNS)), findings, results, found)


def _row(step: str, setting: str, ran: bool, result, previous: dict | None) -> dict:
    check = compare_with_log(result.jobs, result.jobs)
    values = dict(zip(check.summary["metric"], check.summary["value"]))
    summary = dict(zip(result.summary["metric"], result.summary["value"]))
    simulated, recorded = values["simulated_mean_wait_s"], values["recorded_mean_wait_s"]
    cpus = summary.get("cpus", float("nan"))
    if step == "hardware":
        setting = f"{int(summary.get('clusters', 0))} cluster(s), {cpus:,.0f} CPUs"
    elif step == "capacity":
        held = previous is not None and cpus == previous["cpus"]
        setting = (f"the log fits the hardware ({cpus:,.0f} CPUs): the same machine" if held
                   else f"1 cluster of {cpus:,.0f} CPUs ({setting})")
    return {
        "step": step, "label": LABELS[step], "setting": setting, "ran": ran,
        "simulated_mean_wait_s": simulated, "recorded_mean_wait_s": recorded, "gap_s": simulated - recorded,
        "gap_share": simulated / recorded - 1 if recorded > 0 else float("nan"),
        "change_s": simulated - previous["simulated_mean_wait_s"] if previous else float("nan"),
        "wait_rank_correlation": values["wait_rank_correlation"],
        "share_within_10min": values["share_within_10min"], "compared_jobs": int(values["compared_jobs"]),
        "cpus": cpus, "killed_jobs": int((result.jobs["status"] == "killed").sum()),
        "gap_most_in": gap_most_in(check.by["size_class"], simulated - recorded),
        "wall_s": result.wall_seconds if ran else 0.0,
    }


def gap_most_in(by_size: pd.DataFrame, gap: float) -> str:
    """The size class holding most of the gap (the largest summed error of the gap's sign), in words."""
    if not len(by_size) or not np.isfinite(gap) or gap == 0:
        return ""
    summed = by_size["mean_error_s"] * by_size["jobs"]
    share = summed / (gap * by_size["jobs"].sum())
    top = by_size.loc[share.idxmax()]
    return (f"jobs of {top['size_class']} ({share.max():.0%} of the gap: {int(top['jobs']):,} jobs waiting "
            f"{top['simulated_mean_wait_s']:,.0f} s against {top['recorded_mean_wait_s']:,.0f} s recorded)")


def goal(table: pd.DataFrame) -> tuple[bool, bool]:
    """``(mean wait within ±25% of the log's, rank correlation >= 0.5)`` after the last step."""
    last = table.iloc[-1]
    return (bool(abs(last["gap_share"]) <= GOAL_GAP_SHARE),
            bool(last["wait_rank_correlation"] >= GOAL_RANK_CORRELATION))


def sentence(table: pd.DataFrame) -> str:
    """The step that moved the mean wait most, and what is left unexplained after the last step."""
    if table.empty or not table["compared_jobs"].iloc[0]:
        return "the log records no wait times: there is no gap to explain"
    first, last = table.iloc[0], table.iloc[-1]
    text = (f"{first['label'].capitalize()} the simulated mean wait is {first['simulated_mean_wait_s']:,.0f} s against "
            f"the log's {first['recorded_mean_wait_s']:,.0f} s ({_share(first['gap_share'])})")
    moves = table["change_s"].iloc[1:].abs()
    if len(moves) and moves.max() > 0:
        top = table.iloc[1 + int(np.argmax(moves.to_numpy()))]
        text += (f"; the step that moved it most is {top['label']} ({top['change_s']:+,.0f} s, "
                 f"{top['setting']})")
    else:
        text += "; no step moved it"
    within, ranked = goal(table)
    text += (f". After every step it is {last['simulated_mean_wait_s']:,.0f} s against {last['recorded_mean_wait_s']:,.0f} s: "
             f"{_share(last['gap_share'])} is left unexplained"
             f" ({'within' if within else 'outside'} ±{GOAL_GAP_SHARE:.0%}), and the per-job waits rank "
             f"{last['wait_rank_correlation']:.2f} alike (Spearman; the goal is {GOAL_RANK_CORRELATION:.1f}"
             f"{', met' if ranked else ', not met'})")
    if isinstance(last.get("gap_most_in"), str) and last["gap_most_in"]:
        text += f"; most of what is left is in {last['gap_most_in']}"
    return text + "."


def _share(share: float) -> str:
    return "no recorded mean to compare" if not np.isfinite(share) else f"{share:+.0%}"


def run_steps(scenario: dict, out, *, capacity: str = LOG, inputs=None, first=None,
              log: Callable[[str], None] = print) -> BaselineSteps:
    """The ``baseline`` command's steps: run them, write ``steps.csv`` (and the down-time step's failure trace)
    into ``out``, print the sentence."""
    steps = explain(scenario, capacity=capacity, inputs=inputs, first=first, folder=out, progress=log)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    steps.table.to_csv(folder / "steps.csv", index=False)
    log(f"wrote {folder / 'steps.csv'}")
    log(sentence(steps.table))
    return steps
