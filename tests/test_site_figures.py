"""Site study figures and the stakeholder summary, from real runs of the site engine."""

from __future__ import annotations

import numpy as np
import pandas as pd

from components.figures import site as figures
from components.figures import site_groups
from sched_engine import run_scenario


def _runs(tmp_path):
    # 8 CPUs; group A's user a holds 4 CPUs for 100 s and submits three more 4-CPU jobs, group B's user b one.
    path = tmp_path / "two.csv"
    path.write_text("job_id,submit_time,run_time,procs,user,group\n"
                    "1,0,100,4,a,A\n2,0,10,4,a,A\n3,1,10,4,a,A\n4,2,10,4,b,B\n")
    runs = []
    for policy in ("fcfs", "drf"):
        result = run_scenario({"engine": "site", "policy": policy, "model": {
            "trace": {"path": str(path)}, "clusters": [{"name": "c", "machines": 8, "cpus_per_machine": 1}]}})
        runs.append((policy.upper(), result.jobs, result.timeline))
    return runs


def test_stakeholder_lines_give_cpu_time_share_entitlement_and_median_wait(tmp_path):
    runs = _runs(tmp_path)
    lines, verdict = figures.stakeholder_summary(runs, {"group A": 0.5, "group B": 0.5})
    # CPU time: A holds 4 x (100 + 10 + 10) = 480, B 4 x 10 = 40 CPU-seconds of 520.
    assert "FCFS — group A: 92% of CPU time for 50% entitlement, median wait 0 s (mean 3 s)" in lines
    # Under FCFS group B waits 18 s (submitted at 2, started at 20); under DRF 8 s.
    assert "FCFS — group B: 8% of CPU time for 50% entitlement, median wait 18 s (mean 18 s)" in lines
    assert "DRF — group B: 8% of CPU time for 50% entitlement, median wait 8 s (mean 8 s)" in lines
    # The difference first: both keep the jobs' mean wait at 27 / 4 s. Group B waits behind jobs that hold every
    # CPU under both (no preemption): neither gets it its share all along, but DRF gets it closer, and the verdict
    # names it.
    assert verdict.startswith("The policies barely differ in mean wait (7 s under FCFS). Every policy run held some "
                              "group below its share while it had jobs waiting. Closest: DRF, whose worst-off "
                              "group (group B) got ")
    isolation = {label: figures.group_isolation(timeline)["group B"] for label, _, timeline in runs}
    assert isolation["FCFS"] < isolation["DRF"] < 1


def test_the_verdict_names_the_policy_whose_groups_all_get_their_share():
    timeline = pd.DataFrame({"time": [0.0, 0.0, 10.0], "entity": ["x", "y", "y"],
                             "metric": ["isolation_guarantee"] * 3, "value": [1.0, 0.5, 1.0]})
    fair = pd.DataFrame({"time": [0.0, 0.0], "entity": ["x", "y"], "metric": ["isolation_guarantee"] * 2,
                         "value": [1.0, 1.0]})
    jobs = pd.DataFrame({"group": ["x"], "status": ["finished"], "procs": [1], "start_time": [0.0],
                         "end_time": [5.0], "wait_time": [0.0]})
    assert figures.group_isolation(timeline).round(3).to_dict() == {"x": 1.0, "y": 0.5}
    _, verdict = figures.stakeholder_summary([("A", jobs, timeline), ("B", jobs, fair)], {"x": 0.5, "y": 0.5})
    assert verdict == ("The policies barely differ in mean wait (0 s under A). Under B no group was held below its "
                       "share while it had jobs waiting.")


def test_the_verdict_leads_with_the_difference_in_mean_wait():
    def run(label, waits):
        jobs = pd.DataFrame({"group": ["x"] * len(waits), "status": ["finished"] * len(waits), "procs": 1,
                             "start_time": 0.0, "end_time": 5.0, "wait_time": waits})
        timeline = pd.DataFrame({"time": [0.0], "entity": ["x"], "metric": ["isolation_guarantee"], "value": [1.0]})
        return label, jobs, timeline

    _, verdict = figures.stakeholder_summary([run("FCFS", [235.0]), run("H-DRF", [82.0]), run("DRF", [90.0])],
                                             {"x": 1.0})
    assert verdict == ("H-DRF cuts the mean wait from 235 s (FCFS) to 82 s. Under FCFS, H-DRF and DRF no group was "
                       "held below its share while it had jobs waiting.")
    _, verdict = figures.stakeholder_summary([run("EASY", [60.0]), run("FCFS", [1200.0])], {"x": 1.0})
    assert verdict.startswith("EASY keeps the lowest mean wait: 60 s against 20.0 min under FCFS.")


def test_a_clicked_group_is_drawn_bold_in_every_group_chart(tmp_path):
    runs = _runs(tmp_path)
    for figure in (figures.group_metric_figure(runs, "dominant_share", "Dominant share", "share", "group B",
                                               entitled=True),
                   figures.isolation_figure(runs, "group B")):
        # (a group's line the same under both runs is one line, named by both: keyed here by its first run)
        widths = {trace.name.split(" = ")[0]: trace.line.width for trace in figure.data
                  if trace.name.startswith("group")}
        assert widths["group B · FCFS"] == 3.0 and widths["group A · FCFS"] == 1.0
        assert any(name.endswith("entitled") for name in widths) or figure.layout.title.text.startswith("Isolation")
    # Both runs use the machines alike here: one line per resource, named by both runs.
    assert [trace.name for trace in figures.utilisation_figure(runs).data] == ["cpu · FCFS = DRF", "memory · FCFS = DRF"]
    assert figures.group_metric_figure([], "wait_s", "Wait", "s").layout.annotations
    # No failures: no group has a killed job, and the chart says so rather than drawing empty axes.
    killed = figures.group_metric_figure(runs, "killed_jobs", "Killed", "jobs", none="No job was killed")
    assert not killed.data and killed.layout.annotations[0].text == "No job was killed"
    assert killed.layout.height <= 100   # one line, not a chart-sized empty frame



def test_every_time_chart_spans_the_runs_whole_time_unless_a_window_is_chosen():
    # Group y's isolation series ends at 10 s, the run's timeline at 500 s: every chart shows 0 to 500 s.
    timeline = pd.DataFrame({"time": [0.0, 0.0, 10.0, 0.0, 500.0, 0.0, 500.0],
                             "entity": ["x", "y", "y", "cpu", "cpu", "memory", "memory"],
                             "metric": ["isolation_guarantee"] * 3 + ["utilisation"] * 4,
                             "value": [1.0, 0.5, 1.0, 0.2, 0.0, 0.1, 0.0]})
    jobs = pd.DataFrame({"group": ["x", "y"]})
    runs = [("FCFS", jobs, timeline)]
    whole = [0.0, 500.0 / 3600.0]
    for figure in (figures.isolation_figure(runs), figures.utilisation_figure(runs),
                   figures.group_metric_figure(runs, "isolation_guarantee", "Isolation", "share")):
        assert list(figure.layout.xaxis.range) == whole
    assert list(figures.utilisation_figure(runs, window=(3600.0, 7200.0)).layout.xaxis.range) == [1.0, 2.0]

def _many_groups(groups: int = 300, samples: int = 300, seed: int = 3):
    """Two synthetic runs of a site with ``groups`` groups: jobs and a timeline shaped as the engine's."""
    rng = np.random.default_rng(seed)
    names = [f"group {g}" for g in range(groups)]
    times = np.arange(samples, dtype=float) * 600.0
    runs = []
    for label in ("FCFS", "H-DRF"):
        count = 20 * groups
        start = rng.uniform(0, times[-1], count)
        weights = np.arange(groups, 0, -1) / (groups * (groups + 1) / 2)   # group 0 the busiest
        jobs = pd.DataFrame({"group": np.concatenate([names, rng.choice(names, count - groups, p=weights)]),
                             "status": "finished", "procs": rng.integers(1, 64, count), "start_time": start,
                             "end_time": start + rng.uniform(60, 6000, count), "wait_time": rng.uniform(0, 900, count)})
        parts = []
        for metric in ("dominant_share", "entitled_share", "isolation_guarantee", "wait_s", "killed_jobs"):
            values = rng.uniform(0, 1, (groups, samples))
            parts.append(pd.DataFrame({"time": np.tile(times, groups), "entity": np.repeat(names, samples),
                                       "metric": metric, "value": values.ravel()}))
        parts.append(pd.DataFrame({"time": times, "entity": "minimum", "metric": "isolation_guarantee",
                                   "value": rng.uniform(0, 1, samples)}))
        for resource in ("cpu", "memory"):
            parts.append(pd.DataFrame({"time": times, "entity": resource, "metric": "utilisation",
                                       "value": rng.uniform(0, 1, samples)}))
        runs.append((label, jobs, pd.concat(parts, ignore_index=True)))
    return runs


def test_figures_and_summary_stay_bounded_with_300_groups():
    runs = _many_groups()
    capped, note = site_groups.capped(runs)
    assert note == "the 8 groups holding the most CPU time of 300; the other 292 as one"
    figures_ = [figures.group_metric_figure(capped, "dominant_share", "Shares", "share", "group 0", entitled=True,
                                            note=note),
                figures.isolation_figure(capped, "group 0", note=note), figures.utilisation_figure(capped),
                figures.group_metric_figure(capped, "wait_s", "Wait", "s", note=note),
                figures.group_metric_figure(capped, "killed_jobs", "Killed", "jobs", note=note)]
    for figure in figures_:
        groups = {trace.legendgroup for trace in figure.data if trace.legendgroup}
        assert len(groups) <= site_groups.GROUP_LIMIT + 1
        assert sum(len(trace.x) for trace in figure.data) <= figures.POINT_BUDGET + 4 * len(figure.data)
    assert "other 292 as one" in figures_[0].layout.title.text
    assert sum(len(figure.to_json()) for figure in figures_) < 3 * 2**20   # one callback response
    # "other" is the sum of the merged groups' shares at every sample (each series holds between samples).
    other = capped[0][2]
    merged = other[(other["entity"] == "other (292 groups)") & (other["metric"] == "dominant_share")]
    raw = runs[0][2]
    names = set(site_groups.top_groups(runs)[1])
    expected = raw[(raw["metric"] == "dominant_share") & raw["entity"].isin(names)].groupby("time")["value"].sum()
    assert np.allclose(merged.set_index("time")["value"].sort_index(), expected.sort_index())
    lines, _ = figures.stakeholder_summary(runs, {f"group {g}": 1 / 300 for g in range(300)})
    assert len(lines) == 2 * (site_groups.GROUP_LIMIT + 1) and lines[8].startswith("FCFS — other (292 groups): ")
    assert "for 97% entitlement" in lines[8]


def test_groups_are_listed_as_people_read_them_numbers_by_value_and_other_last():
    names = ["group 16", "group 2", "other (104 groups)", "research", "group 3", "a10b2", "a10b10", "a9"]
    assert sorted(names, key=site_groups.reading_order) == [
        "a9", "a10b2", "a10b10", "group 2", "group 3", "group 16", "research", "other (104 groups)"]
