"""Headless analyses: ``baseline`` (a run against its log), ``calibrate``, ``size`` (capacity planning), ``compare``.

    python -m sched_engine baseline --trace T [--machines M] --policy P [--estimates trace|perfect] --out DIR

    python -m sched_engine size --trace T --policy P --target "mean_wait_s<=600" [--mode pool|scale|load] --out DIR
    python -m sched_engine compare A.json B.json [--resamples N] --out DIR
    python -m sched_engine calibrate --trace T [--machines M] [--policy P] [--estimates ...] [--allocation ...]
        [--priorities off on] [--limits from_log | 0 4 16] [--capacities from_log | hardware log ...]
        [--max-jobs N] [--workers N] --out DIR

``baseline`` writes the run's ``jobs.csv`` (the log's ``recorded_wait``
beside the simulated ``wait_time``), ``timeline.csv``, ``scenario.json``,
``summary.csv`` (the run's rows, then the baseline rows of
:func:`~sched_engine.analysis.baseline.compare_with_log`),
``baseline_by_queue.csv``, ``baseline_by_group.csv``,
``baseline_by_size.csv``, and prints the headline sentence; then (unless
``--no-steps``) it explains the gap step by step and writes ``steps.csv``
(:mod:`sched_engine.analysis.baseline_steps`). ``size`` writes ``sizing.csv`` (one row per probe: size, metric, whether the
target held, whether the probe contradicts monotonicity) and ``summary.csv``
(``smallest_cpus``, ``smallest_scale`` or ``largest_load_factor``, and the
probe count). ``compare`` writes ``paired.csv`` (one row per job that
started in both runs), ``by_user.csv``, ``by_group.csv``, ``by_size.csv`` and
``summary.csv`` with the intervals, and prints the headline sentence.
``calibrate`` runs the ``calibrate`` sweep (:mod:`sched_engine.sweeps.calibrate`)
and writes ``calibration.csv`` (the settings ranked by fit, the reference
setting marked) and prints the best setting against the reference; its
per-user limits and capacities come from the log's own findings unless
given (:mod:`sched_engine.analysis.calibration_grid`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..core.errors import ScenarioError
from ..runner import run_scenario
from . import probe_pool
from .baseline import compare_with_log
from .baseline import headline as baseline_headline
from .batch_sizing import MODES, size_batch
from .paired import RESAMPLES, compare_runs, headline
from .sizing import SizingResult, parse_target

#: The calibrate options' value that takes the candidates from the log (``sched_engine.sweeps.calibrate.FROM_LOG``).
FROM_LOG = "from_log"

ANSWER_NAMES = {"pool": ("smallest_cpus", "CPUs"), "scale": ("smallest_scale", "factor"),
                "load": ("largest_load_factor", "factor")}


def sizing_frames(result: SizingResult, mode: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``sizing.csv`` and ``summary.csv`` of a search."""
    odd = {probe.size for probe in result.non_monotone}
    probes = pd.DataFrame([{"size": p.size, "metric": p.metric, "holds": p.holds, "non_monotone": p.size in odd}
                           for p in result.probes])
    name, unit = ANSWER_NAMES[mode]
    summary = pd.DataFrame([
        (name, float("nan") if result.answer is None else result.answer, unit),
        ("probes", len(result.probes), "runs"),
        ("non_monotone_probes", len(result.non_monotone), "runs"),
    ], columns=["metric", "value", "unit"])
    return probes, summary


def run_size(scenario: dict, target_text: str, mode: str, out: str | Path, log: Callable[[str], None] = print,
             workers: int = 1) -> int:
    """The ``size`` command on a batch scenario (``workers`` probes side by side); returns the exit status."""
    target = parse_target(target_text)
    result = size_batch(scenario, target, mode, workers=workers,
                        progress=lambda p: log(f"probe {p.size:g}: {target.metric} = {p.metric:.6g}"
                                               f" ({'meets' if p.holds else 'misses'} the target)"))
    probes, summary = sizing_frames(result, mode)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    probes.to_csv(folder / "sizing.csv", index=False)
    summary.to_csv(folder / "summary.csv", index=False)
    log(f"wrote {folder / 'sizing.csv'}")
    log(f"wrote {folder / 'summary.csv'}")
    log(result.message)
    return 0


def run_baseline(result, out: str | Path, log: Callable[[str], None] = print) -> int:
    """The ``baseline`` command on a finished batch run (its ``jobs`` frame carries the log's waits)."""
    check = compare_with_log(result.jobs, result.jobs)
    folder = Path(out)
    written = result.write_csv(folder)
    summary = pd.concat([result.summary, check.summary], ignore_index=True)
    summary.to_csv(folder / "summary.csv", index=False)
    for key, name in (("queue", "baseline_by_queue.csv"), ("group", "baseline_by_group.csv"),
                      ("size_class", "baseline_by_size.csv")):
        check.by[key].to_csv(folder / name, index=False)
        written.append(str(folder / name))
    for path in written:
        log(f"wrote {path}")
    log(baseline_headline(check))
    return 0


def run_compare(scenario_a: dict, scenario_b: dict, out: str | Path, *, resamples: int = RESAMPLES, seed: int = 0,
                log: Callable[[str], None] = print) -> int:
    """The ``compare`` command: run both scenarios, compare them job by job; returns the exit status."""
    first, second = run_scenario(scenario_a), run_scenario(scenario_b)
    result = compare_runs(first.jobs, second.jobs, np.random.default_rng(seed), resamples=resamples)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    result.jobs.to_csv(folder / "paired.csv", index=False)
    for key, name in (("user", "by_user.csv"), ("group", "by_group.csv"), ("size_class", "by_size.csv")):
        result.by_group[key].to_csv(folder / name, index=False)
    rows = [("paired_jobs", len(result.jobs), "jobs"), ("unpaired_jobs", result.unpaired, "jobs"),
            ("share_better", result.better, "share"), ("share_worse", result.worse, "share"),
            ("share_unchanged", result.unchanged, "share")]
    for name, interval, unit in (("mean_wait_difference_s", result.mean_difference, "s"),
                                 ("median_wait_difference_s", result.median_difference, "s"),
                                 ("mean_wait_change", result.mean_change, "ratio")):
        rows += [(name, interval.estimate, unit), (f"{name}_low95", interval.low, unit),
                 (f"{name}_high95", interval.high, unit)]
    pd.DataFrame(rows, columns=["metric", "value", "unit"]).to_csv(folder / "summary.csv", index=False)
    log(f"wrote {len(result.by_group) + 2} files into {folder}")
    log(headline(_label(first.scenario), _label(second.scenario), result))
    return 0


def run_calibrate(spec: dict, out: str | Path, *, workers: int | None = None, executor: str = "auto",
                  remote=None, log: Callable[[str], None] = print) -> int:
    """The ``calibrate`` command: run the grid, write ``calibration.csv``; returns the exit status."""
    from ..sweeps import run_sweep, terminal_progress  # the sweeps import the engines: load them when used
    from ..sweeps.calibrate import verdict

    sweep = run_sweep(spec, workers=workers, executor=executor, progress=terminal_progress(), remote=remote)
    ranked = sweep.summary()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    ranked.to_csv(folder / "calibration.csv", index=False)
    where = {"celery": "on Celery workers", "serial": "in one process"}.get(sweep.executor,
                                                                          f"on {sweep.workers} local processes")
    log(f"wrote {folder / 'calibration.csv'} ({len(ranked)} settings in {sweep.wall_seconds:.0f} s {where})")
    log(verdict(ranked))
    return 0


def calibrate_spec(args: argparse.Namespace) -> dict:
    """The ``calibrate`` sweep spec of the command's options."""
    return {"kind": "calibrate", "trace": args.trace, "machines": args.machines, "jobs": args.max_jobs,
            "policy": args.policy, "estimates": args.estimates, "allocation": args.allocation,
            "priorities": [value == "on" for value in args.priorities],
            "running_jobs_limits": _from_log_or(args.limits, "limits", int),
            "capacities": _from_log_or(args.capacities, "capacities", str)}


def _from_log_or(values: list[str], option: str, kind) -> str | list:
    """An option's ``from_log``, or its values."""
    if values == [FROM_LOG]:
        return FROM_LOG
    try:
        return [kind(value) for value in values]
    except ValueError:
        raise ScenarioError(option, f"either {FROM_LOG} or whole numbers, got {' '.join(values)}") from None


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", required=True, help="the log: SWF, extended SWF, GWF or CSV with recorded waits")
    parser.add_argument("--machines", help="Alea .machines file; without it the SWF header defines one cluster")
    parser.add_argument("--max-jobs", type=int, help="the first N jobs only")
    parser.add_argument("--policy", default="easy", help="batch policy of every run (default easy)")
    parser.add_argument("--estimates", nargs="+", default=["trace", "perfect"], choices=["trace", "perfect"])
    parser.add_argument("--allocation", nargs="+", default=["cpus", "whole_nodes"], choices=["cpus", "whole_nodes"])
    parser.add_argument("--priorities", nargs="+", default=["off", "on"], choices=["off", "on"],
                        help="on: the log's queues ranked by their recorded mean wait")
    parser.add_argument("--limits", nargs="+", default=[FROM_LOG],
                        help=f"running jobs per user to try (0: no limit); {FROM_LOG} (the default): no limit and "
                             "a quarter to twice (sqrt(2) apart) the most running jobs and CPUs any one user had "
                             "at once")
    parser.add_argument("--capacities", nargs="+", default=[FROM_LOG],
                        help=f"capacities to try: hardware, log (the peak), log_p99, log_p999; {FROM_LOG} (the "
                             "default): the hardware and, where the log used more, its p99.9 and its peak")
    parser.add_argument("--workers", type=int, help="local processes (default: the CPU count)")
    parser.add_argument("--out", required=True, help="directory for calibration.csv")


def _label(scenario: dict) -> str:
    return scenario.get("name") or scenario["policy"].upper()


def add_size_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``size`` command's own options (the batch workload options are added by the caller)."""
    parser.add_argument("--target", required=True, help='a bound on one summary metric, e.g. "mean_wait_s<=600"')
    parser.add_argument("--mode", default="pool", choices=MODES,
                        help="pool: CPUs of one pool; scale: factor on every cluster; load: largest arrival-rate factor")
    parser.add_argument("--workers", type=int, default=probe_pool.default_workers(),
                        help="probes run side by side on this many local processes (default: the CPUs this process "
                             f"may use, at most {probe_pool.DEFAULT_MAX_WORKERS}; 1: one after another, plain bisection)")


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", help="scenario JSON of the baseline run (A)")
    parser.add_argument("alternative", help="scenario JSON of the run compared with it (B)")
    parser.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples for the intervals")
    parser.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the bootstrap's resampling")
    parser.add_argument("--out", required=True, help="directory for paired.csv, by_*.csv, summary.csv")
