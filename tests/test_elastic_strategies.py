"""The elasticity policies are compositions of strategies (:mod:`sched_engine.elastic.policies`), not switches."""

from __future__ import annotations

import math

import pytest

from sched_engine.elastic.policies import (
    FAIR_SHARE,
    REGULAR,
    SHORTEST_REMAINING,
    SKIP,
    WAIT,
    ElasticAllocation,
    HeadBlocked,
    JobOrder,
    Meganode,
    NodeReservations,
    as_given,
    pooled,
)
from sched_engine.registry import REGISTRY

POLICIES = [REGISTRY.create("elastic", entry.name) for entry in REGISTRY.policies("elastic")] + [Meganode("wait")]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_every_policy_is_four_strategies(policy):
    assert isinstance(policy.order, JobOrder)
    assert callable(policy.allocation.grant) and policy.allocation.task_limit() >= 0
    assert isinstance(policy.when_blocked, HeadBlocked)
    assert policy.nodes in (as_given, pooled)
    for switch in ("reserve", "reserve_backfill", "skip_blocked", "elastic", "pooled", "job_key"):
        assert not hasattr(policy, switch), switch


def test_the_papers_three_schedulers_as_composed():
    yarn, yarn_me, meganode = (REGISTRY.create("elastic", name) for name in ("yarn", "yarn-me", "meganode"))
    assert (yarn.order, yarn.allocation, yarn.when_blocked, yarn.nodes) == (
        FAIR_SHARE, REGULAR, NodeReservations(backfill_gaps=False), as_given)
    assert yarn_me.allocation == ElasticAllocation(0.1, 1.0, None, None, 30.0)
    assert yarn_me.when_blocked == NodeReservations(backfill_gaps=True) and yarn_me.when_blocked.offers_reserved_gaps
    assert (meganode.order, meganode.when_blocked, meganode.nodes) == (SHORTEST_REMAINING, SKIP, pooled)
    assert Meganode("wait").when_blocked is WAIT
    assert REGULAR.grant(None, 10_000, 100) is None and REGULAR.task_limit() == 0
    assert pooled([4, 8], [1000, 3000]) == ([12], [4000])


def test_disk_limit_is_the_floor_of_bandwidth_over_spill_capped_by_the_count():
    assert ElasticAllocation(0.1, 1.0, None, None, 30.0).task_limit() == math.inf
    assert ElasticAllocation(0.1, 1.0, None, 120.0, 30.0).task_limit() == 4
    assert ElasticAllocation(0.1, 1.0, 3, 120.0, 30.0).task_limit() == 3
