"""Regenerate the golden files (run only when a change of results is intended).

    .venv/bin/python tests/golden/regenerate.py

For every sample scenario in ``GOLDEN_SCENARIOS``, every preset scenario in
``PRESET_SCENARIOS`` (engines without a sample scenario file) and every
registered policy of its engine, writes ``<stem>.<policy>.jobs.csv`` and
``<stem>.<policy>.timeline.csv`` next to this file. The site engine's sample
(``SITE_SCENARIOS``) runs every registered queue order under every
backfilling, as ``<stem>.<order>-<backfill>.*.csv``, and the log as
recorded as ``<stem>.recorded.*.csv``. Machine-dependent
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
from sched_engine.elastic.presets import paper_model, two_job_model  # noqa: E402
from sched_engine.network.presets import fig1_model, fig6_model  # noqa: E402
from sched_engine.registry import REGISTRY  # noqa: E402
from sched_engine.site.order import BACKFILLING  # noqa: E402

GOLDEN_SCENARIOS = [
    ROOT / "sample_traces" / name
    for name in (
        "fairshare-fig4.scenario.json",
        "batch-hpc2n.scenario.json",
        "batch-metacentrum.scenario.json",
        "batch-cerit-sc.scenario.json",
    )
]


def small_table2_model() -> dict:
    """The YARN-ME paper's Table 2 uniform trace, scaled down: 30 jobs of 1-40 tasks on 20 nodes."""
    model = paper_model()
    model["nodes"][0]["count"] = 20
    model["trace"].update(jobs=30, tasks_per_job=[1, 40])
    return model


#: ``stem -> scenario`` (without policy) for engines whose samples are presets, not scenario files.
PRESET_SCENARIOS = {
    "network-fig1": {"engine": "network", "model": fig1_model(), "seed": 0},
    "network-fig6-small": {"engine": "network", "seed": 1,
                           "model": fig6_model(mean_interval=0.5, width=16, count=20, machines=32)},
    "elastic-two-job": {"engine": "elastic", "model": two_job_model(), "seed": 0},
    "elastic-table2-small": {"engine": "elastic", "model": small_table2_model(), "seed": 1},
}


#: ``stem -> scenario`` of the site engine: 300 HPC2N jobs on 60 machines of 2 CPUs and 2,000 MB, 900 MB per CPU
#: asked (the log records none), synthetic failures, and its eight users in two groups weighted 2:1.
SITE_SCENARIOS = {
    "site-hpc2n-small": {"engine": "site", "seed": 1, "model": {
        "trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 300},
        "clusters": [{"name": "seth", "machines": 60, "cpus_per_machine": 2}],
        "failures": {"kind": "synthetic", "afc": 0.002},
        "memory_per_machine_mb": {"seth": 2000}, "job_memory_per_cpu_mb": 900,
        "organisation": {"tree": {"name": "root", "children": [
            {"name": "research", "weight": 2, "children": [{"name": f"u{u}", "user": u} for u in ("1", "22", "3", "37")]},
            {"name": "teaching", "weight": 1, "children": [{"name": f"u{u}", "user": u} for u in ("4", "41", "5", "6")]},
        ]}}}},
}


def golden_cases():
    """``(scenario dict, policy name, file stem)`` for every golden file pair."""
    scenarios = [(json.loads(path.read_text()), path.name.removesuffix(".scenario.json")) for path in GOLDEN_SCENARIOS]
    for scenario, stem in [*scenarios, *((scenario, stem) for stem, scenario in PRESET_SCENARIOS.items())]:
        for entry in REGISTRY.policies(scenario["engine"]):
            yield {**scenario, "policy": entry.name, "policy_params": {}}, entry.name, stem
    for stem, scenario in SITE_SCENARIOS.items():
        for entry in REGISTRY.policies("site"):
            if "backfill" not in entry.schema:   # the log as recorded: no backfilling to choose
                yield {**scenario, "policy": entry.name, "policy_params": {}}, entry.name, stem
                continue
            for backfill in BACKFILLING:
                yield ({**scenario, "policy": entry.name, "policy_params": {"backfill": backfill}},
                       f"{entry.name}-{backfill}", stem)


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
