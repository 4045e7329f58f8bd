"""Two sites side by side, by hand: a tiny workload's binned profile, the differences marked, the results table."""

from __future__ import annotations

import pandas as pd
import pytest

from components.figures import site_compare as compare

# 2010-01-01 00:00 UTC, a Friday; Prague is UTC+1 in January.
HEADER = {"UnixStartTime": 1262304000, "TimeZoneString": "Europe/Prague"}


def three_jobs() -> pd.DataFrame:
    return pd.DataFrame({"submit_time": [0.0, 3600.0, 86400.0 + 1800.0], "run_time": [30.0, 600.0, 5000.0],
                         "procs": [1, 3, 8], "requested_time": [60.0, 600.0, -1.0],
                         "user": ["u1", "u2", "u1"], "group": ["1", "1", "2"]})


def test_a_profile_bins_arrivals_in_the_logs_zone_sizes_run_times_and_accuracy():
    site = compare.profile(three_jobs(), HEADER, "A")
    assert site["zone"] == "Europe/Prague"
    # Local 01:00 Fri, 02:00 Fri, 01:30 Sat.
    assert site["hours"][1] == pytest.approx(2 / 3, abs=1e-4) and site["hours"][2] == pytest.approx(1 / 3, abs=1e-4)
    assert site["weekdays"][4] == pytest.approx(2 / 3, abs=1e-4) and site["weekdays"][5] == pytest.approx(1 / 3, abs=1e-4)
    assert site["size_labels"] == ["1", "2", "3–4", "5–8"]
    assert site["sizes"] == pytest.approx([1 / 3, 0, 1 / 3, 1 / 3], abs=1e-4)
    assert site["runtimes"][:4] == pytest.approx([1 / 3, 0, 1 / 3, 1 / 3], abs=1e-4)
    # Accuracy of the two jobs with a requested time: 0.5, and 1.0 (ran exactly its limit: 0.9–1.0, not "> 1").
    assert site["accuracy"][5] == 0.5 and site["accuracy"][9] == 0.5 and site["accuracy"][10] == 0
    numbers = site["numbers"]
    assert (numbers["jobs"], numbers["users"], numbers["groups"], numbers["groups from"]) == (3, 2, 2, "group ids")
    assert numbers["median estimate accuracy"] == 0.75
    assert numbers["jobs with a requested time"] == "67%"


def test_a_log_without_a_start_time_is_binned_from_its_first_submission():
    site = compare.profile(three_jobs(), {}, "A")
    assert site["zone"].startswith("no UnixStartTime")
    assert site["hours"][0] == pytest.approx(2 / 3, abs=1e-4) and site["weekdays"][1] == pytest.approx(1 / 3, abs=1e-4)


def test_distributions_and_numbers_differ_past_their_thresholds():
    assert compare.total_variation([0.5, 0.5], [1.0]) == 0.5
    assert compare.total_variation([0.3, 0.7], [0.3, 0.7]) == 0.0
    assert not compare.differs(100, 125) and compare.differs(100, 126)
    assert compare.differs(0, 1) and not compare.differs(0, 0) and not compare.differs(float("nan"), 1)


def test_the_results_table_names_the_better_site_but_not_for_counts_of_jobs():
    summaries = {"A": {"mean_wait_s": 100.0, "finished": 400, "killed": 0, "cancelled": 0},
                 "B": {"mean_wait_s": 10.0, "finished": 300, "killed": 5, "cancelled": 0}}
    rows = compare.result_rows([("FCFS", lambda m: summaries["A"].get(m, 0.5), lambda m: summaries["B"].get(m, 0.5))])
    by_metric = {row["metric"]: row for row in rows}
    assert by_metric["Mean wait"]["better"] == "B" and by_metric["Mean wait"]["differs"] == compare.MARK
    # Different workloads: more finished or killed jobs says how many each had, not which did better.
    for metric in ("Finished", "Killed jobs"):
        assert by_metric[metric]["better"] == "" and by_metric[metric]["differs"] == compare.MARK
    assert by_metric["Utilisation"]["better"] == "" and by_metric["Utilisation"]["differs"] == ""


def test_without_a_second_site_the_chart_is_one_line():
    figure = compare.profile_figure(None, None)
    assert not figure.data and figure.layout.height == 80
