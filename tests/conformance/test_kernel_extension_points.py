"""Every choice at each of the batch kernel's extension points keeps its protocol (:mod:`sched_engine.batch.protocols`).

Cluster models (CPUs on one-CPU machines, CPUs on larger machines, CPUs and
memory per machine): random allocations, releases, failures and restarts
keep ``0 <= free <= up <= total``, a failure names exactly the jobs on its
machine, and giving everything back restores every CPU. Policies (every
batch policy in the registry; the site policy under every queue order and
backfilling, with memory and memory-elastic starts): on the kernel with
failures, every job ends once, no cluster is ever over-committed, the job
observers hear each job's events in the protocol's order, and the same
inputs give the same schedule.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.batch.cluster import ClusterState
from sched_engine.batch.protocols import BatchPolicy, ClusterModel, JobObserver
from sched_engine.batch.simulate import BatchSimulation
from sched_engine.core.observers import INSTANT
from sched_engine.registry import REGISTRY
from sched_engine.site import _share_tree
from sched_engine.site.machines import SiteCluster
from sched_engine.site.order import BACKFILLING, ORDERS
from sched_engine.site.simulate import site_simulation

CLUSTER_MODELS = {
    "one-CPU machines": lambda: ClusterState(0, "c", [1] * 6, 1.0),
    "machines of several CPUs": lambda: ClusterState(0, "c", [4, 2, 4], 1.0),
    "CPUs and memory": lambda: SiteCluster(0, "c", [4, 2, 4], [4000.0, 1000.0, 8000.0]),
}


def machines_held(cluster, held) -> set[int]:
    return set(cluster.machines(held)) if isinstance(cluster, ClusterState) else set(held)


def fits(cluster, procs: int, memory: float) -> bool:
    return cluster.fits(procs, memory) if isinstance(cluster, SiteCluster) else procs <= cluster.free_total


def allocate(cluster, job: int, procs: int, memory: float):
    if isinstance(cluster, SiteCluster):
        return cluster.allocate(job, procs, float(job), memory)
    return cluster.allocate(job, procs, float(job))


@pytest.mark.parametrize("model", CLUSTER_MODELS, ids=list(CLUSTER_MODELS))
@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["allocate", "release", "fail", "restart"]), st.integers(0, 9),
                                st.sampled_from([0.0, 500.0, 1500.0])), max_size=40))
def test_cluster_model_keeps_its_invariants(model, steps):
    cluster = CLUSTER_MODELS[model]()
    assert isinstance(cluster, ClusterModel)
    held: dict[int, object] = {}
    down: list[int] = []
    machines = len(cluster.up)
    for number, (action, value, memory) in enumerate(steps):
        if action == "allocate":
            procs = 1 + value % 4
            if fits(cluster, procs, memory):
                held[number] = allocate(cluster, number, procs, memory)
        elif action == "release" and held:
            job = sorted(held)[value % len(held)]
            cluster.release(job, float(job), held.pop(job))
        elif action == "fail":
            machine = value % machines
            on_it = {job for job, h in held.items() if machine in machines_held(cluster, h)}
            assert cluster.fail(machine) == on_it
            for job in on_it:   # the kernel kills them
                cluster.release(job, float(job), held.pop(job))
            down.append(machine)
        elif action == "restart" and down:
            cluster.restart(down.pop(value % len(down)))
        assert 0 <= cluster.free_total <= cluster.up_total <= cluster.total
    for job in sorted(held):
        cluster.release(job, float(job), held.pop(job))
    while down:
        cluster.restart(down.pop())
    assert cluster.free_total == cluster.up_total == cluster.total


class Recorder:
    """A job observer that keeps each job's events, and the instants' over-commitment checks."""

    def __init__(self):
        self.events: dict[int, list[str]] = {}

    def _add(self, job: int, event: str) -> None:
        self.events.setdefault(job, []).append(event)

    def queued(self, job):
        self._add(job, "queued")

    def left_queue(self, job):
        self._add(job, "left_queue")

    def started(self, job):
        self._add(job, "started")

    def finished(self, job):
        self._add(job, "finished")

    def advance(self, time):
        pass


EVENT_SEQUENCES = ([], ["queued", "left_queue"], ["queued", "left_queue", "started", "finished"])
JOBS = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 30), st.integers(1, 6), st.integers(0, 15),
                          st.integers(0, 3), st.sampled_from([0.0, 700.0, 2500.0])), min_size=1, max_size=20)
FAILURES = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 2), st.integers(1, 20)), max_size=3)
BATCH_POLICIES = [entry for entry in REGISTRY.policies("batch")]
SITE_POLICIES = [(order, backfill, elastic) for order in ORDERS for backfill in BACKFILLING
                 for elastic in ((False, True) if backfill != "cons" else (False,))]


def _kernel_run(jobs, failures, make_run):
    jobs = sorted(jobs)
    recorder = Recorder()
    failures = sorted((float(t), 0, m, float(d)) for t, m, d in failures)
    sim = make_run(jobs, failures, recorder)
    over = []
    sim.subscribe(INSTANT, lambda s, time: over.extend(c.index for c in s.clusters if c.free_total < 0))
    sim.run()
    assert not over
    assert all(status >= 2 for status in sim.status)   # finished, killed or cancelled: once each
    for job, status in enumerate(sim.status):
        events = recorder.events.get(job, [])
        assert events in EVENT_SEQUENCES
        assert (events[-1:] == ["finished"]) == (status != 4 and sim.actual_run[job] > 0)
    return sim


@pytest.mark.parametrize("entry", BATCH_POLICIES, ids=[entry.name for entry in BATCH_POLICIES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=JOBS, failures=FAILURES)
def test_every_batch_policy_on_the_kernel(entry, jobs, failures):
    def make_run(jobs, failures, recorder):
        policy = REGISTRY.create("batch", entry.name)
        assert isinstance(policy, BatchPolicy) and isinstance(recorder, JobObserver)
        return BatchSimulation(
            submit=[j[0] for j in jobs], run_time=[j[1] for j in jobs], estimate=[j[1] + j[3] for j in jobs],
            procs=[j[2] for j in jobs], suitable=[None] * len(jobs), clusters=[ClusterState(0, "c", [2, 2, 4], 1.0)],
            failures=failures, policy=policy, rng=np.random.default_rng(1), observers=(recorder,))

    first = _kernel_run(jobs, failures, make_run)
    again = _kernel_run(jobs, failures, make_run)
    np.testing.assert_array_equal(np.asarray(first.start_time), np.asarray(again.start_time))
    assert first.status == again.status


@pytest.mark.parametrize("order, backfill, elastic", SITE_POLICIES,
                         ids=[f"{o.name}-{b}{'-elastic' if e else ''}" for o, b, e in SITE_POLICIES])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=JOBS, failures=FAILURES)
def test_every_site_policy_on_the_kernel(order, backfill, elastic, jobs, failures):
    organisation = {"name": "root", "children": [
        {"name": f"g{g}", "weight": float(g + 1), "children": [
            {"name": f"u{u}", "weight": 1.0, "user": str(u)} for u in range(4) if u % 2 == g]} for g in range(2)]}
    tree, group_of_leaf, _, _, _ = _share_tree(organisation)

    def make_run(jobs, failures, recorder):
        sim = site_simulation(
            submit=[j[0] for j in jobs], run_time=[j[1] for j in jobs], estimate=[j[1] + j[3] for j in jobs],
            procs=[j[2] for j in jobs], memory_per_cpu=[j[5] for j in jobs], leaf=[j[4] for j in jobs],
            group_of_leaf=group_of_leaf, tree=tree, clusters=[SiteCluster(0, "c", [2, 2, 4], [3000.0, 6000.0, 8000.0])],
            suitable=[None] * len(jobs), failures=failures, order=order(backfill=backfill, backfill_depth=0),
            elastic={"enabled": elastic, "min_fraction": 0.5, "penalty": {"kind": "spill", "factor": 2.0}})
        assert isinstance(sim.policy, BatchPolicy) and isinstance(sim.policy, JobObserver)
        assert isinstance(sim.usage, JobObserver)
        sim.observers += (recorder,)
        return sim

    first = _kernel_run(jobs, failures, make_run)
    again = _kernel_run(jobs, failures, make_run)
    np.testing.assert_array_equal(np.asarray(first.start_time), np.asarray(again.start_time))
    assert first.status == again.status and first.memory_fraction == again.memory_fraction
