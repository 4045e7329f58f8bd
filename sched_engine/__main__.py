"""Command line for headless use.

    python -m sched_engine run SCENARIO.json --out DIR
    python -m sched_engine policies [ENGINE]

``run`` writes ``jobs.csv``, ``timeline.csv``, ``summary.csv`` and the
normalised ``scenario.json`` into DIR and prints the summary. Bad input exits
with status 2 and one line naming the file, line or field at fault.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .core.errors import ScenarioError
from .registry import REGISTRY
from .runner import run_scenario


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


def _run(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    data = load_scenario_file(path)
    try:
        result = run_scenario(data)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=str(path), line=exc.line) from None
    for written in result.write_csv(args.out):
        print(f"wrote {written}")
    summary = result.summary
    width = max(len(m) for m in summary.metric)
    for metric, value, unit in summary.itertuples(index=False):
        print(f"{metric:<{width}}  {value:>14.6g} {unit}")
    return 0


def _policies(args: argparse.Namespace) -> int:
    engines = [REGISTRY.engine(args.engine)] if args.engine else REGISTRY.engines()
    for engine in engines:
        print(f"{engine.name}: {engine.label}")
        for entry in REGISTRY.policies(engine.name):
            print(f"  {entry.name:<12} {entry.label:<14} {entry.description}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sched_engine", description="schedscope simulations, headless")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate one scenario file and write its frames as CSV")
    run.add_argument("scenario", help="scenario JSON file (see docs/scenarios.md)")
    run.add_argument("--out", required=True, help="directory for jobs.csv, timeline.csv, summary.csv")
    run.set_defaults(handler=_run)
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
