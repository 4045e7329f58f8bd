"""Invariants of the elasticity engine on random small traces (hypothesis)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_engine.elastic import simulate_jobs
from sched_engine.elastic.policies import YARN, YARNME, Meganode
from sched_engine.elastic.simulate import ElasticSimulation
from sched_engine.elastic.traces import Job, TaskGroup

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

penalties = st.one_of(
    st.builds(lambda f: {"kind": "step", "factor": f}, st.floats(1.0, 3.0)),
    st.builds(lambda f: {"kind": "spill", "factor": f}, st.floats(1.0, 3.0)),
)
groups = st.builds(
    TaskGroup,
    count=st.integers(1, 6),
    memory_mb=st.integers(1, 40).map(lambda k: k * 100 + 50),
    duration=st.integers(1, 60).map(float),
    phase=st.integers(0, 1),
)
jobs = st.lists(
    st.builds(lambda a, g: (float(a), tuple(g)), st.integers(0, 100), st.lists(groups, min_size=1, max_size=3)),
    min_size=1, max_size=8,
).map(lambda items: [Job(f"j{i}", a, g) for i, (a, g) in enumerate(items)])
clusters = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(41, 80).map(lambda k: k * 100))


def _node_usage_ok(sim: ElasticSimulation) -> bool:
    """Replay task starts/ends per node: memory and cores within capacity at every instant."""
    events = {}
    for node, start, end, mem in zip(sim.t_node, sim.t_start, sim.t_end, sim.t_mem):
        events.setdefault(node, []).extend([(start, 1, mem, 1), (end, 0, -mem, -1)])
    for node, items in events.items():
        used = cores = 0
        for _, _, mem, core in sorted(items):  # ends (0) before starts (1) at the same time
            used += mem
            cores += core
            if used > sim.capacity[node] or cores > sim.cores[node]:
                return False
    return True


@SETTINGS
@given(jobs=jobs, cluster=clusters, pen=penalties, policy=st.sampled_from([YARN(), YARNME(), Meganode()]))
def test_nodes_are_never_over_committed_and_every_task_runs(jobs, cluster, pen, policy):
    nodes, cores, memory = cluster
    sim = simulate_jobs([cores] * nodes, [memory] * nodes, 100, pen, jobs, policy)
    assert _node_usage_ok(sim)
    assert len(sim.t_job) == sum(g.count for j in jobs for g in j.groups)
    assert all(s.end >= s.job.arrival for s in sim.jobs)
    for s in sim.jobs:  # no task starts before its job arrived; a job's second phase only after its first
        starts = [st_ for j, st_ in zip(sim.t_job, sim.t_start) if j == s.index]
        assert min(starts) >= s.job.arrival
        if len(s.phases) == 2:
            assert s.phase_request[1] == s.phase_done[0] <= s.phase_done[1] == s.end


@SETTINGS
@given(jobs=jobs, cluster=clusters, pen=penalties, min_fraction=st.sampled_from([0.1, 0.25, 0.5]))
def test_elastic_grants_are_at_least_the_minimum_and_in_steps(jobs, cluster, pen, min_fraction):
    nodes, cores, memory = cluster
    sim = simulate_jobs([cores] * nodes, [memory] * nodes, 100, pen, jobs, YARNME(min_fraction=min_fraction))
    for mem, ideal in zip(sim.t_mem, sim.t_ideal):
        assert mem % 100 == 0 and ideal % 100 == 0
        assert mem == ideal or (min_fraction * ideal - 1e-9 <= mem < ideal)


class CheckedSimulation(ElasticSimulation):
    """Re-runs the full timeline generator at every elastic grant and records its estimate."""

    def elastic_ok(self, job, group, end, node):
        granted, bound = super().elastic_ok(job, group, end, node)
        if granted:
            exact, complete = self.estimate(job, node=node)
            assert complete
            self.exact_estimates.append((end, exact, bound))
        return granted, bound


@SETTINGS
@given(jobs=jobs, cluster=clusters, pen=penalties)
def test_elastic_tasks_never_end_after_their_jobs_estimate(jobs, cluster, pen):
    nodes, cores, memory = cluster
    sim = CheckedSimulation([cores] * nodes, [memory] * nodes, 100, pen, jobs, YARNME(heartbeat_s=0.0))
    sim.exact_estimates = []
    sim.run()
    for end, exact, bound in sim.exact_estimates:
        assert end <= bound <= exact + 1e-9
    # perfect estimates: the recorded end is the task's actual end
    for end, estimate, mem, ideal in zip(sim.t_end, sim.t_estimate, sim.t_mem, sim.t_ideal):
        if mem < ideal:
            assert end <= estimate


@SETTINGS
@given(jobs=jobs, cluster=clusters)
def test_meganode_with_unbounded_resources_is_never_worse(jobs, cluster):
    """Adding resources until every task can start at once never hurts Meganode.

    (Arbitrary additions can: greedy list scheduling has Graham's anomalies,
    e.g. one more core can raise the average job runtime.) With enough
    resources each job ends at arrival + the sum of its phases' longest tasks.
    """
    nodes, cores, memory = cluster
    pen = {"kind": "step", "factor": 1.5}
    small = simulate_jobs([cores] * nodes, [memory] * nodes, 100, pen, jobs, Meganode())
    tasks = sum(g.count for j in jobs for g in j.groups)
    large = simulate_jobs([cores] * nodes + [tasks], [memory] * nodes + [tasks * 4100], 100, pen, jobs, Meganode())
    for s, b in zip(small.jobs, large.jobs):
        phases = {}
        for g in b.job.groups:
            phases[g.phase] = max(phases.get(g.phase, 0.0), g.duration)
        assert b.end == b.job.arrival + sum(phases.values())
        assert b.end <= s.end


def test_same_input_same_result():
    rng_jobs = [Job(f"j{i}", float(i), (TaskGroup(3, 2500 + 100 * i, 20.0 + i, 1),)) for i in range(6)]
    first = simulate_jobs([2, 2], [5000, 5000], 100, {"kind": "spill", "factor": 2.0}, rng_jobs, YARNME())
    second = simulate_jobs([2, 2], [5000, 5000], 100, {"kind": "spill", "factor": 2.0}, rng_jobs, YARNME())
    assert (first.t_node, first.t_start, first.t_mem) == (second.t_node, second.t_start, second.t_mem)
