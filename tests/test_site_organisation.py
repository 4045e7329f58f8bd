"""The site's organisation tree: derived from a log, checked, jobs assigned to leaves; isolation by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sched_engine import ScenarioError
from sched_engine.site.isolation import isolation_guarantee
from sched_engine.site.organisation import assign_jobs, leaves, normalize_organisation, organisation_from_jobs


def _log(**columns):
    base = {"user": ["1", "2", "1", "3"], "procs": [4, 1, 4, 2], "run_time": [3600.0, 7200.0, 3600.0, 1800.0]}
    return pd.DataFrame({**base, **columns})


def test_groups_come_from_the_group_column_with_equal_weights():
    tree = organisation_from_jobs(_log(group=["10", "10", "10", "20"]))
    assert [g["name"] for g in tree["children"]] == ["group 10", "group 20"]
    assert [u["user"] for u in tree["children"][0]["children"]] == ["1", "2"]
    assert {leaf["weight"] for _, leaf in leaves(tree)} == {1.0}


def test_queues_stand_in_when_the_log_records_no_groups():
    tree = organisation_from_jobs(_log(group=["-1"] * 4, queue=["short", "long", "short", "long"]))
    assert [g["name"] for g in tree["children"]] == ["queue long", "queue short"]


def test_one_group_when_nothing_groups_users():
    tree = organisation_from_jobs(_log())
    assert [g["name"] for g in tree["children"]] == ["all"]


def test_cpu_hour_weights():
    tree = organisation_from_jobs(_log(group=["10", "10", "10", "20"]), weighting="cpu_hours")
    group_10 = tree["children"][0]
    # user 1: 2 jobs x 4 CPUs x 1 h = 8; user 2: 1 CPU x 2 h = 2; group 10 = 10; group 20: 2 x 0.5 = 1
    assert [u["weight"] for u in group_10["children"]] == [8.0, 2.0]
    assert [g["weight"] for g in tree["children"]] == [10.0, 1.0]


@pytest.mark.parametrize("tree, field, words", [
    ({"name": "root", "children": []}, "organisation.children", "at least one member"),
    ({"name": "root", "children": [{"name": "a", "weight": 0, "user": "1"}]}, "organisation.children[0].weight",
     "positive"),
    ({"name": "root", "children": [{"name": "a", "user": "1"}, {"name": "b", "user": "1"}]},
     "organisation.children[1].user", "already the leaf 'a'"),
    ({"name": "root", "children": [{"name": "a"}]}, "organisation.children[0]", "either children"),
])
def test_impossible_trees_name_the_field(tree, field, words):
    with pytest.raises(ScenarioError) as error:
        normalize_organisation(tree)
    assert error.value.field == field and words in error.value.message


def test_unknown_users_go_to_one_counted_leaf():
    tree = normalize_organisation({"name": "root", "children": [{"name": "a", "user": "1"}]})
    tree, codes, unassigned = assign_jobs(tree, pd.Series(["1", "9", "1", "8"]))
    assert codes.tolist() == [0, 1, 0, 1]
    assert unassigned == 2
    assert tree["children"][-1]["name"] == "other users"


def test_isolation_guarantee_by_hand():
    # Two groups, weights 3:1. t=0: both waiting, A has 0.3 of the cluster (owed 0.75), B 0.25 (owed 0.25).
    # t=10: B idle -> A owed everything; A holds 0.6 and waits -> 0.6. t=20: A has nothing waiting -> 1.
    frame = isolation_guarantee(
        times=np.array([0.0, 10.0, 20.0]),
        received=np.array([[0.3, 0.25], [0.6, 0.0], [0.6, 0.0]]),
        running=np.array([[True, True], [True, False], [True, False]]),
        waiting=np.array([[True, True], [True, False], [False, False]]),
        weights=np.array([3.0, 1.0]), groups=["A", "B"])
    value = frame.set_index(["entity", "time"])["value"]
    assert value[("A", 0.0)] == pytest.approx(0.4)
    assert value[("B", 0.0)] == 1.0
    assert value[("minimum", 0.0)] == pytest.approx(0.4)
    assert value[("minimum", 10.0)] == pytest.approx(0.6)
    assert value[("minimum", 20.0)] == 1.0
    assert frame["value"].between(0, 1).all()
