"""Trace generators and the SLS/DSS JSON and CSV readers of the elasticity engine."""

import json

import numpy as np
import pytest

from sched_engine import ScenarioError, run_scenario
from sched_engine.elastic.presets import two_job_model
from sched_engine.elastic.traces import generate_trace, read_csv, read_sls

SPEC = {"distribution": "uniform", "jobs": 200, "tasks_per_job": [1, 300], "memory_gb": [1.0, 6.0],
        "duration_s": [1.0, 350.0], "arrival_s": [0.0, 1000.0]}


@pytest.mark.parametrize("distribution", ["uniform", "exponential"])
def test_generated_traces_stay_in_range_and_follow_the_seed(distribution):
    spec = {**SPEC, "distribution": distribution}
    jobs = generate_trace(spec, np.random.default_rng(7))
    assert jobs == generate_trace(spec, np.random.default_rng(7))
    assert jobs != generate_trace(spec, np.random.default_rng(8))
    arrivals = [j.arrival for j in jobs]
    assert arrivals == sorted(arrivals) and 0 <= arrivals[0] and arrivals[-1] <= 1000
    groups = [j.groups[0] for j in jobs]
    assert all(1 <= g.count <= 300 and 1000 <= g.memory_mb <= 6000 and g.memory_mb % 100 == 0 for g in groups)
    assert all(1.0 <= g.duration <= 350.0 for g in groups)
    counts = np.array([g.count for g in groups])
    if distribution == "exponential":  # skewed towards the minimum
        assert np.median(counts) < 100
    else:
        assert 100 < np.median(counts) < 200


def test_sls_json_concatenated_objects():
    text = (
        '{"job.id": "job_1", "job.start.ms": 2000, "job.tasks": [\n'
        '  {"c.nr": 3, "c.dur": 50000, "c.mem": 2048, "c.type": "map", "c.prio": 20},\n'
        '  {"c.nr": 1, "c.dur": 10000, "c.mem": 4000, "c.type": "reduce"}]}\n'
        '{"job.id": "job_2", "job.start.ms": 0, "job.tasks": [\n'
        '  {"container.start.ms": 100, "container.end.ms": 5100, "container.memory": 1000}]}\n'
    )
    jobs = read_sls(text, "t.json")
    assert [j.job_id for j in jobs] == ["job_1", "job_2"]
    assert jobs[0].arrival == 2.0
    assert [(g.count, g.memory_mb, g.duration, g.phase) for g in jobs[0].groups] == [(3, 2048, 50.0, 0), (1, 4000, 10.0, 1)]
    assert jobs[1].groups[0].duration == 5.0


@pytest.mark.parametrize("text, field, line", [
    ('{"job.id": "x", "job.start.ms": 0, "job.tasks": [{"c.nr": 1, "c.mem": 100}]}', "job x: job.tasks[0].c.dur", 1),
    ('{"job.id": "x", "job.start.ms": 0, "job.tasks": []}\n', "job x: job.tasks", 1),
    ('{"job.id": "a", "job.start.ms": 0, "job.tasks": [{"c.dur": 1, "c.mem": 1}]}\n'
     '{"job.id": "b", "job.tasks": [{"c.dur": 1, "c.mem": 1}]}', "job b: job.start.ms", 2),
    ('{"job.id": "x", "job.start.ms": 0, "job.tasks": [{"c.dur": 1, "c.mem": "lots"}]}', "job x: job.tasks[0].c.mem", 1),
    ('{"job.id": "x", "job.start.ms": 0, "job.tasks": [{"c.dur": 1, "c.mem": 1, "c.type": "merge"}]}',
     "job x: job.tasks[0].c.type", 1),
])
def test_sls_errors_name_the_job_and_field(text, field, line):
    with pytest.raises(ScenarioError) as caught:
        read_sls(text, "t.json")
    assert caught.value.field == field and caught.value.line == line and caught.value.source == "t.json"


def test_sls_syntax_error_names_the_line():
    with pytest.raises(ScenarioError) as caught:
        read_sls('{"job.id": "a",\n "job.start.ms": }', "bad.json")
    assert caught.value.line == 2 and "invalid JSON" in str(caught.value)


def test_csv_groups_rows_by_job():
    jobs = read_csv("job_id,arrival_s,tasks,memory_mb,duration_s,phase\n"
                    "a,0,2,1000,10,map\na,0,1,500,5,reduce\nb,3,1,700,4,\n", "t.csv")
    assert [(j.job_id, j.arrival, len(j.groups)) for j in jobs] == [("a", 0.0, 2), ("b", 3.0, 1)]
    assert jobs[0].groups[1].phase == 1 and jobs[1].groups[0].phase == 0


@pytest.mark.parametrize("text, field, line", [
    ("job_id,arrival_s,tasks,memory_mb\n", "duration_s", 1),
    ("job_id,arrival_s,tasks,memory_mb,duration_s\na,0,1,100,10\nb,1,0,100,10\n", "tasks", 3),
    ("job_id,arrival_s,tasks,memory_mb,duration_s\na,0,1,abc,10\n", "memory_mb", 2),
    ("job_id,arrival_s,tasks,memory_mb,duration_s\na,0,1,100,10\na,5,1,100,10\n", "arrival_s", 3),
])
def test_csv_errors_name_line_and_field(text, field, line):
    with pytest.raises(ScenarioError) as caught:
        read_csv(text, "t.csv")
    assert caught.value.field == field and caught.value.line == line


def test_file_trace_runs_and_oversized_task_names_the_file(tmp_path):
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps([{"job.id": "j", "job.start.ms": 0, "job.tasks": [{"c.nr": 2, "c.dur": 1000, "c.mem": 3000}]}]))
    model = {**two_job_model(), "trace": {"kind": "file", "path": str(path)}}
    result = run_scenario({"engine": "elastic", "policy": "yarn", "model": model})
    assert result.jobs["end_time"].tolist() == [1.0]
    path.write_text(json.dumps([{"job.id": "j", "job.start.ms": 0, "job.tasks": [{"c.dur": 1000, "c.mem": 30000}]}]))
    with pytest.raises(ScenarioError) as caught:
        run_scenario({"engine": "elastic", "policy": "yarn", "model": model})
    assert caught.value.source == "jobs.json" and "more than any node has" in caught.value.message
