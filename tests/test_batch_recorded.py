"""The "recorded" batch policy (the log as it ran) and the model's ``capacity``: hand-computed logs and properties."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.batch.capacity import needed_cpus
from sched_engine.core.errors import ScenarioError
from sched_engine.core.result import SimulationResult
from sched_engine.runner import normalize_scenario, run_scenario


def _cpus(count: int) -> list[dict]:
    return [{"name": "c", "machines": count, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]


def _trace(folder: Path, rows: str) -> Path:
    path = folder / "log.csv"
    path.write_text("job_id,submit_time,recorded_wait,run_time,procs,user\n" + rows)
    return path


def _run(trace: Path, cpus: int, policy: str = "recorded", **model) -> SimulationResult:
    return run_scenario({"engine": "batch", "policy": policy,
                         "model": {"trace": {"path": str(trace)}, "clusters": _cpus(cpus), **model}})


def _starts(result: SimulationResult) -> dict[str, float]:
    return dict(zip(result.jobs.job_id, result.jobs.start_time))


def _summary(result: SimulationResult) -> dict[str, float]:
    return dict(zip(result.summary.metric, result.summary.value))


# a: 4 CPUs from 5 to 105; b (submitted after a) 6 CPUs from 1 to 11; c no recorded wait: 2 CPUs at its
# submission, 2 to 5; d 6 CPUs from 3 + 50 = 53 (a's 4 leave 6 free). At 5, c's end counts before a's start:
# 10 CPUs in use at most.
FITTING = "a,0,5,100,4,u\nb,1,0,10,6,v\nc,2,,3,2,u\nd,3,50,10,6,v\n"


def test_every_job_starts_when_the_log_says_on_hardware_that_holds_it(tmp_path):
    result = _run(_trace(tmp_path, FITTING), 10)
    assert _starts(result) == {"a": 5.0, "b": 1.0, "c": 2.0, "d": 53.0}
    assert result.jobs.set_index("job_id").end_time.to_dict() == {"a": 105.0, "b": 11.0, "c": 5.0, "d": 63.0}
    summary = _summary(result)
    assert summary["delayed_starts"] == 0
    assert summary["mean_wait_s"] == pytest.approx((5 + 0 + 0 + 50) / 4)
    used = result.timeline[(result.timeline.metric == "used_cpus")]
    assert used.value.max() == 10
    # Every frame a simulated run has: the queue and the waits per job beside the log's.
    assert set(result.timeline.metric) >= {"used_cpus", "up_cpus", "queue_length", "killed_jobs"}
    assert np.allclose(result.jobs.wait_time, result.jobs.recorded_wait.fillna(0))


# On 6 CPUs: a 4 CPUs 0-10; b 4 CPUs recorded at 2 does not fit until a ends at 10; c (1 CPU, recorded
# at 5) would fit at 5 but waits behind b (recorded order kept), so both start at 10; d at 30 as recorded.
# The recorded schedule peaks at 4 + 4 + 1 = 9 CPUs (5 to 10).
TOO_SMALL = "a,0,0,10,4,u\nb,0,2,10,4,v\nc,1,4,5,1,u\nd,30,0,1,6,v\n"


def test_a_job_the_hardware_cannot_hold_starts_when_it_fits_and_later_ones_keep_their_order(tmp_path):
    result = _run(_trace(tmp_path, TOO_SMALL), 6)
    assert _starts(result) == {"a": 0.0, "b": 10.0, "c": 10.0, "d": 30.0}
    summary = _summary(result)
    assert summary["delayed_starts"] == 2
    assert summary["cpus"] == 6


def test_on_the_capacity_the_log_used_every_start_is_kept(tmp_path):
    trace = _trace(tmp_path, TOO_SMALL)
    result = _run(trace, 6, capacity="log")
    assert _starts(result) == {"a": 0.0, "b": 2.0, "c": 5.0, "d": 30.0}
    summary = _summary(result)
    assert (summary["cpus"], summary["clusters"], summary["delayed_starts"]) == (9, 1, 0)
    assert set(result.jobs.cluster) == {"c"}   # the hardware's cluster name is kept
    # A hardware that holds the log is left alone.
    assert _summary(_run(trace, 12, capacity="log"))["cpus"] == 12


def test_capacity_applies_to_every_policy(tmp_path):
    # EASY on the log's 9 CPUs: b and c start on arrival (4 + 4 + 1 <= 9).
    easy = _run(_trace(tmp_path, TOO_SMALL), 6, policy="easy", capacity="log")
    assert _starts(easy) == {"a": 0.0, "b": 0.0, "c": 1.0, "d": 30.0}
    assert _summary(easy)["cpus"] == 9


# x: 2 CPUs over [0, 1000); y: 3 CPUs over [10, 15). 5 CPUs in use for 5 s of the 1,000 s span (0.5%), 2 for the
# rest: the time-weighted p99 is 2, below the largest job (3), which is the capacity then.
SPIKE = "x,0,0,1000,2,u\ny,10,0,5,3,v\n"


def test_the_p99_capacity_is_the_time_weighted_quantile_or_the_largest_job(tmp_path):
    trace = _trace(tmp_path, SPIKE)
    jobs = pd.read_csv(trace)
    assert needed_cpus(jobs, "log") == 5
    assert needed_cpus(jobs, "log_p99") == 3
    assert needed_cpus(jobs.assign(procs=[2, 1]), "log_p99") == 2   # p99 2, largest job 1
    result = _run(trace, 1, capacity="log_p99")
    assert _summary(result)["cpus"] == 3
    assert _starts(result) == {"x": 0.0, "y": 1000.0}   # y does not fit beside x on 3 CPUs
    assert _summary(result)["delayed_starts"] == 1


def test_a_bad_capacity_names_the_field(tmp_path):
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario({"engine": "batch", "policy": "easy",
                            "model": {"trace": {"path": str(_trace(tmp_path, SPIKE))}, "capacity": "huge"}})
    assert caught.value.field == "model.capacity"
    plain = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": str(_trace(tmp_path, SPIKE))},
                                                             "clusters": _cpus(4)}}
    explicit = {**plain, "model": {**plain["model"], "capacity": "hardware"}}
    assert normalize_scenario(plain).content_hash() == normalize_scenario(explicit).content_hash()


JOB = st.tuples(st.integers(0, 40), st.one_of(st.none(), st.integers(0, 30)), st.integers(0, 20), st.integers(1, 6))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JOB, min_size=1, max_size=12), st.integers(6, 12))
def test_every_recorded_start_is_kept_when_the_capacity_holds_the_log_and_capacity_is_never_exceeded(jobs, cpus):
    rows = "".join(f"j{i},{s},{'' if w is None else w},{r},{p},u{i % 3}\n" for i, (s, w, r, p) in enumerate(jobs))
    with tempfile.TemporaryDirectory() as folder:
        trace = _trace(Path(folder), rows)
        held = _run(trace, cpus, capacity="log")
        small = _run(trace, cpus)
    first = min(s for s, _, _, _ in jobs)
    recorded = {f"j{i}": s - first + (w or 0) for i, (s, w, _, _) in enumerate(jobs)}
    assert _starts(held) == recorded
    assert _summary(held)["delayed_starts"] == 0
    for result in (held, small):
        total = _summary(result)["cpus"]
        used = result.timeline[result.timeline.metric == "used_cpus"].value
        assert used.max() <= total
        starts = _starts(result)
        assert all(starts[job] >= recorded[job] for job in recorded)
    # On the hardware, starts keep the recorded order (ties by submission), and the delayed ones are counted.
    order = sorted(recorded, key=lambda job: (recorded[job], jobs[int(job[1:])][0], int(job[1:])))
    small_starts = _starts(small)
    assert all(small_starts[a] <= small_starts[b] for a, b in zip(order, order[1:]))
    assert _summary(small)["delayed_starts"] == sum(small_starts[j] > recorded[j] for j in recorded)
    assert _summary(held)["cpus"] == max(cpus, math.ceil(needed_cpus(held.jobs, "log")))
