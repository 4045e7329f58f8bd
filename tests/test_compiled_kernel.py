"""The compiled EASY and Conservative loops make the Python kernel's decisions: same schedule, machines, samples
and reasons.

The Python kernel (``kernel="python"``) is the reference; every comparison
here is exact (no tolerance): start and end times, statuses, clusters,
cancellation reasons, the machines each job held, the timeline samples and
the exact pending-reasons table.
"""

import io
import json
import os
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from golden.regenerate import HERE, golden_cases, golden_frames
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine import run_scenario
from sched_engine.batch import compiled, machine_texts
from sched_engine.batch.cluster import ClusterState
from sched_engine.batch.pending import exact_table
from sched_engine.batch.policies.conservative import Conservative
from sched_engine.batch.policies.easy import EASY
from sched_engine.batch.policies.fcfs import FCFS
from sched_engine.batch.simulate import BatchSimulation

ROOT = Path(__file__).resolve().parents[1]


def _clusters(shapes):
    """``shapes``: per cluster ``(machines, CPUs per machine)``."""
    return [ClusterState(i, f"c{i}", [cpus] * machines, 1.0) for i, (machines, cpus) in enumerate(shapes)]


def _run(kernel, jobs, shapes, suitable=None, policy=EASY):
    submit, run, estimate, procs = (list(column) for column in zip(*jobs)) if jobs else ([], [], [], [])
    sim = BatchSimulation(submit=submit, run_time=run, estimate=estimate, procs=procs,
                          suitable=suitable or [None] * len(jobs), clusters=_clusters(shapes), policy=policy(),
                          rng=np.random.default_rng(0), kernel=kernel)
    sim.run()
    return sim


def _assert_same_run(python, fast):
    assert np.array_equal(np.array(python.start_time), np.array(fast.start_time), equal_nan=True)
    assert np.array_equal(np.array(python.end_time), np.array(fast.end_time), equal_nan=True)
    assert list(python.status) == list(fast.status)
    assert list(python.cluster_of) == list(fast.cluster_of)
    assert list(python.reason) == list(fast.reason)
    assert fast.machines_column is not None and python.machines_column is None
    assert machine_texts(python).tolist() == machine_texts(fast).tolist()
    assert np.array_equal(np.asarray(python.samples, dtype=float).reshape(-1, 4), np.asarray(fast.samples))
    assert exact_table(python).equals(exact_table(fast))


def test_a_hand_made_backfill_is_the_same_on_both_loops():
    # 4 CPUs: job 0 takes 3 until 10; job 1 (4 CPUs) waits for it (shadow 10, extra 0); job 2 (1 CPU, ends by 10)
    # is backfilled at 1; job 3 (1 CPU, 20 s) would delay job 1 and waits; job 4 asks 5 CPUs and is cancelled.
    jobs = [(0, 10, 10, 3), (1, 5, 5, 4), (1, 5, 8, 1), (2, 20, 20, 1), (3, 1, 1, 5)]
    python, fast = _run("python", jobs, [(4, 1)]), _run("compiled", jobs, [(4, 1)])
    _assert_same_run(python, fast)
    assert fast.start_time[:4] == [0.0, 10.0, 1.0, 15.0]
    assert fast.reason[4] == "no suitable cluster"


def test_machine_texts_are_written_from_ranges_and_pairs_as_the_clusters_write_them():
    from sched_engine.batch.compiled.machines_text import machines_column
    # job 0: machines 8..11 and 15 of a one-CPU cluster (two ranges); job 1: held nothing; job 2: 3 CPUs on
    # machine 2 and 1 on machine 10 of a cluster of 4-CPU machines; job 3: machine 0 alone (one range).
    ptr = np.array([0, 2, 2, 4])
    length = np.array([2, 0, 2, 1])
    cluster_of = np.array([0, -1, 1, 0])
    first, second = np.array([8, 15, 2, 10, 0]), np.array([12, 16, 3, 1, 1])
    column = machines_column(ptr, length, cluster_of, np.array([True, False]), first, second)
    assert column.to_pylist() == ["8,9,10,11,15", "", "2,10", "0"]
    one_cpu, four_cpus = ClusterState(0, "a", [1] * 16, 1.0), ClusterState(1, "b", [4] * 11, 1.0)
    assert one_cpu.machines_text([8, 12, 15, 16]) == "8,9,10,11,15"
    assert four_cpus.machines_text(([2, 10], [3, 1])) == "2,10"


def test_an_ineligible_run_takes_the_python_loop():
    sim = BatchSimulation(submit=[0.0], run_time=[1.0], estimate=[1.0], procs=[1], suitable=[None],
                          clusters=_clusters([(1, 1)]), policy=FCFS(), rng=np.random.default_rng(0),
                          kernel="compiled")
    assert not compiled.eligible(sim, "compiled")   # FCFS has its own one-step-per-job loop
    assert compiled.eligible(_unrun("compiled", Conservative), "compiled")
    assert not compiled.eligible(_unrun("python"), "python")
    assert compiled.eligible(_unrun("compiled"), "compiled")
    assert not compiled.eligible(_unrun("auto"), "auto")   # under MIN_JOBS: numba would cost more than it saves
    with mock.patch.dict(os.environ, {"SCHEDSCOPE_KERNEL": "python"}):
        assert compiled.chosen_kernel(None) == "python"
    with pytest.raises(ValueError, match="kernel 'fast'"):
        compiled.chosen_kernel("fast")


def _unrun(kernel, policy=EASY):
    return BatchSimulation(submit=[0.0, 1.0], run_time=[1.0, 1.0], estimate=[1.0, 1.0], procs=[1, 1],
                           suitable=[None, None], clusters=_clusters([(2, 1)]), policy=policy(),
                           rng=np.random.default_rng(0), kernel=kernel)


def test_reasons_longer_than_the_first_walks_guess_are_walked_again_whole():
    """The compiled reasons walk writes into columns sized by a guess and counts past them; a short guess
    (here no row at all) takes a second, exact walk: the same table as the Python loop's."""
    from sched_engine.batch.compiled import reasons

    jobs = [(0, 10, 10, 3), (1, 5, 5, 4), (1, 5, 8, 1), (2, 20, 20, 1), (2, 4, 9, 2), (3, 6, 6, 1)]
    python = exact_table(_run("python", jobs, [(4, 1)]))
    walk, rows_given = reasons._walk, []

    def counted(*args):
        rows_given.append(len(args[-1]))   # the last argument: the blocking-job column
        return walk(*args)

    with mock.patch.object(reasons, "ROWS_PER_PLACE_GUESS", 0), mock.patch.object(reasons, "_walk", counted):
        table = exact_table(_run("compiled", jobs, [(4, 1)]))
    assert rows_given == [0, len(python.job)] and len(python.job) > 2
    assert table.equals(python)


_job = st.tuples(st.integers(0, 60), st.integers(0, 25), st.integers(0, 15), st.integers(1, 14))


@pytest.mark.parametrize("policy", [EASY, Conservative], ids=["easy", "cons"])
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.lists(_job, max_size=60),
       shapes=st.lists(st.tuples(st.integers(1, 6), st.sampled_from([1, 2, 4])), min_size=1, max_size=3),
       restrict=st.lists(st.one_of(st.none(), st.sets(st.integers(0, 2))), max_size=60))
def test_random_traces_give_the_same_run_on_both_loops(policy, jobs, shapes, restrict):
    """Equal submission times, zero-length jobs, exact and longer estimates (never shorter than the run: the
    model takes the larger of the two), jobs too large for every cluster, jobs restricted to some clusters (or
    none): the same decisions, machines and reasons."""
    jobs = [(float(s), float(r), float(r + max(e - 5, 0)), p) for s, r, e, p in jobs]
    suitable = [None if i >= len(restrict) or restrict[i] is None
                else tuple(sorted(c for c in restrict[i] if c < len(shapes))) for i in range(len(jobs))]
    _assert_same_run(_run("python", jobs, shapes, suitable, policy), _run("compiled", jobs, shapes, suitable, policy))


COMPILED_GOLDEN = [case for case in golden_cases() if case[1] in ("easy", "cons") and case[0]["engine"] == "batch"]


@pytest.mark.parametrize("scenario, policy, stem", COMPILED_GOLDEN,
                         ids=[f"{case[2]}-{case[1]}" for case in COMPILED_GOLDEN])
def test_golden_samples_are_reproduced_by_the_compiled_loop(scenario, policy, stem):
    with mock.patch.dict(os.environ, {"SCHEDSCOPE_KERNEL": "compiled"}):
        frames = golden_frames(scenario)
    for name, frame in frames.items():
        expected = pd.read_csv(HERE / f"{stem}.{policy}.{name}.csv")
        actual = pd.read_csv(io.StringIO(frame.to_csv(index=False, float_format="%.12g")))
        pd.testing.assert_frame_equal(actual, expected, check_dtype=False)


def _frames(scenario, kernel):
    with mock.patch.dict(os.environ, {"SCHEDSCOPE_KERNEL": kernel}):
        result = run_scenario(scenario)
    return {"jobs": result.jobs, "timeline": result.timeline, "pending": result.extra("pending")}


@pytest.mark.parametrize("policy", ["easy", "cons"])
@pytest.mark.parametrize("sample", ["batch-hpc2n", "batch-metacentrum"])
def test_sample_logs_without_failures_give_the_same_frames_on_both_loops(sample, policy):
    """The samples' logs on their hardware (MetaCentrum-style: five clusters, jobs restricted to some), no
    failures, the users' estimates (so jobs end early): every frame the same, reasons included."""
    scenario = json.loads((ROOT / "sample_traces" / f"{sample}.scenario.json").read_text())
    scenario = {**scenario, "policy": policy, "policy_params": {},
                "model": {**scenario["model"], "failures": {"kind": "none"}, "estimates": "trace"}}
    python, fast = _frames(scenario, "python"), _frames(scenario, "compiled")
    for name in python:
        pd.testing.assert_frame_equal(python[name], fast[name])
    assert len(fast["pending"]) > 0
