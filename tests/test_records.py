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


def _runs():
    """One run of every registered policy on a small preset or sample of its engine."""
    import json
    from pathlib import Path

    from sched_engine import run_scenario
    from sched_engine.elastic.presets import two_job_model
    from sched_engine.fairshare.presets import fig4_model
    from sched_engine.network.presets import fig1_model
    from sched_engine.registry import REGISTRY

    batch = json.loads((Path(__file__).parents[1] / "sample_traces" / "batch-hpc2n.scenario.json").read_text())
    models = {"fairshare": fig4_model(), "network": fig1_model(), "elastic": two_job_model(),
              "batch": {**batch["model"], "trace": {**batch["model"]["trace"], "max_jobs": 150}},
              "site": {**batch["model"], "trace": {**batch["model"]["trace"], "max_jobs": 150},
                       "job_memory_per_cpu_mb": 1500, "memory_elastic": {"enabled": True}}}
    for engine, model in models.items():
        for entry in REGISTRY.policies(engine):
            yield engine, run_scenario({"engine": engine, "policy": entry.name, "model": model, "seed": 1})


def test_every_engine_uses_only_the_declared_columns_statuses_and_metrics():
    for engine, result in _runs():
        jobs, timeline, summary = result.jobs, result.timeline, result.summary
        declared = {**records.JOBS_COMMON, **records.JOBS_COLUMNS[engine]}
        assert set(jobs.columns) == set(declared), engine
        assert {c: str(t) for c, t in jobs.dtypes.items()} == {c: f.kind for c, f in declared.items()}, engine
        assert set(jobs["status"]) <= set(records.STATUSES), engine
        assert set(timeline["metric"]) <= set(records.TIMELINE_METRICS[engine]), engine
        metrics = records.SUMMARY_METRICS[engine]
        for name, unit in zip(summary["metric"], summary["unit"]):
            pattern = name if name in metrics else next(
                (m for m in metrics if "<" in m and name.startswith(m.split("<")[0])), None)
            assert pattern is not None, (engine, name)
            assert unit == metrics[pattern].kind, (engine, name, unit)


def test_the_results_page_documents_every_declared_name():
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "results.md").read_text()
    names = [*records.STATUSES, *records.JOBS_COMMON]
    for table in (records.JOBS_COLUMNS, records.TIMELINE_METRICS, records.SUMMARY_METRICS):
        names += [name for engine in table.values() for name in engine]
    assert [name for name in names if f"`{name}`" not in page] == []


def test_frames_written_as_csv_read_back_equal_and_mixed_columns_still_write(tmp_path):
    from sched_engine.core.result import write_frame_csv

    frame = pd.DataFrame({"job_id": [1, 2], "start_time": [0.0, float("nan")], "machines": ["0,1", ""],
                          "reason": ["", 'a "quoted", text']})
    write_frame_csv(frame, tmp_path / "a.csv")
    back = pd.read_csv(tmp_path / "a.csv", keep_default_na=False, na_values=[""])
    assert back["job_id"].tolist() == [1, 2] and back["start_time"].isna().tolist() == [False, True]
    assert back["machines"].fillna("").tolist() == ["0,1", ""] and back["reason"].fillna("").tolist()[1] == 'a "quoted", text'
    write_frame_csv(pd.DataFrame({"mixed": [1, "x"]}), tmp_path / "b.csv")
    assert pd.read_csv(tmp_path / "b.csv")["mixed"].astype(str).tolist() == ["1", "x"]


def test_whole_floats_are_written_as_arrow_writes_the_floats(tmp_path):
    """Float columns of whole numbers go out through Arrow's integer writer (faster), byte for byte the text its
    float writer gives; fractions, -0.0 and values from 1e10 on (which it may write with an exponent) stay
    floats."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from sched_engine.core.result import _whole_numbers, write_frame_csv

    columns = {"whole": [0.0, 222.0, -3.0, float("nan"), 9_999_999_999.0], "fraction": [0.5, 1.0, 2.0, 3.0, 4.0],
               "negative_zero": [-0.0, 1.0, 2.0, 3.0, 4.0], "large": [1.01e10, 1.0, 2.0, 3.0, 4.0]}
    frame = pd.DataFrame(columns)
    assert _whole_numbers(frame["whole"]) is not None
    assert all(_whole_numbers(frame[name]) is None for name in ("fraction", "negative_zero", "large"))
    write_frame_csv(frame, tmp_path / "fast.csv")
    pa_csv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), str(tmp_path / "plain.csv"),
                     write_options=pa_csv.WriteOptions(quoting_style="needed"))
    assert (tmp_path / "fast.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert (tmp_path / "fast.csv").read_text().splitlines()[5].startswith("9999999999,")
