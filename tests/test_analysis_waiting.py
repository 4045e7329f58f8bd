"""The share of waiting time per reason per group, on a hand case."""

from __future__ import annotations

import pandas as pd
import pytest

from sched_engine.analysis.waiting import waiting_share_by_reason


def test_shares_per_group_add_the_reason_intervals_of_its_jobs():
    # Group a: job 1 waits 30 s for resources then 10 s behind a reservation; job 2 waits 60 s for
    # resources: a has 90 s resources, 10 s reservation (100 s in all). Group b: job 3 waits 20 s under
    # its user's limit. Job 4 (group b) never waited. The pending frame names job 9, of no known job: its
    # group is empty.
    jobs = pd.DataFrame({"job_id": ["1", "2", "3", "4"], "group": ["a", "a", "b", "b"]})
    pending = pd.DataFrame({
        "job_id": ["1", "1", "2", "3", "9"],
        "from_time": [0.0, 30.0, 5.0, 7.0, 0.0],
        "to_time": [30.0, 40.0, 65.0, 27.0, 1.0],
        "reason": ["resources", "reservation", "resources", "user_limit", "priority"],
        "blocking_job": ["", "2", "", "", "1"],
    })
    table = waiting_share_by_reason(pending, jobs, "group")
    assert table.to_dict("records") == [
        {"key": "a", "reason": "reservation", "seconds": 10.0, "share": 0.1},
        {"key": "a", "reason": "resources", "seconds": 90.0, "share": 0.9},
        {"key": "b", "reason": "user_limit", "seconds": 20.0, "share": 1.0},
        {"key": "", "reason": "priority", "seconds": 1.0, "share": 1.0},
    ]


def test_no_waiting_gives_an_empty_table_and_an_unknown_column_is_refused():
    jobs = pd.DataFrame({"job_id": ["1"], "user": ["u"]})
    empty = pd.DataFrame({"job_id": [], "from_time": [], "to_time": [], "reason": [], "blocking_job": []})
    assert waiting_share_by_reason(empty, jobs, "user").empty
    assert list(waiting_share_by_reason(empty, jobs, "user").columns) == ["key", "reason", "seconds", "share"]
    with pytest.raises(KeyError, match="queue"):
        waiting_share_by_reason(empty, jobs, "queue")
