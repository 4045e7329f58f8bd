"""The result vocabulary: the mapping from former names, and every engine's frames within the declared names."""

import numpy as np
import pandas as pd

from sched_engine.core import records


def test_former_statuses_metrics_and_units_map_to_the_current_ones():
    jobs = pd.DataFrame({"status": pd.Series(["completed", "unfinished", "unfinished", "killed"], dtype="string"),
                         "start_time": [0.0, 5.0, np.nan, 1.0]})
    assert records.migrate_jobs(jobs)["status"].tolist() == ["finished", "running", "waiting", "killed"]
    timeline = pd.DataFrame({"metric": pd.Series(["utilization", "dominant_share"], dtype="string")})
    assert records.migrate_timeline(timeline)["metric"].tolist() == ["utilisation", "dominant_share"]
    summary = pd.DataFrame({"metric": pd.Series(["makespan", "mean_utilization_cpu", "avg_wait_s", "jobs"],
                                                dtype="string"),
                            "value": [1.0, 0.5, 2.0, 3.0],
                            "unit": pd.Series(["s", "fraction", "s", "jobs"], dtype="string")})
    migrated = records.migrate_summary(summary)
    assert migrated["metric"].tolist() == ["makespan_s", "utilisation_cpu", "mean_wait_s", "jobs"]
    assert migrated["unit"].tolist() == ["s", "share", "s", "jobs"]
    assert migrated["value"].tolist() == summary["value"].tolist()


def test_every_current_name_is_declared_once_and_no_former_name_is_current():
    for engine, metrics in records.SUMMARY_METRICS.items():
        assert not set(metrics) & set(records.LEGACY_NAMES["summary"]), engine
    for engine, metrics in records.TIMELINE_METRICS.items():
        assert not set(metrics) & set(records.LEGACY_NAMES["timeline"]), engine
    assert not set(records.STATUSES) & set(records.LEGACY_NAMES["status"])
