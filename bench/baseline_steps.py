"""The explained baseline on the three real logs: each step's mean wait, its ratio to the log's, and the rank
correlation of the per-job waits, beside issue 36's goal (within ±25%, Spearman >= 0.5).

    .venv/bin/python bench/baseline_steps.py                        # HPC2N, CERIT-SC, RICC's first 60,000 jobs
    .venv/bin/python bench/baseline_steps.py --logs ricc --ricc-jobs 0   # the whole RICC log (~20 minutes)
    .venv/bin/python bench/baseline_steps.py --logs hpc2n --capacity log_p999   # on the audit's capacity

Each log runs under EASY with perfect estimates on its own hardware (HPC2N
and CERIT-SC: their ``.machines`` files, CERIT-SC with its jobs'
requirements; RICC: the header's 8,192 CPUs), then the steps of
:mod:`sched_engine.analysis.baseline_steps` (capacity the log used, queues,
each user's limits, down time, estimates). The down-time workloads are
written under ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sched_engine.analysis.baseline_steps import CAPACITY_TEXT, explain, goal, sentence  # noqa: E402

RICC = Path("/work/shared/traces/RICC-2010-2.swf.gz")
LOGS = {
    "hpc2n": {"trace": {"path": str(ROOT / "sample_traces/hpc2n-excerpt.swf")},
              "machines_path": str(ROOT / "sample_traces/hpc2n-excerpt.machines")},
    "cerit-sc": {"trace": {"path": str(ROOT / "sample_traces/cerit-sc-2013-slice.swf")},
                 "machines_path": str(ROOT / "sample_traces/cerit-sc-2013.machines"), "requirements": True},
    "ricc": {"trace": {"path": str(RICC)}},
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", choices=sorted(LOGS), default=["hpc2n", "cerit-sc", "ricc"])
    parser.add_argument("--ricc-jobs", type=int, default=60000, help="RICC's first N jobs (0: all)")
    parser.add_argument("--out", default="/tmp/baseline-steps")
    parser.add_argument("--capacity", default="log", choices=sorted(CAPACITY_TEXT),
                        help="the capacity step's: the log's peak, p99 or p99.9 of CPUs in use")
    args = parser.parse_args(argv)
    for name in args.logs:
        model = {**LOGS[name], "trace": dict(LOGS[name]["trace"])}
        if name == "ricc" and args.ricc_jobs:
            model["trace"]["max_jobs"] = args.ricc_jobs
        steps = explain({"engine": "batch", "policy": "easy", "model": model}, capacity=args.capacity,
                        folder=Path(args.out) / name)
        table = steps.table
        print(f"\n{name} ({int(table['compared_jobs'].iloc[0]):,} jobs compared)")
        print(f"{'step':<12} {'mean wait s':>12} {'recorded s':>11} {'ratio':>6} {'Spearman':>8} {'CPUs':>7} "
              f"{'wall s':>7}")
        for row in table.itertuples(index=False):
            ratio = row.simulated_mean_wait_s / row.recorded_mean_wait_s
            print(f"{row.step:<12} {row.simulated_mean_wait_s:>12,.0f} {row.recorded_mean_wait_s:>11,.0f} "
                  f"{ratio:>6.2f} {row.wait_rank_correlation:>8.2f} {row.cpus:>7,.0f} {row.wall_s:>7.1f}")
        within, ranked = goal(table)
        print(f"goal: mean wait within ±25% {'met' if within else 'not met'}; rank correlation >= 0.5 "
              f"{'met' if ranked else 'not met'}")
        print(sentence(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
