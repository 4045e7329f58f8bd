"""The headless command line writes the result frames and reports bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sched_engine.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_traces" / "fairshare-fig4.scenario.json"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "sched_engine", *args], cwd=ROOT, capture_output=True, text=True)


def test_run_writes_frames_and_prints_summary(tmp_path):
    done = _cli("run", str(SAMPLE), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    assert list(jobs.job_id) == ["n11", "n12", "n21", "n22", "n23", "n31"]
    assert {"time", "entity", "metric", "value"} <= set(pd.read_csv(tmp_path / "timeline.csv").columns)
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("metric")
    assert summary.loc["makespan_s", "value"] == 1000
    assert "decisions_per_second" in done.stdout
    assert json.loads((tmp_path / "scenario.json").read_text())["policy"] == "mch"


def test_malformed_json_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "engine": "fairshare",\n  "policy": mch\n}\n')
    done = _cli("run", str(bad), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert f"{bad}, line 3" in done.stderr
    assert not (tmp_path / "out").exists()


def test_invalid_model_names_the_field(tmp_path):
    scenario = json.loads(SAMPLE.read_text())
    scenario["model"]["resources"][0]["capacity"] = 0
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(scenario))
    done = _cli("run", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "model.resources[0].capacity: must be greater than 0, got 0" in done.stderr


def test_policies_lists_the_registry():
    done = _cli("policies", "fairshare")
    assert done.returncode == 0 and "mch" in done.stdout and "hdrf" in done.stdout


BATCH_DATA = Path(__file__).parent / "data" / "batch"


def test_batch_command_writes_jobs_and_summary(tmp_path):
    done = _cli(
        "batch", "--trace", str(BATCH_DATA / "failure.swf"), "--failures", str(BATCH_DATA / "failure.failures"),
        "--failure-align", "absolute", "--policy", "easy", "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    jobs = pd.read_csv(tmp_path / "jobs.csv", dtype={"job_id": str})
    assert {"job_id", "submit_time", "start_time", "end_time", "status", "cluster"} <= set(jobs.columns)
    assert list(jobs.status) == ["killed", "finished", "cancelled", "finished"]
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("metric")
    assert summary.loc["killed", "value"] == 1


def test_batch_command_reports_the_bad_line(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1\n2 1 -1 x 2\n")
    done = _cli("batch", "--trace", str(bad), "--policy", "fcfs", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "bad.swf, line 3, avg_cpu_time: expected 18 fields, found 5" in done.stderr


def test_size_command_writes_the_probes_and_the_answer(tmp_path, capsys):
    trace = tmp_path / "tiny.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} 0 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 4)))
    status = main(["size", "--trace", str(trace), "--policy", "fcfs", "--target", "mean_wait_s<=0",
                   "--out", str(tmp_path / "out")])
    assert status == 0
    summary = pd.read_csv(tmp_path / "out" / "summary.csv").set_index("metric")["value"]
    assert summary["smallest_cpus"] == 12          # three 4-CPU jobs at once
    probes = pd.read_csv(tmp_path / "out" / "sizing.csv")
    assert {11.0, 12.0} <= set(probes["size"]) and not probes.set_index("size").loc[11.0, "holds"]
    assert "smallest size meeting mean_wait_s<=0: 12" in capsys.readouterr().out


def test_size_command_rejects_a_malformed_target(tmp_path, capsys):
    status = main(["size", "--trace", "sample_traces/hpc2n-excerpt.swf", "--policy", "fcfs", "--target", "fast",
                   "--out", str(tmp_path)])
    assert status == 2
    assert "target" in capsys.readouterr().err


def test_compare_command_prints_the_headline(tmp_path, capsys):
    scenario = {"engine": "batch", "seed": 1, "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf",
                                                                    "max_jobs": 150}}}
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({**scenario, "policy": "fcfs"}))
    second.write_text(json.dumps({**scenario, "policy": "easy"}))
    status = main(["compare", str(first), str(second), "--resamples", "100", "--out", str(tmp_path / "out")])
    assert status == 0
    out = capsys.readouterr().out
    assert "EASY vs FCFS: mean wait" in out and "% of jobs unchanged" in out
    summary = pd.read_csv(tmp_path / "out" / "summary.csv").set_index("metric")["value"]
    assert summary["paired_jobs"] == 150
    assert summary["mean_wait_difference_s_low95"] <= summary["mean_wait_difference_s"] <= \
        summary["mean_wait_difference_s_high95"]
    assert (tmp_path / "out" / "by_user.csv").exists()


def test_baseline_command_puts_the_logs_waits_beside_the_simulated_ones(tmp_path, capsys):
    # 8 CPUs, four 4-CPU jobs of 100 s at t=0; FCFS starts 1 and 2 at 0, 3 and 4 at 100.
    # The log recorded waits 0, 50, 800 and "unknown" (-1) for job 4.
    trace = tmp_path / "log.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} 0 {wait} 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n" for i, wait in zip(range(1, 5), (0, 50, 800, -1))))
    status = main(["baseline", "--trace", str(trace), "--policy", "fcfs", "--out", str(tmp_path / "out")])
    assert status == 0
    jobs = pd.read_csv(tmp_path / "out" / "jobs.csv", dtype={"job_id": str})
    assert jobs["wait_time"].tolist() == [0, 0, 100, 100]
    assert jobs["recorded_wait"].tolist()[:3] == [0, 50, 800] and pd.isna(jobs["recorded_wait"][3])
    summary = pd.read_csv(tmp_path / "out" / "summary.csv").set_index("metric")["value"]
    assert summary["mean_wait_s"] == 50                           # the run's own rows stay
    assert summary["recorded_mean_wait_s"] == pytest.approx(850 / 3)
    assert summary["simulated_mean_wait_s"] == pytest.approx(100 / 3)
    assert summary["median_abs_wait_error_s"] == 50              # |0|, |-50|, |-700|
    assert summary["share_within_10min"] == pytest.approx(2 / 3)
    assert summary["wait_rank_correlation"] == pytest.approx(1.5 / 3 ** 0.5)  # ranks (1.5, 1.5, 3) vs (1, 2, 3)
    assert summary["jobs_without_recorded_wait"] == 1 and summary["compared_jobs"] == 3
    assert pd.read_csv(tmp_path / "out" / "baseline_by_size.csv")["jobs"].sum() == 3
    out = capsys.readouterr().out
    assert "simulated mean wait 33 s vs your log's 283 s: 8.5× lower" in out
    assert "1 jobs without a recorded wait left out" in out


def test_calibrate_command_writes_the_ranked_settings(tmp_path, capsys):
    # One job per user at a time reproduces the log (b waited 99 s for a); see tests/test_sweeps.py.
    log = tmp_path / "log.csv"
    log.write_text("job_id,submit_time,run_time,procs,user,recorded_wait\na,0,100,2,u1,0\nb,1,100,2,u1,99\n"
                   "c,2,50,2,u2,0\n")
    machines = tmp_path / "ten.machines"
    machines.write_text("0\tc\t10\t1\t1\t1048576\n")
    status = main(["calibrate", "--trace", str(log), "--machines", str(machines), "--estimates", "trace",
                   "--allocation", "cpus", "--priorities", "off", "on", "--limits", "0", "1", "--workers", "1",
                   "--out", str(tmp_path / "out")])
    assert status == 0
    table = pd.read_csv(tmp_path / "out" / "calibration.csv")
    assert len(table) == 4 and table["running_jobs_limit"].tolist()[:2] == [1, 1]
    assert table.loc[table["reference"], ["priorities", "running_jobs_limit"]].values.tolist() == [[False, 0]]
    assert "best: trace estimates, cpus, queue priorities off, at most 1 running jobs per user" in capsys.readouterr().out


def test_calibrate_command_names_a_missing_trace(tmp_path, capsys):
    assert main(["calibrate", "--trace", str(tmp_path / "none.swf"), "--out", str(tmp_path / "out")]) == 2
    assert "trace" in capsys.readouterr().err
