"""Alea-like EASY (``easy-alea``): hand-computed two- and three-cluster cases where it differs from textbook EASY.

Perfect estimates; every cluster equally fast, so Alea's cluster list is by
size, then as listed. Reasoning per case in the comments; the rules are in
:mod:`sched_engine.batch.policies.alea_easy`.
"""

from __future__ import annotations

import pytest

from sched_engine import ScenarioError
from sched_engine.runner import run_scenario


def _run(tmp_path, policy: str, jobs: str, clusters: list[dict], params: dict | None = None,
         requirements: bool = False) -> dict[str, tuple[float, str]]:
    trace = tmp_path / "jobs.csv"
    trace.write_text("job_id,submit_time,run_time,procs,requirement\n" + jobs)
    result = run_scenario({"engine": "batch", "policy": policy, "policy_params": params or {},
                           "model": {"trace": {"path": str(trace)}, "clusters": clusters,
                                     "requirements": requirements}})
    return {job: (row.start_time, row.cluster) for job, row in result.jobs.set_index("job_id").iterrows()}


def _cluster(name: str, cpus: int, properties=()) -> dict:
    return {"name": name, "machines": cpus, "cpus_per_machine": 1, "speed": 1.0, "properties": list(properties)}


# a and b: 4 CPUs each. j1 (4 CPUs, 0-10) fills a; j2 (3 CPUs, 0-10) leaves 1 CPU of b free.
# The head h (4 CPUs) at 1 can start at 10 on either cluster, with no CPU to spare there.
# Textbook EASY reserves the preferred cluster, a; Alea the last of the equal starts, b.
# j4 (1 CPU, 100 s) at 2 fits only b now: textbook EASY backfills it there (b is not reserved,
# h starts at 10 on a as reserved); Alea must keep b for h, so j4 waits until 10 and starts on b
# beside h, which takes a (the first of the clusters where it fits).
TIE = "j1,0,10,4,\nj2,0,10,3,\nh,1,10,4,\nj4,2,100,1,\n"
TIE_CLUSTERS = [_cluster("a", 4), _cluster("b", 4)]


def test_textbook_easy_reserves_the_preferred_cluster_of_equal_starts(tmp_path):
    assert _run(tmp_path, "easy", TIE, TIE_CLUSTERS) == {
        "j1": (0, "a"), "j2": (0, "b"), "h": (10, "a"), "j4": (2, "b")}


def test_alea_reserves_the_last_cluster_of_equal_starts(tmp_path):
    assert _run(tmp_path, "easy-alea", TIE, TIE_CLUSTERS) == {
        "j1": (0, "a"), "j2": (0, "b"), "h": (10, "a"), "j4": (10, "b")}


# a: 4 CPUs, b and c: 2 CPUs. j1 (4 CPUs, 0-10) fills a; the head h (4 CPUs) at 1 fits only a:
# reserved there at 10. j3 (1 CPU, 5 s) at 2 fits b and c, both unreserved and as fast:
# textbook EASY takes the first allowed cluster in preference order (b, the first listed of
# two equal ones); Alea the last of the equally fast ones in its list (c).
SPREAD = "j1,0,10,4,\nh,1,10,4,\nj3,2,5,1,\n"
SPREAD_CLUSTERS = [_cluster("a", 4), _cluster("b", 2), _cluster("c", 2)]


@pytest.mark.parametrize("policy, cluster", [("easy", "b"), ("easy-alea", "c")])
def test_a_backfilled_job_takes_the_last_equally_fast_cluster_under_alea(tmp_path, policy, cluster):
    assert _run(tmp_path, policy, SPREAD, SPREAD_CLUSTERS) == {
        "j1": (0, "a"), "h": (10, "a"), "j3": (2, cluster)}


# One cluster of 4 CPUs. j1 (2 CPUs, 0-10); the head h (4 CPUs) at 1 is reserved at 10, no CPU
# to spare. j3 (2 CPUs) at 2 runs 8 s, so it ends exactly at 10: textbook EASY backfills a job
# that ends by the reservation; Alea only one that ends strictly before (eft < est).
EDGE = "j1,0,10,2,\nh,1,10,4,\nj3,2,8,2,\n"


@pytest.mark.parametrize("policy, j3", [("easy", 2), ("easy-alea", 20)])
def test_alea_backfills_only_jobs_ending_strictly_before_the_reservation(tmp_path, policy, j3):
    starts = _run(tmp_path, policy, EDGE, [_cluster("a", 4)])
    assert (starts["h"][0], starts["j3"][0]) == (10, j3)


# a: 4 CPUs, any job; b: 4 CPUs with property y. j1 (4 CPUs, 0-10) fills a, j2 (2 CPUs, 0-20)
# half of b. The head h (4 CPUs, needs y) can start only on b, at 20. Alea's rule (reservation
# on any cluster with enough CPUs up) puts its reservation on a (earliest start 10), where h may
# not run, so j4 (2 CPUs, 100 s) at 2 is backfilled on b's 2 free CPUs and h waits until j4
# ends at 102. Reserving on h's own clusters only (and textbook EASY) keeps b: j4 waits for a at 10.
REQ = "j1,0,10,4,\nj2,0,20,2,\nh,1,10,4,y\nj4,2,100,2,\n"
REQ_CLUSTERS = [_cluster("a", 4), _cluster("b", 4, ["y"])]


@pytest.mark.parametrize("policy, params, h, j4", [
    ("easy-alea", {}, (102, "b"), (2, "b")),
    ("easy-alea", {"reservation_clusters": "suitable"}, (20, "b"), (10, "a")),
    ("easy", {}, (20, "b"), (10, "a")),
])
def test_a_reservation_on_a_cluster_the_head_cannot_use_leaves_it_unprotected(tmp_path, policy, params, h, j4):
    starts = _run(tmp_path, policy, REQ, REQ_CLUSTERS, params, requirements=True)
    assert (starts["h"], starts["j4"]) == (h, j4)


@pytest.mark.parametrize("policy", ["easy", "easy-alea"])
def test_the_same_schedule_where_no_rule_differs(tmp_path, policy):
    # The spec's case (a) on one cluster: job 3 would hold 2 CPUs past the reservation, job 4 ends before it.
    jobs = "1,0,10,2,\n2,1,10,4,\n3,2,20,2,\n4,3,5,2,\n"
    starts = _run(tmp_path, policy, jobs, [_cluster("a", 4)])
    assert [start for start, _ in starts.values()] == [0, 10, 20, 3]


def test_the_reservation_rule_is_a_checked_parameter(tmp_path):
    with pytest.raises(ScenarioError) as caught:
        _run(tmp_path, "easy-alea", EDGE, [_cluster("a", 4)], {"reservation_clusters": "nearest"})
    assert caught.value.field == "policy_params.reservation_clusters"
