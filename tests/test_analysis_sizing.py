"""Capacity planning: the searches on known functions, non-monotone points, and one batch answer checked by hand."""

from __future__ import annotations

import pytest

from sched_engine import ScenarioError, run_scenario
from sched_engine.analysis.batch_sizing import scenario_at, size_batch
from sched_engine.analysis.sizing import Target, largest_load, parse_target, smallest_size


def test_parse_target():
    assert parse_target("mean_wait_s<=600") == Target("mean_wait_s", "<=", 600.0)
    assert parse_target(" utilisation >= 0.5 ") == Target("utilisation", ">=", 0.5)
    with pytest.raises(ScenarioError, match="METRIC<=VALUE"):
        parse_target("wait below 600")
    assert not Target("x", "<=", 1.0).holds(float("nan"))


def test_smallest_size_is_exact_when_one_cpu_is_within_the_tolerance():
    result = smallest_size(lambda cpus: 1000.0 / cpus, Target("wait", "<=", 10.0), start=30)
    assert result.answer == 100
    sizes = {p.size: p.holds for p in result.probes}
    assert sizes[100] and not sizes[99]
    assert result.non_monotone == []


def test_smallest_size_shrinks_from_an_oversized_start_and_stays_within_one_percent():
    result = smallest_size(lambda cpus: 1e6 / cpus, Target("wait", "<=", 10.0), start=400_000)
    assert 100_000 <= result.answer <= 101_000


def test_a_target_never_met_says_so():
    result = smallest_size(lambda cpus: 50.0, Target("wait", "<=", 10.0), start=8, maximum=64)
    assert result.answer is None
    assert "not met up to 64" in result.message


def test_non_monotone_points_near_the_answer_are_reported():
    def wait(cpus):   # monotone except a bump at 110 CPUs, above the answer
        return 50.0 if cpus == 110 else 1000.0 / cpus
    result = smallest_size(wait, Target("wait", "<=", 10.0), start=30)
    assert result.answer == 100
    assert [p.size for p in result.non_monotone] == [110]
    assert "not monotone" in result.message


def test_largest_load_within_one_percent():
    result = largest_load(lambda factor: 100.0 * factor, Target("wait", "<=", 250.0))
    assert 2.475 <= result.answer <= 2.5
    assert all(p.holds == (p.size <= 2.5) for p in result.probes)


def _tiny_trace(tmp_path):
    # Five jobs on an 8-CPU header machine; columns: id submit wait run procs cpu mem req_procs req_time ...
    lines = ["; MaxProcs: 8", "; MaxNodes: 8"]
    jobs = [(1, 0, 100, 4), (2, 0, 100, 4), (3, 0, 100, 4), (4, 10, 50, 2), (5, 10, 50, 2)]
    for job_id, submit, run, procs in jobs:
        lines.append(f"{job_id} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 1 1 -1 1 -1 -1 -1")
    path = tmp_path / "tiny.swf"
    path.write_text("\n".join(lines) + "\n")
    return {"engine": "batch", "policy": "fcfs", "seed": 1, "model": {"trace": {"path": str(path)}}}


def _wait(scenario, cpus):
    summary = run_scenario(scenario_at(scenario, "pool", cpus)).summary
    return float(summary.loc[summary["metric"] == "mean_wait_s", "value"].iloc[0])


def test_batch_pool_answer_holds_and_one_cpu_less_does_not(tmp_path):
    scenario = _tiny_trace(tmp_path)
    target = Target("mean_wait_s", "<=", 0.0)   # nobody waits
    result = size_batch(scenario, target, "pool")
    # All five jobs start at once only with 4+4+4+2+2 = 16 CPUs.
    assert result.answer == 16
    assert _wait(scenario, 16) == 0.0
    assert _wait(scenario, 15) > 0.0


def test_batch_pool_never_goes_below_the_widest_job(tmp_path):
    result = size_batch(_tiny_trace(tmp_path), Target("mean_wait_s", "<=", 1e9), "pool")
    assert result.answer == 4
    assert min(p.size for p in result.probes) >= 4


def test_batch_load_mode_scales_the_arrival_rate(tmp_path):
    scenario = _tiny_trace(tmp_path)
    assert scenario_at(scenario, "load", 2.5)["model"]["load_factor"] == 2.5
    result = size_batch(scenario, Target("mean_wait_s", "<=", 1e9), "load")
    assert result.answer == 100.0     # any load meets an unbounded wait


def test_unknown_metric_is_a_clear_error(tmp_path):
    with pytest.raises(ScenarioError, match="no summary metric 'mean_wiat'"):
        size_batch(_tiny_trace(tmp_path), Target("mean_wiat", "<=", 1.0), "pool")


def test_probes_run_without_reasons_and_give_the_summary_a_full_run_gives(tmp_path):
    scenario = _tiny_trace(tmp_path)
    ran = []

    def run(data):
        ran.append(run_scenario(data))
        return ran[-1]

    size_batch(scenario, Target("mean_wait_s", "<=", 0.0), "pool", run=run)
    today, *probes = ran
    assert today.extra("pending") is not None and "reasons" not in today.scenario["model"]   # the run shown
    assert probes and all(p.extra("pending") is None and p.scenario["model"]["reasons"] is False for p in probes)
    for probe in probes:   # the same numbers as the same size with its reasons
        full = run_scenario({**probe.scenario, "model": {**probe.scenario["model"], "reasons": True}})
        assert full.extra("pending") is not None and full.scenario_hash != probe.scenario_hash
        timed = full.summary["metric"].str.startswith("scheduler_cpu")   # measured, never twice the same
        assert full.summary[~timed].equals(probe.summary[~timed])


def test_reasons_is_a_yes_or_no_kept_out_of_the_hash_when_yes(tmp_path):
    from sched_engine.batch.model import normalize_model

    model = _tiny_trace(tmp_path)["model"]
    assert "reasons" not in normalize_model({**model, "reasons": True})
    assert normalize_model({**model, "reasons": False})["reasons"] is False
    with pytest.raises(ScenarioError, match="reasons"):
        normalize_model({**model, "reasons": "no"})


class _SideBySide:
    """A ``measure_many`` that records each batch of sizes measured together."""

    def __init__(self, measure):
        self.measure, self.batches = measure, []

    def __call__(self, sizes):
        self.batches.append(list(sizes))
        return [self.measure(size) for size in sizes]


def test_width_one_is_plain_bisection_probe_for_probe():
    wait = lambda cpus: 1000.0 / cpus   # noqa: E731
    alone = smallest_size(wait, Target("wait", "<=", 10.0), start=30)
    side = _SideBySide(wait)
    together = smallest_size(wait, Target("wait", "<=", 10.0), start=30, measure_many=side, width=1)
    assert together.probes == alone.probes
    # Bracketing and bisection go one size at a time; only the check around the answer measures several at once.
    assert len(side.batches) == 1 and len(side.batches[0]) > 1


@pytest.mark.parametrize("width", [2, 3, 5])
def test_probes_side_by_side_find_the_same_answer_in_fewer_steps(width):
    wait = lambda cpus: 1e6 / cpus   # noqa: E731  answer 100,000 within 1%
    alone = smallest_size(wait, Target("wait", "<=", 10.0), start=3_000)
    side = _SideBySide(wait)
    together = smallest_size(wait, Target("wait", "<=", 10.0), start=3_000, measure_many=side, width=width)
    assert 100_000 <= together.answer <= 101_000
    assert all(probe.holds == (probe.size >= 100_000) for probe in together.probes)
    assert together.non_monotone == []
    # Bisection steps hold up to ``width`` sizes; the neighbourhood check measures its sizes in one batch.
    assert max(len(batch) for batch in side.batches[:-1]) <= width
    assert len(side.batches[-1]) >= 4
    sequential_rounds = len(alone.probes)
    rounds = len(together.probes) - sum(len(batch) - 1 for batch in side.batches)
    assert rounds < sequential_rounds


def test_probes_side_by_side_keep_good_and_bad_apart_when_the_metric_is_not_monotone():
    def wait(cpus):   # meets the target at 100+ CPUs except in a dip at 150-170
        return 50.0 if 150 <= cpus <= 170 else 1000.0 / cpus
    side = _SideBySide(wait)
    result = smallest_size(wait, Target("wait", "<=", 10.0), start=30, measure_many=side, width=3)
    seen = {p.size: p.holds for p in result.probes}
    assert seen[result.answer]
    assert result.answer == 100 or (result.answer > 170)


def test_largest_load_side_by_side_within_one_percent():
    side = _SideBySide(lambda factor: 100.0 * factor)
    result = largest_load(lambda factor: 100.0 * factor, Target("wait", "<=", 250.0), measure_many=side, width=2)
    assert 2.475 <= result.answer <= 2.5
    assert all(p.holds == (p.size <= 2.5) for p in result.probes)


def test_batch_probes_on_two_processes_give_the_hand_checked_answer(tmp_path):
    scenario = _tiny_trace(tmp_path)
    result = size_batch(scenario, Target("mean_wait_s", "<=", 0.0), "pool", workers=2)
    assert result.answer == 16
    assert {16, 15} <= {p.size for p in result.probes}
    assert {p.size: p.holds for p in result.probes}[15] is False


def test_cli_size_takes_workers_and_refuses_zero(tmp_path, capsys):
    from sched_engine.__main__ import main

    trace = _tiny_trace(tmp_path)["model"]["trace"]["path"]
    out = tmp_path / "out"
    assert main(["size", "--trace", trace, "--policy", "fcfs", "--target", "mean_wait_s<=0", "--workers", "2",
                 "--out", str(out)]) == 0
    assert "smallest size meeting mean_wait_s<=0: 16" in capsys.readouterr().out
    assert main(["size", "--trace", trace, "--policy", "fcfs", "--target", "mean_wait_s<=0", "--workers", "0",
                 "--out", str(out)]) == 2
    assert "workers" in capsys.readouterr().err
