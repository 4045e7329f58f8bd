"""Ready-made elasticity models.

* "YARN-ME paper, 100 nodes" (§6.1): 100 nodes of 16 cores and 10 GB,
  100 jobs arriving uniformly in [0, 1000] s, Table 2's uniform ranges at
  mid-sweep (tasks per job in [1, 300], memory per task in [1, 6] GB, task
  duration in [1, 350] s) and the reducer (spill) penalty at 3x. Run
  YARN-ME here with its default parameters: no disk-contention limit on
  elastic tasks, since §6.1's simulation models none (§3.3 names a disk
  bandwidth portion but no figure).
* "two-job example": one 10 GB node, two one-task jobs of 6000 MB x 100 s
  arriving at 0 s and 1 s, 1.5x step penalty. YARN completes them 100 s
  and 199 s after arrival; YARN-ME starts the second at once under-sized
  and completes it 150 s after arrival.
"""

from __future__ import annotations


def paper_model(penalty_factor: float = 3.0, distribution: str = "uniform") -> dict:
    return {
        "nodes": [{"count": 100, "cores": 16, "memory_mb": 10_000}],
        "memory_step_mb": 100,
        "penalty": {"kind": "spill", "factor": penalty_factor},
        "trace": {"kind": "generated", "distribution": distribution, "jobs": 100, "tasks_per_job": [1, 300],
                  "memory_gb": [1.0, 6.0], "duration_s": [1.0, 350.0], "arrival_s": [0.0, 1000.0]},
    }


def two_job_model() -> dict:
    return {
        "nodes": [{"count": 1, "cores": 16, "memory_mb": 10_000}],
        "memory_step_mb": 100,
        "penalty": {"kind": "step", "factor": 1.5},
        "trace": {"kind": "jobs", "jobs": [
            {"job_id": "a", "arrival": 0.0, "tasks": [{"count": 1, "memory_mb": 6000, "duration": 100.0}]},
            {"job_id": "b", "arrival": 1.0, "tasks": [{"count": 1, "memory_mb": 6000, "duration": 100.0}]},
        ]},
    }


PRESETS = {
    "YARN-ME paper, 100 nodes": paper_model,
    "two-job example": two_job_model,
}
