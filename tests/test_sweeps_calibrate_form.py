"""The Sweeps page's calibrate form starts from the log, as the command line does: its per-user limits and
capacities are read from the log's findings (sched_engine.analysis.calibration_grid), and its point count says
which were found."""

from __future__ import annotations

import argparse

import pytest

from components.pages import sweeps as page
from sched_engine import ScenarioError, sweeps
from sched_engine.analysis.commands import add_calibrate_arguments, calibrate_spec
from sched_engine.sweeps.calibrate import FROM_LOG
from tests.support.sweeps_form import calibrate_form
from tests.test_calibration_grid import LOG


def test_the_page_sweeps_the_same_grid_as_the_command_line():
    asked = page.form.spec_from_form("calibrate", *calibrate_form())
    assert (asked["running_jobs_limits"], asked["capacities"], asked["machines"]) == (FROM_LOG, FROM_LOG, None)
    parser = argparse.ArgumentParser()
    add_calibrate_arguments(parser)
    cli = calibrate_spec(parser.parse_args(["--trace", "hpc2n-excerpt.swf", "--max-jobs", "1000", "--allocation",
                                            "cpus", "--out", "unused"]))
    normal = sweeps.normalize_spec(asked)
    assert normal == sweeps.normalize_spec(cli) and sweeps.spec_hash(asked) == sweeps.spec_hash(cli)
    # HPC2N's first 1,000 jobs: no limit and 7 pairs around the busiest user's 8 running jobs and 144 CPUs.
    assert normal["running_jobs_limits"] == [0, 2, 3, 4, 6, 8, 12, 16]
    assert normal["cpu_limits"] == [0, 120, 120, 120, 120, 144, 204, 288] and normal["capacities"] == ["hardware"]
    text, fine = page.form.preview("calibrate", *calibrate_form())
    assert fine and text == (
        "32 points: 2 estimate(s) × 1 allocation(s) × 2 priority setting(s) × 8 per-user limit(s) × 1 capacity, "
        "EASY, first 1,000 jobs. Limits from the log (running jobs/CPUs per user): none, 2/120, 3/120, 4/120, "
        "6/120, 8/144, 12/204, 16/288. Capacity from the log: the hardware (the log used no more).")


def test_explicit_limits_and_the_hardware_only_are_taken_as_given():
    text, fine = page.form.preview("calibrate", *calibrate_form(running_jobs_limits="0, 4", capacities="hardware"))
    assert fine and text.startswith("8 points: 2 estimate(s) × 1 allocation(s) × 2 priority setting(s) × 2 per-user "
                                    "limit(s) × 1 capacity")
    assert text.endswith("Limits (running jobs per user): none, 4. Capacity: the hardware.")
    for words in ("", "  From the LOG ", "from_log"):
        asked = page.form.spec_from_form("calibrate", *calibrate_form(running_jobs_limits=words))
        assert asked["running_jobs_limits"] == FROM_LOG
    assert page.form.preview("calibrate", *calibrate_form(running_jobs_limits="0, many")) == (
        "Per-user limits: 'many' is not a number", False)


def test_the_cerit_sc_sample_runs_on_its_own_two_clusters():
    # The slice has no MaxProcs line: "the log's own" clusters are the sample's .machines (2,176 CPUs).
    asked = page.form.spec_from_form("calibrate", *calibrate_form(trace="cerit-sc-2013-slice.swf"))
    assert asked["machines"] == "cerit-sc-2013.machines"
    text, fine = page.form.preview("calibrate", *calibrate_form(trace="cerit-sc-2013-slice.swf", jobs=300))
    assert fine and "first 300 jobs. Limits from the log" in text
    chosen = page.form.spec_from_form("calibrate", *calibrate_form(machines="metacentrum-2009.machines"))
    assert chosen["machines"] == "metacentrum-2009.machines"
    with pytest.raises(ScenarioError, match="not one of the choices"):
        page.form.spec_from_form("calibrate", *calibrate_form(machines="/etc/passwd"))


def test_the_point_count_names_the_capacities_the_log_used(tmp_path):
    # The log of test_calibration_grid on 2 CPUs: it used 4 at its peak, 3 at its p99.9 -> three capacities.
    trace, machines = tmp_path / "log.csv", tmp_path / "two.machines"
    trace.write_text(LOG)
    machines.write_text("0\tc\t2\t1\t1\t1048576\n")
    spec = sweeps.normalize_spec({"kind": "calibrate", "trace": str(trace), "machines": str(machines), "jobs": 10,
                                  "estimates": ["perfect"], "allocation": ["cpus"], "priorities": [False]})
    count = sweeps.point_count(spec)
    text = page.form.calibrate_plan(spec, count, frozenset({"running_jobs_limits", "capacities"}))
    assert count == 21 and text.startswith("21 points: 1 estimate(s) × 1 allocation(s) × 1 priority setting(s) × "
                                           "7 per-user limit(s) × 3 capacities")
    assert text.endswith("Capacities from the log: the hardware, the capacity the log used (its p99.9 of CPUs), "
                         "the log's peak of CPUs.")
