"""The site engine's "recorded" policy: the log as it ran, on the site's machines with memory (hand-computed)."""

from __future__ import annotations

from pathlib import Path

from sched_engine.registry import REGISTRY
from sched_engine.runner import run_scenario


def _run(folder: Path, rows: str, policy: str = "recorded", **model) -> dict:
    path = folder / "log.csv"
    path.write_text("job_id,submit_time,recorded_wait,run_time,procs,user,memory_per_cpu_mb\n" + rows)
    result = run_scenario({"engine": "site", "policy": policy, "seed": 1, "model": {
        "trace": {"path": str(path)},
        "clusters": [{"name": "c", "machines": 2, "cpus_per_machine": 2, "speed": 1.0, "properties": []}],
        "memory_per_machine_mb": {"c": 4000}, **model}})
    return {"starts": dict(zip(result.jobs.job_id, result.jobs.start_time)),
            "summary": dict(zip(result.summary.metric, result.summary.value)),
            "memory": dict(zip(result.jobs.job_id, result.jobs.memory_mb))}


def test_every_job_starts_when_the_log_says_where_its_cpus_and_memory_fit(tmp_path):
    # Two machines of 2 CPUs and 4,000 MB. a (2 CPUs x 1,000 MB) runs 0-100 as recorded; b waits 50 s in the log
    # and starts at 50 beside it; c is submitted at 10 and the log started it at 100, when a ended (the order
    # FCFS would start it at 10 on the free machine: the log is kept, not re-scheduled).
    run = _run(tmp_path, "a,0,0,100,2,u1,1000\nb,0,50,100,2,u2,1000\nc,10,90,50,1,u1,500\n")
    assert run["starts"] == {"a": 0.0, "b": 50.0, "c": 100.0}
    assert run["summary"]["delayed_starts"] == 0
    assert run["summary"]["mean_wait_s"] == (0 + 50 + 90) / 3
    assert run["memory"] == {"a": 2000.0, "b": 2000.0, "c": 500.0}


def test_a_job_whose_memory_does_not_fit_then_starts_when_it_does_and_later_ones_keep_their_order(tmp_path):
    # a holds 1 CPU and 3,000 MB of machine 0 and b 1 CPU and 3,000 MB of machine 1 over 0-100. c asks 2 CPUs of
    # 1,500 MB at its recorded start 20: two CPUs are free, but 1,000 MB on each machine; it starts at 100. d,
    # recorded at 30, waits behind it (recorded order kept) and starts at 100 too.
    run = _run(tmp_path, "a,0,0,100,1,u1,3000\nb,0,0,100,1,u2,3000\nc,0,20,10,2,u1,1500\nd,0,30,10,1,u2,100\n")
    assert run["starts"] == {"a": 0.0, "b": 0.0, "c": 100.0, "d": 100.0}
    assert run["summary"]["delayed_starts"] == 2


def test_the_recorded_policy_is_listed_for_the_site_without_backfilling_parameters():
    entry = REGISTRY.policy("site", "recorded")
    assert entry.label == "As recorded" and entry.schema == {}


def test_on_the_capacity_the_log_used_every_recorded_start_is_kept(tmp_path):
    # Five 1-CPU jobs at once on 4 CPUs: on the hardware the fifth waits for the first to end (one delayed start);
    # on the capacity the log used (5 CPUs, in machines of 2: 6) every start is the log's.
    rows = "".join(f"j{i},0,0,{100 + i},1,u{i},100\n" for i in range(5))
    assert _run(tmp_path, rows)["summary"]["delayed_starts"] == 1
    on_log = _run(tmp_path, rows, capacity="log")
    assert on_log["summary"]["delayed_starts"] == 0 and set(on_log["starts"].values()) == {0.0}
    assert on_log["summary"]["cpus"] == 6
