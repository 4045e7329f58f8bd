"""Command line for headless use.

    python -m sched_engine run SCENARIO.json --out DIR
    python -m sched_engine batch --trace FILE [--machines FILE]
        [--failures FILE | --synthetic-failures [--afc X]] [--requirements]
        [--estimates perfect|trace] [--allocation cpus|whole_nodes] [--load-factor X] --policy fcfs|fcfs-lb|easy|cons|ls --out DIR
    python -m sched_engine policies [ENGINE]
    python -m sched_engine sweep SPEC.json|KIND [--quick] --out DIR [--workers N]
    python -m sched_engine size (batch options) --target "METRIC<=VALUE" [--mode pool|scale|load] --out DIR
    python -m sched_engine compare A.json B.json --out DIR
    python -m sched_engine baseline (batch options) [--no-steps] [--steps-capacity log|log_p99|log_p999] --out DIR
    python -m sched_engine audit --trace FILE [--machines FILE] --out DIR
    python -m sched_engine calibrate --trace FILE [--machines FILE] [--limits 0 4 16 ...] --out DIR
    python -m sched_engine convert IN --out OUT.swf|OUT.machines|OUT.json [--timezone Z] [--anonymise] [--format KIND]

``run`` writes ``jobs.csv``, ``timeline.csv``, ``summary.csv`` and the
normalised ``scenario.json`` into DIR and prints the summary; the files a
scenario names (``--trace`` and friends too) are hashed and referenced by
content (``upload:<sha256>``), so ``scenario.json`` holds no local path; ``sweep`` runs
a parameter sweep (``sched_engine.sweeps``; KIND alone takes its defaults)
and writes ``sweep.csv``, ``summary.csv`` and ``spec.json``; ``baseline``, ``calibrate``, ``size`` and
``compare`` are described in :mod:`sched_engine.analysis.commands`, ``convert`` (a site's
accounting log, slurm.conf or sshare dump as SWF, .machines or organisation JSON) in
:mod:`sched_engine.logs.convert_command`. Bad input exits
with status 2 and one line naming the file, line or field at fault.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .analysis.audit_command import add_audit_arguments, run_audit
from .analysis.baseline_steps import run_steps
from .analysis.commands import (
    add_calibrate_arguments,
    add_compare_arguments,
    add_size_arguments,
    calibrate_spec,
    run_baseline,
    run_calibrate,
    run_compare,
    run_size,
)
from .core import validate
from .core.errors import ScenarioError
from .core.inputs import InputFiles, named_by_content
from .logs.convert_command import add_convert_arguments, run_convert
from .registry import REGISTRY
from .runner import run_scenario
from .sweeps import KINDS as SWEEP_KINDS
from .sweeps import SweepError, format_summary, quick_spec, run_sweep, terminal_progress, write_sweep


def load_scenario_file(path: Path) -> dict:
    """Read a scenario JSON file; JSON syntax errors become ScenarioErrors."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError("", f"cannot read the file ({exc.strerror})", source=str(path)) from None
    except UnicodeDecodeError:
        raise ScenarioError("", "not UTF-8 text", source=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError("", f"invalid JSON at column {exc.colno}: {exc.msg}", source=str(path), line=exc.lineno) from None


def run_by_content(scenario: dict):
    """Run a scenario whose files are local paths, naming each by its content (``upload:<sha256>``).

    The written ``scenario.json`` and the cache key then hold no path of
    this machine: the same files under other names give the same run.
    """
    files = InputFiles()
    return run_scenario(named_by_content(scenario, files), inputs=files)


def _run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    data = load_scenario_file(path)
    try:
        result = run_by_content(data)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=exc.source or str(path), line=exc.line) from None
    return _report(result, args.out)


def batch_scenario(args: argparse.Namespace) -> dict:
    """The scenario the ``batch`` command's options describe."""
    if args.failures:
        failures = {"kind": "trace", "path": args.failures, "align": args.failure_align}
    elif args.synthetic_failures:
        failures = {"kind": "synthetic", "afc": args.afc}
    else:
        failures = {"kind": "none"}
    model = {
        "trace": {"path": args.trace, "format": args.format, "skip_malformed": args.skip_malformed,
                  "max_jobs": args.max_jobs},
        "failures": failures,
        "requirements": args.requirements,
        "estimates": args.estimates,
        "load_factor": args.load_factor,
        "allocation": args.allocation,
    }
    if args.machines:
        model["machines_path"] = args.machines
    return {"engine": "batch", "policy": args.policy, "seed": args.seed, "model": model}


def _baseline(args: argparse.Namespace) -> int:
    """``baseline``: the run against its log, then the steps that explain the gap (:mod:`.analysis.baseline_steps`)."""
    files = InputFiles()
    scenario = named_by_content(batch_scenario(args), files)
    result = run_scenario(scenario, inputs=files)
    status = run_baseline(result, args.out)
    if not args.no_steps:
        run_steps(scenario, args.out, capacity=args.steps_capacity, inputs=files, first=result)
    return status


def _batch(args: argparse.Namespace) -> int:
    return _report(run_by_content(batch_scenario(args)), args.out)


def _report(result, out) -> int:
    for written in result.write_csv(out):
        print(f"wrote {written}")
    summary = result.summary
    width = max(len(m) for m in summary.metric)
    for metric, value, unit in summary.itertuples(index=False):
        print(f"{metric:<{width}}  {value:>14.6g} {unit}")
    return 0


def _celery_executor(executor: str):
    """The web app's Celery sweep executor for ``auto`` and ``celery`` (``None`` without ``REDIS_URL``).

    Imported here, when asked for, so that the library never imports Celery:
    scale-out belongs to the app (``components/scaleout/``), which this
    command line shares with the workers of the same checkout. Without the
    app (or Celery) installed, ``auto`` runs on local processes and
    ``celery`` is refused by :func:`~sched_engine.sweeps.run_sweep`.
    """
    if executor not in ("auto", "celery"):
        return None
    try:
        from components.scaleout.sweep_executor import celery_executor
    except ImportError:   # the library without the app (or without Celery): sweeps run on local processes
        return None
    return celery_executor()


def _sweep(args: argparse.Namespace) -> int:
    if args.spec in SWEEP_KINDS:
        spec, source = quick_spec(args.spec) if args.quick else {"kind": args.spec}, None
    elif args.quick:
        raise ScenarioError("", "--quick goes with a kind name, not a spec file", source=args.spec)
    elif not Path(args.spec).exists():
        raise ScenarioError("", f"no such spec file, nor a sweep kind ({', '.join(SWEEP_KINDS)})", source=args.spec)
    else:
        spec, source = load_scenario_file(Path(args.spec)), args.spec
    try:
        sweep = run_sweep(spec, workers=args.workers, executor=args.executor, progress=terminal_progress(),
                          remote=_celery_executor(args.executor))
    except SweepError:
        raise   # a point or the executor failed: the spec's place does not apply
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=exc.source or source, line=exc.line) from None
    for written in write_sweep(sweep, args.out):
        print(f"wrote {written}")
    print(format_summary(sweep.summary()))
    print(f"{len(sweep.points)} runs in {sweep.wall_seconds:.1f} s ({sweep.executor}, {sweep.workers} worker(s))")
    return 0


def _compare(args: argparse.Namespace) -> int:
    return run_compare(load_scenario_file(Path(args.baseline)), load_scenario_file(Path(args.alternative)), args.out,
                       resamples=args.resamples, seed=args.bootstrap_seed)


def _policies(args: argparse.Namespace) -> int:
    engines = [REGISTRY.engine(args.engine)] if args.engine else REGISTRY.engines()
    for engine in engines:
        print(f"{engine.name}: {engine.label}")
        for entry in REGISTRY.policies(engine.name):
            randomised = " (randomised: results follow the seed)" if entry.randomised else ""
            print(f"  {entry.name:<12} {entry.label:<14} {entry.description}{randomised}")
            defaults = REGISTRY.create(engine.name, entry.name).get_params()
            for name, param in entry.schema.items():
                allowed = ", ".join(map(str, param.choices)) if param.kind == "choice" else (
                    "text" if param.kind == "text" else f"{param.kind}, {param.bounds()}")
                optional = ", or null" if param.optional else ""
                print(f"      {name} = {defaults[name]!r}: {param.doc} ({allowed}{optional})")
    return 0


def _add_workload_options(parser: argparse.ArgumentParser) -> None:
    """Options that describe a batch workload, its hardware and policy (``batch``, ``size``, ``baseline``)."""
    parser.add_argument("--trace", required=True, help="workload file: SWF, extended SWF, GWF or CSV, optionally .gz")
    parser.add_argument("--format", default="auto", choices=["auto", "swf", "swf-ext", "gwf", "csv"])
    parser.add_argument("--machines", help="Alea .machines file; without it the SWF header defines one cluster")
    failures = parser.add_mutually_exclusive_group()
    failures.add_argument("--failures", help="failure trace (start, cluster, duration, machines)")
    failures.add_argument("--synthetic-failures", action="store_true", help="generate failures (F = N*D*AFC)")
    parser.add_argument("--afc", type=float, default=7.0e-4, help="failures per machine-hour for --synthetic-failures")
    parser.add_argument("--failure-align", default="start", choices=["start", "absolute"],
                        help="start: first failure at the first submission; absolute: same clock as the trace")
    parser.add_argument("--requirements", action="store_true", help="match job requirements to cluster properties")
    parser.add_argument("--estimates", default="perfect", choices=["perfect", "trace"])
    parser.add_argument("--allocation", default="cpus", choices=["cpus", "whole_nodes"],
                        help="whole_nodes: a job holds whole machines (CPUs per machine from --machines or the header)")
    parser.add_argument("--load-factor", type=float, default=1.0,
                        help="divide the time since the first submission by X (2 = twice the offered load)")
    parser.add_argument("--policy", required=True, choices=[p.name for p in REGISTRY.policies("batch")])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-jobs", type=int, help="simulate only the first N jobs")
    parser.add_argument("--skip-malformed", action="store_true", help="skip malformed lines and count them")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sched_engine", description="schedscope simulations, headless")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate one scenario file and write its frames as CSV")
    run.add_argument("scenario", help="scenario JSON file (see docs/scenarios.md)")
    run.add_argument("--out", required=True, help="directory for jobs.csv, timeline.csv, summary.csv")
    run.set_defaults(handler=_run)
    batch = commands.add_parser("batch", help="simulate a batch workload on clusters (SWF, GWF, CSV)")
    _add_workload_options(batch)
    batch.add_argument("--out", required=True, help="directory for jobs.csv, timeline.csv, summary.csv")
    batch.set_defaults(handler=_batch)
    sweep = commands.add_parser("sweep", help="run a parameter sweep and write sweep.csv (points x metrics)")
    sweep.add_argument("spec", help=f"sweep spec JSON file, or a kind: {', '.join(SWEEP_KINDS)}")
    sweep.add_argument("--quick", action="store_true", help="with a kind: its small version")
    sweep.add_argument("--workers", type=int, help="local processes (default: the CPU count)")
    sweep.add_argument("--executor", default="auto", choices=["auto", "processes", "serial", "celery"],
                       help="auto: Celery workers when REDIS_URL is set, else local processes")
    sweep.add_argument("--out", required=True, help="directory for sweep.csv, summary.csv, spec.json")
    sweep.set_defaults(handler=_sweep)
    size = commands.add_parser("size", help="capacity planning: the smallest machine (or largest load) meeting a target")
    _add_workload_options(size)
    add_size_arguments(size)
    size.add_argument("--out", required=True, help="directory for sizing.csv and summary.csv")
    size.set_defaults(handler=lambda args: run_size(batch_scenario(args), args.target, args.mode, args.out,
                                                    workers=validate.whole(args.workers, "workers", minimum=1)))
    baseline = commands.add_parser("baseline", help="check a run of a log against the waits the log records")
    _add_workload_options(baseline)
    baseline.add_argument("--out", required=True, help="directory for jobs.csv, summary.csv and the breakdowns")
    baseline.add_argument("--no-steps", action="store_true", help="skip the steps that explain the gap (steps.csv)")
    baseline.add_argument("--steps-capacity", default="log", choices=["log", "log_p99", "log_p999"],
                          help="the capacity the log used, for the steps: its peak, or its time-weighted p99 or p99.9 "
                               "of CPUs (p99.9: the audit's recorded_capacity_cpus)")
    baseline.set_defaults(handler=_baseline)
    audit = commands.add_parser("audit", help="check a log's recorded schedule against the hardware (audit.csv)")
    add_audit_arguments(audit)
    audit.set_defaults(handler=run_audit)
    calibrate = commands.add_parser("calibrate", help="which model setting reproduces the log's recorded waits best")
    add_calibrate_arguments(calibrate)
    calibrate.set_defaults(handler=lambda args: run_calibrate(calibrate_spec(args), args.out, workers=args.workers,
                                                              remote=_celery_executor("auto")))
    convert = commands.add_parser("convert", help="a site's accounting log, slurm.conf or sshare dump as SWF, "
                                                  ".machines or organisation JSON (chosen by --out's suffix)")
    add_convert_arguments(convert)
    convert.set_defaults(handler=run_convert)
    compare = commands.add_parser("compare", help="compare two runs of one workload job by job, with intervals")
    add_compare_arguments(compare)
    compare.set_defaults(handler=_compare)
    policies = commands.add_parser("policies", help="list engines and their policies")
    policies.add_argument("engine", nargs="?")
    policies.set_defaults(handler=_policies)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
