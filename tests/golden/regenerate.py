"""Regenerate the golden files (run only when a change of results is intended).

    .venv/bin/python tests/golden/regenerate.py

For every sample scenario in ``GOLDEN_SCENARIOS`` and every registered policy
of its engine, writes ``<stem>.<policy>.jobs.csv`` and
``<stem>.<policy>.timeline.csv`` next to this file. Machine-dependent
columns (timings) are not part of golden files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine import run_scenario  # noqa: E402
from sched_engine.registry import REGISTRY  # noqa: E402

GOLDEN_SCENARIOS = [
    ROOT / "sample_traces" / name
    for name in (
        "fairshare-fig4.scenario.json",
        "batch-hpc2n.scenario.json",
        "batch-metacentrum.scenario.json",
        "batch-cerit-sc.scenario.json",
    )
]


def golden_cases():
    """``(scenario dict, policy name, file stem)`` for every golden file pair."""
    for path in GOLDEN_SCENARIOS:
        scenario = json.loads(path.read_text())
        stem = path.name.removesuffix(".scenario.json")
        for entry in REGISTRY.policies(scenario["engine"]):
            yield {**scenario, "policy": entry.name, "policy_params": {}}, entry.name, stem


def golden_frames(scenario):
    result = run_scenario(scenario)
    return {"jobs": result.jobs, "timeline": result.timeline}


def main() -> None:
    for scenario, policy, stem in golden_cases():
        for name, frame in golden_frames(scenario).items():
            path = HERE / f"{stem}.{policy}.{name}.csv"
            frame.to_csv(path, index=False, float_format="%.12g")
            print(f"wrote {path.relative_to(ROOT)} ({len(frame)} rows)")


if __name__ == "__main__":
    main()
