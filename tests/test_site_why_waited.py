"""The Site page's "why jobs waited" charts: the batch page's figure builders over a site run's reasons."""

from __future__ import annotations

from components.pages.site import charts
from sched_engine import run_scenario
from sched_engine.core.result import SimulationResult


def _result(tmp_path, policy: str) -> SimulationResult:
    # 4 CPUs, 8192 MB on one machine. Group A's job holds 3 CPUs to 100; B's (2 CPUs) lacks CPUs until then;
    # A's second (1 CPU x 6000 MB) has its CPU free but not its memory (2192 MB left) until 100.
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit_time,run_time,procs,user,group,memory_per_cpu_mb\n"
                    "1,0,100,3,a,A,2000\n2,10,50,2,b,B,0\n3,20,50,1,a,A,6000\n")
    return run_scenario({"engine": "site", "policy": policy, "seed": 1, "policy_params": {"backfill": "easy"},
                         "model": {"trace": {"path": str(path)}, "memory_per_machine_mb": {"c": 8192},
                                   "clusters": [{"name": "c", "machines": 1, "cpus_per_machine": 4}]}})


def test_the_chosen_run_s_reasons_are_drawn_over_time_and_per_group(tmp_path):
    loaded = [({"label": "FCFS", "site": "A"}, _result(tmp_path, "fcfs")),
              ({"label": "H-DRF", "site": "A"}, _result(tmp_path, "hdrf")),
              ({"label": "H-DRF", "site": "B"}, _result(tmp_path, "hdrf"))]
    pending = loaded[1][1].extra("pending")
    assert set(pending["reason"]) == {"resources"} and set(pending["job_id"]) == {"2", "3"}
    over_time, by_group = charts.why_waited_figures(loaded, "H-DRF")
    assert "H-DRF" in over_time.layout.title.text
    assert [trace.name for trace in over_time.data] == ["resources"]
    labels = {label.split(" · ")[0] for trace in by_group.data for label in trace.y}
    assert labels == set(loaded[1][1].jobs["group"]) and len(labels) == 2   # both groups waited
    first, _ = charts.why_waited_figures(loaded, None)
    assert "FCFS" in first.layout.title.text


def test_a_run_stored_without_reasons_says_so(tmp_path):
    result = _result(tmp_path, "fcfs")
    stored = SimulationResult(scenario=result.scenario, scenario_hash=result.scenario_hash, jobs=result.jobs,
                              timeline=result.timeline, summary=result.summary, wall_seconds=0.0)
    over_time, by_group = charts.why_waited_figures([({"label": "FCFS", "site": "A"}, stored)])
    texts = [annotation.text for figure in (over_time, by_group) for annotation in figure.layout.annotations]
    assert all("without its reasons" in text for text in texts) and len(texts) == 2
    nothing, _ = charts.why_waited_figures([])
    assert "run a policy" in nothing.layout.annotations[0].text
