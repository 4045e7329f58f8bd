"""Why site jobs waited: every reason holds at every instant, checked against machines replayed from the schedule.

The checker knows nothing of the engine's recorder. It replays the run's
machines from the schedule: each job holds its CPUs, and its memory per CPU
(times the share it got) on each of them, from its start to its end; the
jobs of one instant start in the order the kernel started them (its log of
decisions), each taking CPUs first fit over the machines of its cluster,
where a machine gives ``min(free CPUs, floor(free memory / memory per
CPU))``; at an instant ends come before starts. From those machines it asks
of each interval of ``pending``, at every instant in it:

* ``resources`` -- no cluster the job may use (one whose idle machines
  could hold it) can give it its CPUs, with their memory;
* ``reservation`` and ``priority`` -- one can; a ``reservation`` names a job
  that waits all along and, under EASY, does not fit then (the head the
  pass reserved for; under CONS the first job the plan left waiting, which
  the plan may hold though it fits).

and that the intervals tile each wait: from the submission to the start,
back to back, consecutive rows differing.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine import run_scenario
from sched_engine.registry import REGISTRY
from sched_engine.site import jobs_frame, normalize_model, simulate
from sched_engine.site.reasons import SiteReasons

SLACK = 1e-9   # the engine's floor slack (a machine whose free memory is a whole number of jobs' memory)
ROOM = {"reservation", "priority"}


def _givable(machines: list[list[float]], per_cpu: float) -> int:
    return sum(int(cpus) if per_cpu <= 0 else min(int(cpus), math.floor(memory / per_cpu + SLACK))
               for cpus, memory in machines)


def replay(sim, jobs) -> tuple[list[float], list[list[list[list[float]]]]]:
    """Instants at which the machines changed, and the machines (``[free CPUs, free MB]``, per cluster) from each."""
    size = [(np.asarray(c.cpus), np.asarray(c.memory)) for c in sim.clusters]
    machines = [[[float(cpus[m]), float(memory[m])] for m in range(len(cpus))] for cpus, memory in size]
    per_cpu = [sim.memory_per_cpu[j] * sim.memory_fraction[j] for j in range(len(sim.procs))]
    held: dict[int, list[tuple[int, int]]] = {}
    starts: dict[float, list[int]] = {}
    for time, decision in sim.decision_log:
        if type(decision).__name__ == "Start" and jobs["end_time"].iat[decision.job] > time:
            starts.setdefault(time, []).append(decision.job)
    ends: dict[float, list[int]] = {}
    for job in starts_of(starts):
        ends.setdefault(float(jobs["end_time"].iat[job]), []).append(job)
    times = sorted(set(starts) | set(ends))
    snapshots = [[[list(m) for m in cluster] for cluster in machines]]
    instants = [0.0]
    for time in times:
        for job in ends.get(time, ()):
            cluster = machines[sim.cluster_of[job]]
            for machine, count in held.pop(job):
                cluster[machine][0] += count
                cluster[machine][1] += count * per_cpu[job]
        for job in starts.get(time, ()):
            cluster, needed, taken = machines[sim.cluster_of[job]], sim.procs[job], []
            for machine, (cpus, memory) in enumerate(cluster):
                give = _givable([[cpus, memory]], per_cpu[job])
                if give > 0 and needed:
                    taken.append((machine, min(give, needed)))
                    needed -= min(give, needed)
            assert needed == 0, f"job {job} does not fit on the replayed machines at {time}"
            for machine, count in taken:
                cluster[machine][0] -= count
                cluster[machine][1] -= count * per_cpu[job]
            held[job] = taken
        instants.append(time)
        snapshots.append([[list(m) for m in cluster] for cluster in machines])
    return instants, snapshots


def starts_of(starts: dict[float, list[int]]) -> list[int]:
    return [job for jobs in starts.values() for job in jobs]


def check_reasons(sim) -> int:
    """Assert every interval of the run's reasons against the replayed machines; returns the rows checked."""
    jobs = jobs_frame(sim)
    pending = sim.reasons.frame(jobs["job_id"])
    index = {job_id: i for i, job_id in enumerate(jobs["job_id"])}
    instants, snapshots = replay(sim, jobs)
    low = sim.policy.elastic["min_fraction"] if getattr(sim.policy, "elastic", {}).get("enabled") else 1.0
    idle = [[[float(c), float(m)] for c, m in zip(cluster.cpus, cluster.memory)] for cluster in sim.clusters]

    def fits(job: int, at: int) -> bool:
        need, per_cpu = sim.procs[job], sim.memory_per_cpu[job] * (low if sim.memory_per_cpu[job] > 0 else 1.0)
        return any(_givable(snapshots[at][c], per_cpu) >= need for c in range(len(idle))
                   if _givable(idle[c], per_cpu) >= need)

    rows = list(pending.itertuples(index=False))
    for job_id, start, end, reason, blocking in rows:
        job = index[job_id]
        assert start < end
        first = np.searchsorted(instants, start, side="right") - 1
        last = np.searchsorted(instants, end, side="left")      # the snapshots in force during [start, end)
        for at in range(first, last):
            if reason in ROOM:
                assert fits(job, at), (job_id, start, end, reason, instants[at])
            else:
                assert reason == "resources" and not fits(job, at), (job_id, start, end, reason, instants[at])
        if reason == "reservation":
            other = index[blocking]
            assert jobs["submit_time"].iat[other] <= start and not jobs["start_time"].iat[other] < end
            if sim.policy.order.backfill == "easy":   # CONS names the first job its plan left waiting, fitting or not
                assert not any(fits(other, at) for at in range(first, last)), (job_id, blocking, start)
    # The intervals tile each wait, and consecutive rows of a job say something new.
    by_job: dict[str, list] = {}
    for row in rows:
        by_job.setdefault(row[0], []).append(row)
    waited = jobs[(jobs["start_time"].fillna(jobs["end_time"]) > jobs["submit_time"])]
    assert set(by_job) == set(waited["job_id"])
    for job_id, mine in by_job.items():
        job = index[job_id]
        left = jobs["start_time"].iat[job] if not np.isnan(jobs["start_time"].iat[job]) else jobs["end_time"].iat[job]
        assert mine[0][1] == jobs["submit_time"].iat[job] and mine[-1][2] == left
        for before, after in zip(mine, mine[1:]):
            assert before[2] == after[1] and before[3:] != after[3:]
    return len(rows)


def _model(tmp_path, rows, clusters, memory, elastic=False) -> dict:
    path = tmp_path / "jobs.csv"
    header = "job_id,submit_time,run_time,procs,requested_time,user,group,memory_per_cpu_mb"
    path.write_text("\n".join([header, *(",".join(map(str, row)) for row in rows)]) + "\n")
    return {"trace": {"path": str(path)}, "clusters": clusters, "estimates": "trace",
            "memory_per_machine_mb": memory, "memory_elastic": {"enabled": elastic}}


def _run(model: dict, policy: str, backfill: str):
    order = REGISTRY.create("site", policy, {"backfill": backfill})
    return simulate(normalize_model(model), order, np.random.default_rng(1), keep_decisions=True)


def test_a_hand_computed_wait_for_memory_and_for_the_head_s_reservation(tmp_path):
    # Two machines of 4 CPUs and 8192 MB. t=0: A (4 CPUs x 2048 MB, to 100) fills machine 0; B (3 x 2048, to 200)
    # leaves machine 1 one CPU and 2048 MB. t=10: C (5 x 1024) lacks CPUs: the head, reserved at 100 (A's end),
    # when it takes all 5 free CPUs (none left over). t=20: E (1 x 4096) has its one CPU free but not its memory:
    # resources, until B ends at 200. t=30: F (1 x 1024, 500 s) fits on machine 1 but would hold the CPU C needs
    # at 100: reservation, naming C. t=50: D (1 x 512, estimate 40) ends by 100: backfilled, so F lacks a CPU
    # until D ends at 80, then waits for C's reservation again; C takes that CPU at 100, and F waits for
    # resources until 200, when B's end frees machine 1 for E (the older) and F.
    rows = [("A", 0, 100, 4, 100, "u", "g", 2048), ("B", 0, 200, 3, 200, "u", "g", 2048),
            ("C", 10, 100, 5, 100, "u", "g", 1024), ("E", 20, 50, 1, 50, "u", "g", 4096),
            ("F", 30, 500, 1, 500, "u", "g", 1024), ("D", 50, 30, 1, 40, "u", "g", 512)]
    model = _model(tmp_path, rows, [{"name": "c", "machines": 2, "cpus_per_machine": 4}], {"c": 8192})
    result = run_scenario({"engine": "site", "policy": "fcfs", "seed": 1, "policy_params": {"backfill": "easy"},
                           "model": model})
    starts = dict(zip(result.jobs["job_id"], result.jobs["start_time"]))
    assert starts == {"A": 0, "B": 0, "C": 100, "E": 200, "F": 200, "D": 50}
    assert [tuple(row) for row in result.extra("pending").itertuples(index=False)] == [
        ("C", 10.0, 100.0, "resources", ""),
        ("E", 20.0, 200.0, "resources", ""),
        ("F", 30.0, 50.0, "reservation", "C"),
        ("F", 50.0, 80.0, "resources", ""),
        ("F", 80.0, 100.0, "reservation", "C"),
        ("F", 100.0, 200.0, "resources", ""),
    ]
    assert check_reasons(_run(model, "fcfs", "easy")) == 6


def test_without_backfilling_a_job_that_fits_waits_behind_the_head_of_the_order(tmp_path):
    # Same machines and jobs, no backfilling: D fits at 50 (and F at 30) but C, the head, blocks every later job.
    rows = [("A", 0, 100, 4, 100, "u", "g", 2048), ("B", 0, 200, 3, 200, "u", "g", 2048),
            ("C", 10, 100, 5, 100, "u", "g", 1024), ("F", 30, 500, 1, 500, "u", "g", 1024)]
    model = _model(tmp_path, rows, [{"name": "c", "machines": 2, "cpus_per_machine": 4}], {"c": 8192})
    sim = _run(model, "fcfs", "none")
    frame = sim.reasons.frame(jobs_frame(sim)["job_id"])
    assert [tuple(row) for row in frame.itertuples(index=False)] == [
        ("C", 10.0, 100.0, "resources", ""),
        ("F", 30.0, 100.0, "priority", "C"),
        ("F", 100.0, 200.0, "resources", ""),
    ]
    check_reasons(sim)


_JOB = st.tuples(st.integers(0, 60), st.integers(0, 40), st.integers(1, 6), st.integers(0, 30),
                 st.sampled_from(["a", "b", "c"]), st.sampled_from([0, 512, 1024, 1500, 3000, 4096]))


@pytest.mark.parametrize("policy, backfill, elastic", [
    ("fcfs", "easy", False), ("hdrf", "easy", False), ("drf", "easy", True), ("wdrf", "none", False),
    ("mch", "cons", False), ("fcfs", "cons", False)])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(_JOB, min_size=1, max_size=20))
def test_every_reason_holds_at_every_instant_on_a_random_site_trace(policy, backfill, elastic, jobs, tmp_path):
    # Two clusters of small machines with little memory per CPU: jobs wait for CPUs, for memory, for the head.
    rows = [(f"j{i}", s, r, p, r + extra, user, f"g{user}", memory)
            for i, (s, r, p, extra, user, memory) in enumerate(jobs)]
    clusters = [{"name": "x", "machines": 2, "cpus_per_machine": 3}, {"name": "y", "machines": 1, "cpus_per_machine": 4}]
    sim = _run(_model(tmp_path, rows, clusters, {"x": 6144, "y": 8192}, elastic), policy, backfill)
    check_reasons(sim)


def test_reasons_can_be_left_out_and_leave_the_schedule_as_it_was(tmp_path):
    rows = [(f"j{i}", i, 30 + 7 * (i % 5), 1 + i % 4, 40 + 7 * (i % 5), "abc"[i % 3], "g", 1024 * (i % 3))
            for i in range(30)]
    model = normalize_model(_model(tmp_path, rows, [{"name": "c", "machines": 3, "cpus_per_machine": 4}],
                                   {"c": 8192}))
    order = REGISTRY.create("site", "hdrf", {"backfill": "easy"})
    with_reasons = simulate(model, order, np.random.default_rng(1))
    without = simulate(model, REGISTRY.create("site", "hdrf", {"backfill": "easy"}), np.random.default_rng(1),
                       reasons=False)
    assert isinstance(with_reasons.reasons, SiteReasons) and without.reasons is None
    assert jobs_frame(with_reasons).equals(jobs_frame(without))
    assert check_reasons(_run({**model}, "hdrf", "easy")) > 0


def test_a_job_the_walk_did_not_reach_waits_for_its_place_in_the_order(tmp_path):
    # 8 CPUs, H-DRF examining one job after the head (backfill_depth 1). t=0: A (6 CPUs, to 100). t=1: H (4 CPUs)
    # lacks CPUs: the head, reserved at 100. t=2: X and Y (1 CPU, 10 s each) both fit and end by 100; the walk
    # starts X and stops before Y, which waits for its place in the order (not for the reservation it would
    # spare) until X ends at 12 and the next walk starts it.
    rows = [("A", 0, 100, 6, 100, "u", "g", 0), ("H", 1, 100, 4, 100, "u", "g", 0),
            ("X", 2, 10, 1, 10, "u", "g", 0), ("Y", 2, 10, 1, 10, "u", "g", 0)]
    model = _model(tmp_path, rows, [{"name": "c", "machines": 1, "cpus_per_machine": 8}], {"c": 8192})
    order = REGISTRY.create("site", "hdrf", {"backfill": "easy", "backfill_depth": 1})
    sim = simulate(normalize_model(model), order, np.random.default_rng(1), keep_decisions=True)
    jobs = jobs_frame(sim)
    assert dict(zip(jobs["job_id"], jobs["start_time"])) == {"A": 0, "H": 100, "X": 2, "Y": 12}
    assert [tuple(row) for row in sim.reasons.frame(jobs["job_id"]).itertuples(index=False)] == [
        ("H", 1.0, 100.0, "resources", ""),
        ("Y", 2.0, 12.0, "priority", "H"),
    ]
    check_reasons(sim)


class _ReadingEveryJob(SiteReasons):
    """The reasons read for every waiting job after every pass, every threshold computed afresh (no increments)."""

    def after_instant(self, sim, now):
        self.dirty.update(range(len(sim.clusters)))
        super().after_instant(sim, now)
        head, reservation = self._head()
        self._classify(set(self.group_of), now, head, reservation)


@pytest.mark.parametrize("policy, backfill, elastic", [
    ("hdrf", "easy", False), ("drf", "easy", True), ("wdrf", "none", False), ("fcfs", "cons", False)])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(_JOB, min_size=1, max_size=25))
def test_reading_only_what_can_have_changed_gives_the_reasons_of_reading_everything(policy, backfill, elastic, jobs,
                                                                                   tmp_path, monkeypatch):
    rows = [(f"j{i}", s, r, p, r + extra, user, f"g{user}", memory)
            for i, (s, r, p, extra, user, memory) in enumerate(jobs)]
    clusters = [{"name": "x", "machines": 2, "cpus_per_machine": 3}, {"name": "y", "machines": 1, "cpus_per_machine": 4}]
    model = _model(tmp_path, rows, clusters, {"x": 6144, "y": 8192}, elastic)
    incremental = _run(model, policy, backfill)
    with monkeypatch.context() as patch:
        patch.setattr(importlib.import_module("sched_engine.site.simulate"), "SiteReasons", _ReadingEveryJob)
        everything = _run(model, policy, backfill)
    assert isinstance(everything.reasons, _ReadingEveryJob) and type(incremental.reasons) is SiteReasons
    ids = jobs_frame(incremental)["job_id"]
    assert incremental.reasons.frame(ids).equals(everything.reasons.frame(ids))


def test_every_reason_holds_on_the_hpc2n_sample_with_its_memory():
    # The shipped HPC2N excerpt, all 3,171 jobs (a third of them record memory; 120 machines of 2 CPUs and
    # 4,096 MB): queues form behind CPUs, memory and the head of H-DRF's order under EASY.
    root = Path(__file__).resolve().parents[1] / "sample_traces"
    model = normalize_model({"trace": {"path": str(root / "hpc2n-excerpt.swf")},
                             "machines_path": str(root / "hpc2n-excerpt.machines")})
    sim = simulate(model, REGISTRY.create("site", "hdrf", {"backfill": "easy"}), np.random.default_rng(1),
                   keep_decisions=True)
    assert sum(sim.memory_per_cpu[job] > 0 for job in range(len(sim.procs))) > 1000
    assert check_reasons(sim) > 2000
