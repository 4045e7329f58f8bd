"""The explained baseline: the gap between a run and its log, step by step (sched_engine.analysis.baseline_steps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sched_engine.__main__ import main
from sched_engine.analysis.baseline import compare_with_log
from sched_engine.analysis.baseline_steps import STEPS, explain, find_settings, goal, sentence
from sched_engine.core.errors import ScenarioError
from sched_engine.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "sample_traces" / "hpc2n-excerpt.swf")
TWO_CPUS = [{"name": "c", "machines": 2, "cpus_per_machine": 1, "speed": 1.0, "properties": []}]

# a and b (2 CPUs each) ran together from 0 and 10: the log used 4 CPUs on a 2-CPU header. c (1 CPU, user u
# like a) started at 100, as a ended. EASY on 2 CPUs: a at 0, b at 100 (head), c at 200 (no room before):
# mean wait 100 against the log's (0 + 10 + 100) / 3. On the log's 4 CPUs: a and b at 0, c at 100 (33.3).
# Queue q2 (b, recorded mean 10) ranks before q1 (a and c, 50): b, then a start at 0, c at 100 still. Each
# user had one job running at once (a ends at 100 as c starts): u's own limit of 1 job (and 2 CPUs) holds c
# until 100 anyway. Down time: the CPUs above the hardware the log was not using, 2 over [0, 10) and 1 over
# [100, 110), held back: b (first) starts at 0, a at 10 (the 2 held CPUs free), c (u's one job) at a's end,
# 110: waits 10, 0, 110, mean 40. c's requested time (1,000 s) changes nothing.
LOG = ("job_id,submit_time,recorded_wait,run_time,procs,user,queue,requested_time\n"
       "a,0,0,100,2,u,q1,100\nb,0,10,100,2,v,q2,100\nc,0,100,10,1,u,q1,1000\n")


def _scenario(trace: str, **model) -> dict:
    return {"engine": "batch", "policy": "easy", "model": {"trace": {"path": trace}, **model}}


def test_each_step_is_a_run_and_a_number_on_a_hand_computed_log(tmp_path):
    trace = tmp_path / "log.csv"
    trace.write_text(LOG)
    steps = explain(_scenario(str(trace), clusters=TWO_CPUS))
    table = steps.table.set_index("step")
    assert list(table.index) == list(STEPS)
    recorded = 110 / 3
    assert table["recorded_mean_wait_s"].tolist() == pytest.approx([recorded] * 6)
    assert table["simulated_mean_wait_s"].tolist() == pytest.approx([100] + [100 / 3] * 3 + [40, 40])
    assert table["change_s"].iloc[1:].tolist() == pytest.approx([-200 / 3, 0, 0, 20 / 3, 0])
    assert table.loc["hardware", "gap_share"] == pytest.approx(100 / recorded - 1)
    assert table["cpus"].tolist() == [2, 4, 4, 4, 4, 4]
    assert table.loc["capacity", "setting"] == "1 cluster of 4 CPUs (the recorded peak of CPUs in use)"
    assert table.loc["queues", "setting"].startswith("queues in order q2 > q1")
    assert table.loc["user_limits", "setting"].startswith("each of 2 users at most the running jobs and CPUs")
    assert steps.findings.users == {"u": {"running_jobs": 1, "cpus": 2}, "v": {"running_jobs": 1, "cpus": 2}}
    assert table["ran"].all()
    assert table.loc["downtime", "setting"].startswith("the CPUs above the hardware the log was not using")
    # Spearman of simulated (10, 0, 110) and recorded (0, 10, 100) waits: ranks (2, 1, 3) vs (1, 2, 3): 1 - 6 * 2 / 24.
    assert table.loc["estimates", "wait_rank_correlation"] == pytest.approx(0.5)
    assert table.loc["capacity", "wait_rank_correlation"] == pytest.approx(1.5 / 3 ** 0.5)
    assert goal(steps.table)[0]                                   # +9%: within ±25%
    text = sentence(steps.table)
    assert "the step that moved it most is on the capacity the log used (-67 s" in text
    assert "+9% is left unexplained (within ±25%)" in text and "0.50 alike" in text


def test_the_steps_on_a_sample_log_are_runs_compared_with_the_log():
    scenario = {"engine": "batch", "policy": "easy", "model": {"trace": {"path": SAMPLE, "max_jobs": 300}}}
    first = run_scenario(scenario)
    steps = explain(scenario, first=first)
    table = steps.table
    assert steps.results[0] is first                     # the run already made is not made again
    expected = dict(zip(*compare_with_log(first.jobs, first.jobs).summary[["metric", "value"]].T.to_numpy()))
    assert table["simulated_mean_wait_s"].iloc[0] == pytest.approx(expected["simulated_mean_wait_s"])
    assert table["wait_rank_correlation"].iloc[0] == pytest.approx(expected["wait_rank_correlation"])
    # The excerpt fits its 240 CPUs and names no queue: those steps repeat the run before them.
    assert table.set_index("step").loc["capacity", "setting"].startswith("the log fits the hardware (240 CPUs)")
    assert not table.set_index("step").loc["queues", "ran"]
    assert table["simulated_mean_wait_s"].iloc[2] == table["simulated_mean_wait_s"].iloc[1]
    # The changes add up to the move from the first step to the last.
    assert np.nansum(table["change_s"]) == pytest.approx(table["simulated_mean_wait_s"].iloc[-1]
                                                         - table["simulated_mean_wait_s"].iloc[0])
    assert steps.results[-1].scenario["model"]["estimates"] == "trace"
    assert steps.results[-1].scenario["model"]["user_limits"] == {"users": steps.findings.users}
    assert max(limit["running_jobs"] for limit in steps.findings.users.values()) == steps.findings.running_jobs


def test_the_settings_come_from_the_log_and_its_header():
    jobs = pd.DataFrame({
        "job_id": ["1", "2", "3", "4", "5"], "submit_time": [0.0, 0, 0, 5, 5], "recorded_wait": [50.0, 5, 0, 0, np.nan],
        "run_time": [10.0, 10, 10, 10, 10], "procs": [1, 1, 1, 1, 1], "user": ["x", "x", "y", "x", "y"],
        "queue": ["1", "2", "3", "4", "1"], "requested_time": [-1.0, -1, -1, -1, -1]})
    header = ["; Queue: 3 best-effort jobs, preemptible", "; Queue: 4 interactive sessions"]
    found = find_settings(jobs, header)
    # Interactive 4 first, then 2 (mean 5) before 1 (mean 50; job 5's unknown wait left out); 3 best-effort.
    assert found.queues == {"priority": ["4", "2", "1"], "best_effort": ["3"]}
    # x ran 1 over [50, 60), 2 over [5, 15) and 4 over [5, 15): two at once; y never more than one.
    assert (found.running_jobs, found.running_jobs_user) == (2, "x")
    assert found.users == {"x": {"running_jobs": 2, "cpus": 2}, "y": {"running_jobs": 1, "cpus": 1}}
    assert not found.has_estimates
    one = find_settings(jobs.assign(queue="1"), [])
    assert one.queues is None and one.queues_text == "the log names one queue: nothing to order"


def test_a_log_without_recorded_waits_gets_a_sentence_not_a_crash(tmp_path):
    trace = tmp_path / "log.csv"
    trace.write_text("job_id,submit_time,run_time,procs,user\na,0,10,1,u\nb,1,10,2,v\n")
    steps = explain(_scenario(str(trace), clusters=TWO_CPUS))
    assert (steps.table["compared_jobs"] == 0).all()
    assert sentence(steps.table) == "the log records no wait times: there is no gap to explain"
    assert steps.table.set_index("step").loc["user_limits", "ran"] == False  # noqa: E712 (a numpy bool)
    with pytest.raises(ScenarioError) as caught:
        explain(_scenario(str(trace), clusters=TWO_CPUS), capacity="huge")
    assert caught.value.field == "capacity"


def test_the_baseline_command_writes_the_steps(tmp_path, capsys):
    trace = tmp_path / "log.csv"
    trace.write_text(LOG)
    machines = tmp_path / "two.machines"
    machines.write_text("0\tc\t2\t1\t1\t1048576\n")
    out = tmp_path / "out"
    assert main(["baseline", "--trace", str(trace), "--machines", str(machines), "--policy", "easy",
                 "--out", str(out)]) == 0
    steps = pd.read_csv(out / "steps.csv")
    assert steps["step"].tolist() == list(STEPS)
    assert steps["simulated_mean_wait_s"].tolist() == pytest.approx([100] + [100 / 3] * 3 + [40, 40])
    assert "the step that moved it most is on the capacity the log used" in capsys.readouterr().out
    assert main(["baseline", "--trace", str(trace), "--machines", str(machines), "--policy", "easy", "--no-steps",
                 "--out", str(tmp_path / "plain")]) == 0
    assert not (tmp_path / "plain" / "steps.csv").exists()


def test_what_is_left_is_placed_in_the_size_class_holding_most_of_it():
    from sched_engine.analysis.baseline_steps import gap_most_in

    # 1-CPU jobs: 2 jobs 100 s late each (+200 in all); 2-4 CPUs: 1 job 50 s early. The gap is (200 - 50) / 3 = 50 s
    # per job, 150 in all: the 1-CPU class holds 200 / 150 = 133% of it (the other class gives some back).
    by_size = pd.DataFrame({"size_class": ["1 CPU", "2-4 CPUs"], "jobs": [2, 1], "recorded_mean_wait_s": [50.0, 100],
                            "simulated_mean_wait_s": [150.0, 50], "mean_error_s": [100.0, -50]})
    assert gap_most_in(by_size, 50.0) == ("jobs of 1 CPU (133% of the gap: 2 jobs waiting 150 s against 50 s "
                                          "recorded)")
    assert gap_most_in(by_size, 0.0) == "" and gap_most_in(by_size.iloc[:0], 10.0) == ""
