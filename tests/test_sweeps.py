"""Parameter sweeps: points, single runs, gathering, executors, bad specs, the command line, the page's helpers."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from components.pages import sweeps as page
from components.scaleout import sweep_executor as scaleout
from components.scaleout.celery_app import SWEEP_TASK
from sched_engine import ScenarioError, run_scenario, sweeps
from sched_engine.network.presets import fig6_model

ROOT = Path(__file__).resolve().parents[1]
TINY_LIBRA = {"kind": "libra-intervals", "schemes": ["libra", "drf"], "intervals": [0.1, 1.0], "width": 16,
              "machines": 64, "applications": 10, "seeds": 2}
TINY_ELASTIC = {"kind": "elastic-fig6", "distributions": ["exponential"], "maxima": 1, "traces": 2,
                "penalties": [1.5, 3.0], "nodes": 4, "cores": 4, "node_memory_gb": 10.0, "jobs": 6, "seed": 7}
TINY_BATCH = {"kind": "batch-ls-seeds", "trace": "hpc2n-excerpt.swf", "jobs": 150, "variant": "EXT-ALL",
              "policies": ["ls", "cons"], "seeds": [3, 5]}


# --- points -----------------------------------------------------------------------------------------------------

def test_elastic_points_cover_table2_and_use_the_bench_seeds():
    points = sweeps.expand({"kind": "elastic-fig6"})
    assert len(points) == 2 * 27 * 5
    assert [p["index"] for p in points] == list(range(len(points)))
    first = points[0]
    assert (first["distribution"], first["tasks_per_job"], first["memory_gb"], first["duration_s"]) == \
        ("uniform", [1, 200], [1.0, 2.0], [1.0, 200.0])
    last = points[-1]
    assert (last["distribution"], last["tasks_per_job"], last["memory_gb"], last["duration_s"]) == \
        ("exponential", [1, 220], [1.0, 10.0], [50.0, 500.0])
    # trace t of configuration c: seed + 1000 c + t, per distribution
    assert [(p["configuration"], p["trace"], p["seed"]) for p in points[5:7]] == [(1, 0, 1000), (1, 1, 1001)]
    quick = sweeps.expand(sweeps.quick_spec("elastic-fig6"))
    assert len(quick) == 2 * 8 * 2
    assert {tuple(p["memory_gb"]) for p in quick} == {(1.0, 2.0), (1.0, 10.0)}
    assert all(json.loads(json.dumps(p)) == p for p in quick)   # JSON in, JSON out


def test_batch_and_libra_point_counts_and_seeds():
    points = sweeps.expand(TINY_BATCH)
    assert [(p["policy"], p["seed"]) for p in points] == [("ls", 3), ("ls", 5), ("cons", 3), ("cons", 5)]
    assert len(sweeps.expand({"kind": "batch-ls-seeds", "seeds": 4})) == 4
    assert [p["seed"] for p in sweeps.expand({"kind": "batch-ls-seeds", "seeds": 4})] == [0, 1, 2, 3]
    libra = sweeps.expand(TINY_LIBRA)
    assert len(libra) == 2 * 2 * 2
    assert [(p["scheme"], p["interval"], p["seed"]) for p in libra[:3]] == \
        [("libra", 0.1, 0), ("libra", 0.1, 1), ("libra", 1.0, 0)]
    assert len(sweeps.expand({"kind": "libra-intervals"})) == 4 * 5 * 3
    sensitivity = sweeps.expand({"kind": "libra-sensitivity", "schemes": ["drf", "libra"], "volumes": [0.01, 0.03],
                                 "slots": [2, 32], "seeds": 1})
    assert len(sensitivity) == 2 * 2 * 2
    assert [(p["scheme"], p["volume"], p["slots"]) for p in sensitivity[:3]] == \
        [("drf", 0.01, 2), ("drf", 0.01, 32), ("drf", 0.03, 2)]
    assert len(sweeps.expand({"kind": "libra-sensitivity"})) == 4 * 3 * 6 * 3


# --- one point --------------------------------------------------------------------------------------------------

def test_elastic_point_matches_the_engine_run_of_the_same_trace():
    point = sweeps.expand(TINY_ELASTIC)[1]
    metrics = sweeps.run_point(point)
    model = {"nodes": [{"count": 4, "cores": 4, "memory_mb": 10_000}], "memory_step_mb": 100,
             "penalty": {"kind": "spill", "factor": 1.5},
             "trace": {"kind": "generated", "distribution": "exponential", "jobs": 6,
                       "tasks_per_job": point["tasks_per_job"], "memory_gb": point["memory_gb"],
                       "duration_s": point["duration_s"], "arrival_s": [0.0, 1000.0]}}

    def average(policy, factor):
        scenario = {"engine": "elastic", "policy": policy, "seed": point["seed"],
                    "model": {**model, "penalty": {"kind": "spill", "factor": factor}}}
        return run_scenario(scenario).summary_value("mean_job_runtime_s")

    assert metrics["yarn_s"] == pytest.approx(average("yarn", 1.0), rel=1e-12)
    assert metrics["meganode_s"] == pytest.approx(average("meganode", 1.0), rel=1e-12)
    for factor in (1.5, 3.0):
        me = average("yarn-me", factor)
        label = sweeps.penalty_label(factor)
        assert metrics[f"yarn_me_{label}_s"] == pytest.approx(me, rel=1e-12)
        assert metrics[f"ratio_{label}"] == pytest.approx(me / metrics["yarn_s"])
        assert metrics[f"vs_meganode_{label}"] == pytest.approx(me / metrics["meganode_s"])


def test_libra_point_matches_the_engine_run():
    point = sweeps.expand(TINY_LIBRA)[3]
    metrics = sweeps.run_point(point)
    model = fig6_model(mean_interval=point["interval"], width=16, count=10, machines=64, volume=0.03)
    result = run_scenario({"engine": "network", "policy": point["scheme"], "seed": point["seed"], "model": model})
    assert metrics == {name: result.summary_value(name) for name in sweeps.LIBRA_METRICS}


def test_sensitivity_point_by_hand():
    """One application on two 1-slot machines: its sender's single flow carries 0.5 Gb at 1 Gbps.

    The two containers take one machine each (one slot each), nothing else
    runs: isolation 1, duration 0.5 s, no wait, uplink and downlink full.
    """
    point = {"kind": "libra-sensitivity", "scheme": "libra", "volume": 0.5, "slots": 1, "seed": 0, "interval": 1.0,
             "width": 2, "machines": 2, "applications": 1, "demand": 1.0}
    assert sweeps.run_point(point) == pytest.approx(
        {"mean_isolation": 1.0, "mean_duration_s": 0.5, "link_utilisation": 1.0, "mean_wait_s": 0.0})
    assert sweeps.libra_model(1.0, 2, 1, 2, 1.0, 0.5, slots=3)["machines"][0]["cpu"] == 3.0


def test_sensitivity_refuses_a_width_the_slots_cannot_hold():
    with pytest.raises(ScenarioError) as caught:
        sweeps.normalize_spec({"kind": "libra-sensitivity", "width": 16, "machines": 4, "slots": [2, 4]})
    assert caught.value.field == "width"


def test_batch_point_matches_the_engine_run():
    point = sweeps.expand(TINY_BATCH)[1]
    metrics = sweeps.run_point(point)
    model = {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 150},
             "machines_path": "sample_traces/metacentrum-2009.machines",
             "failures": {"kind": "trace", "path": "sample_traces/metacentrum-2009.failures", "align": "start"},
             "requirements": True, "synthetic_requirements": {"share": 0.5}}
    result = run_scenario({"engine": "batch", "policy": "ls", "seed": 5, "model": model})
    for name in sweeps.BATCH_METRICS:
        if name != "scheduler_cpu_s":   # a measured CPU time
            assert metrics[name] == result.summary_value(name), name
    assert metrics["scheduler_cpu_s"] >= 0


# --- gathering and executors ------------------------------------------------------------------------------------

def test_gather_sorts_by_point_whatever_the_completion_order():
    points = sweeps.expand(TINY_LIBRA)
    results = [{"mean_isolation": p["index"] / 10, "mean_duration_s": 1.0, "link_utilisation": 0.5} for p in points]
    table = sweeps.gather(points, results)
    order = list(range(len(points)))
    random.Random(4).shuffle(order)
    shuffled = sweeps.gather([points[i] for i in order], [results[i] for i in order])
    pd.testing.assert_frame_equal(table, shuffled)
    assert list(table.columns) == ["point", "scheme", "interval_s", "seed", "mean_isolation", "mean_duration_s",
                                   "link_utilisation"]
    assert list(table["point"]) == list(range(len(points)))
    assert list(table["mean_isolation"]) == [i / 10 for i in range(len(points))]
    with pytest.raises(ValueError):   # noqa: PT011 -- a results list of the wrong length, in any words
        sweeps.gather(points, results[:-1])


def test_process_pool_and_serial_give_the_same_table():
    seen = []
    pooled = sweeps.run_sweep(TINY_LIBRA, workers=2, executor="processes", progress=lambda d, t: seen.append((d, t)))
    serial = sweeps.run_sweep(TINY_LIBRA, executor="serial")
    assert (pooled.executor, pooled.workers, serial.executor) == ("processes", 2, "serial")
    pd.testing.assert_frame_equal(pooled.table, serial.table)
    assert seen == [(i, 8) for i in range(9)]
    assert len(pooled.table) == 8 and pooled.table["mean_isolation"].between(0, 1).all()


def test_batch_sweep_is_deterministic_across_executors_but_cpu_time():
    pooled = sweeps.run_sweep(TINY_BATCH, workers=2, executor="processes").table
    serial = sweeps.run_sweep(TINY_BATCH, executor="serial").table
    pd.testing.assert_frame_equal(pooled.drop(columns="scheduler_cpu_s"), serial.drop(columns="scheduler_cpu_s"))
    # LS is randomised: different seeds give different schedules on this scenario
    ls = serial[serial.policy == "ls"]
    assert ls["mean_wait_s"].nunique() == 2


def test_elastic_sweep_summary_matches_its_table():
    run = sweeps.run_sweep(TINY_ELASTIC, workers=2)
    table, summary = run.table, run.summary()
    assert list(summary["penalty"]) == [1.5, 3.0]
    for row in summary.itertuples(index=False):
        label = sweeps.penalty_label(row.penalty)
        medians = table.groupby("configuration")[f"ratio_{label}"].median()
        assert row.median_ratio == pytest.approx(float(np.median(medians)))
        assert row.worst_ratio == table[f"ratio_{label}"].max()
        assert row.beats_meganode == np.mean(table[f"yarn_me_{label}_s"] < table["meganode_s"])


def test_elastic_summary_by_hand():
    table = pd.DataFrame({
        "distribution": ["uniform"] * 4, "configuration": [0, 0, 1, 1],
        "yarn_s": [100.0] * 4, "meganode_s": [50.0, 50.0, 200.0, 200.0],
        "yarn_me_2x_s": [40.0, 60.0, 100.0, 120.0],
        "ratio_2x": [0.4, 0.6, 1.0, 1.2], "vs_meganode_2x": [0.8, 1.2, 0.5, 0.6],
    })
    row = sweeps.summarise({"kind": "elastic-fig6"}, table).iloc[0]
    assert (row.distribution, row.penalty, row.configurations, row.traces) == ("uniform", 2.0, 2, 4)
    assert row.median_ratio == pytest.approx((0.5 + 1.1) / 2)
    assert row.worst_ratio == 1.2
    assert row.share_le_0_7 == 0.5
    assert row.beats_meganode == 0.75   # 40 < 50, 100 < 200, 120 < 200; 60 > 50
    # Wilson, 3 of 4, z = 1.96: centre (0.75 + 0.4802) / 1.9604 = 0.6275, half 1.96 * 0.32696 / 1.9604 = 0.3269
    assert (row.beats_meganode_low, row.beats_meganode_high) == (pytest.approx(0.3006, abs=1e-4),
                                                                 pytest.approx(0.9544, abs=1e-4))
    assert row.median_vs_meganode == pytest.approx(0.7)


def test_mean_std_over_seeds():
    table = pd.DataFrame({"policy": ["ls", "ls", "ls", "cons"], "mean_wait_s": [1.0, 2.0, 6.0, 4.0]})
    out = sweeps.mean_std(table, ["policy"], ["mean_wait_s"])
    assert list(out["policy"]) == ["ls", "cons"]
    assert list(out["runs"]) == [3, 1]
    assert out["mean_wait_s_mean"].tolist() == [3.0, 4.0]
    assert out["mean_wait_s_std"].iloc[0] == pytest.approx(np.std([1, 2, 6], ddof=1))
    assert np.isnan(out["mean_wait_s_std"].iloc[1])
    assert "3.000 ± 2.6" in sweeps.format_summary(out)
    assert sweeps.mean_std_text(9716.3, 222.4) == "9716 ± 220" and sweeps.mean_std_text(1.0, 1e-16) == "1.000 ± 0"


class FakeCelery:
    """Celery's ``send_task`` contract on a thread pool: JSON crosses the wire both ways."""

    def __init__(self, *, idle=False):
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.idle = idle
        self.sent, self.revoked = [], []

    def send_task(self, name, args):
        assert name == SWEEP_TASK
        point = json.loads(json.dumps(args[0]))
        self.sent.append(point)
        return FakeResult(self, None if self.idle else self.pool.submit(sweeps.run_point, point))


class FakeResult:
    def __init__(self, app, future):
        self.app, self.future = app, future

    def ready(self):
        return self.future is not None and self.future.done()

    def successful(self):
        return self.ready() and self.future.exception() is None

    @property
    def result(self):   # as Celery's: the value once successful, else the exception
        if self.future.exception() is not None:
            return self.future.exception()
        return json.loads(json.dumps(self.future.result()))

    def revoke(self):
        self.app.revoked.append(self)


def test_celery_fan_out_gives_the_local_table(monkeypatch):
    app = FakeCelery()
    monkeypatch.setattr("components.scaleout.celery_app.celery_app", lambda url=None: app)
    seen = []
    run = scaleout.run_sweep(TINY_LIBRA, progress=lambda d, t: seen.append(d))
    assert run.executor == "celery" and len(app.sent) == 8
    assert seen == list(range(9))
    pd.testing.assert_frame_equal(run.table, sweeps.run_sweep(TINY_LIBRA, executor="serial").table)


def test_celery_without_workers_times_out_naming_progress(monkeypatch):
    app = FakeCelery(idle=True)
    monkeypatch.setattr("components.scaleout.celery_app.celery_app", lambda url=None: app)
    with pytest.raises(sweeps.SweepError) as caught:
        scaleout.run_sweep(TINY_LIBRA, timeout=0.5)
    assert caught.value.field == "executor" and "0 of 8 done" in str(caught.value)
    assert len(app.revoked) == 8


def test_celery_needs_redis(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    with pytest.raises(sweeps.SweepError, match="REDIS_URL"):
        sweeps.run_sweep(TINY_LIBRA, executor="celery")


def _broken_trace_spec(tmp_path) -> tuple[dict, int]:
    """A batch sweep whose trace passes the checks but has a malformed third job; and that job's line."""
    trace = tmp_path / "broken.swf"
    lines = (ROOT / "sample_traces" / "hpc2n-excerpt.swf").read_text().splitlines()
    body = [i for i, line in enumerate(lines) if line.strip() and not line.startswith(";")]
    lines[body[2]] = "1 2 three"
    trace.write_text("\n".join(lines) + "\n")
    return {**TINY_BATCH, "trace": str(trace), "variant": "BASIC", "policies": ["cons"], "seeds": 1}, body[2] + 1


@pytest.mark.parametrize("executor", ["processes", "serial"])
def test_a_failing_point_is_named_not_hung(tmp_path, executor):
    spec, line = _broken_trace_spec(tmp_path)
    with pytest.raises(sweeps.SweepPointError) as caught:
        sweeps.run_sweep(spec, workers=2, executor=executor)
    error = caught.value
    assert error.index == 0 and error.field == "points[0]"
    assert "policy=cons" in str(error) and "broken.swf" in str(error) and f"line {line}" in str(error)


def test_a_point_failing_on_a_celery_worker_is_named(tmp_path, monkeypatch):
    spec, line = _broken_trace_spec(tmp_path)
    monkeypatch.setattr("components.scaleout.celery_app.celery_app", lambda url=None: FakeCelery())
    with pytest.raises(sweeps.SweepPointError) as caught:
        scaleout.run_sweep(spec)
    assert caught.value.field == "points[0]" and "failed on a Celery worker" in str(caught.value)
    assert f"line {line}" in str(caught.value)


# --- bad specs --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, field", [
    ({"kind": "nope"}, "kind"),
    ({"kind": "libra-intervals", "interval": [1]}, "interval"),
    ({"kind": "libra-intervals", "intervals": [0.1, -1]}, "intervals[1]"),
    ({"kind": "libra-intervals", "intervals": []}, "intervals"),
    ({"kind": "libra-intervals", "intervals": [1, 1]}, "intervals[1]"),
    ({"kind": "libra-intervals", "schemes": ["libra", "fifo"]}, "schemes[1]"),
    ({"kind": "libra-intervals", "width": 1}, "width"),
    ({"kind": "libra-intervals", "seeds": 0}, "seeds"),
    ({"kind": "libra-intervals", "seeds": [1, "2"]}, "seeds[1]"),
    ({"kind": "elastic-fig6", "penalties": [1.5, 0.5]}, "penalties[1]"),
    ({"kind": "elastic-fig6", "distributions": ["normal"]}, "distributions[0]"),
    ({"kind": "elastic-fig6", "maxima": 2.5}, "maxima"),
    ({"kind": "elastic-fig6", "traces": 1001}, "traces"),
    ({"kind": "elastic-fig6", "arrival_s": [10, 5]}, "arrival_s[1]"),
    ({"kind": "elastic-fig6", "penalty_model": "fitted"}, "penalty_model"),
    ({"kind": "elastic-fig6", "disk_bandwidth_mb_s": -5}, "disk_bandwidth_mb_s"),
    ({"kind": "elastic-fig6", "elastic_spill_mb_s": 0}, "elastic_spill_mb_s"),
    ({"kind": "batch-ls-seeds", "trace": "missing.swf"}, "trace"),
    ({"kind": "batch-ls-seeds", "variant": "EXT-FAIL", "failures": "none"}, "variant"),
    ({"kind": "batch-ls-seeds", "variant": "ALL"}, "variant"),
    ({"kind": "batch-ls-seeds", "policies": ["ls", "sjf"]}, "policies[1]"),
    ({"kind": "batch-ls-seeds", "jobs": 0}, "jobs"),
    ({"kind": "batch-ls-seeds", "requirement_share": 2}, "requirement_share"),
])
def test_bad_specs_name_the_field(spec, field):
    with pytest.raises(ScenarioError) as caught:
        sweeps.expand(spec)
    assert caught.value.field == field, str(caught.value)


def test_bad_machines_file_names_file_and_line(tmp_path):
    machines = tmp_path / "bad.machines"
    machines.write_text("0 alpha 4 eight 1000 linux\n")
    with pytest.raises(ScenarioError) as caught:
        sweeps.expand({**TINY_BATCH, "machines": str(machines)})
    assert "bad.machines" in str(caught.value) and "line 1" in str(caught.value)


def test_spec_hash_follows_content_not_spelling(tmp_path):
    explicit = {**sweeps.LIBRA_DEFAULTS, "kind": "libra-intervals"}
    assert sweeps.spec_hash({"kind": "libra-intervals"}) == sweeps.spec_hash(explicit)
    assert sweeps.spec_hash({"kind": "libra-intervals", "seeds": 3}) == \
        sweeps.spec_hash({"kind": "libra-intervals", "seeds": [0, 1, 2]})
    assert sweeps.spec_hash(TINY_LIBRA) != sweeps.spec_hash({**TINY_LIBRA, "width": 32})
    trace = tmp_path / "copy.swf"
    trace.write_bytes((ROOT / "sample_traces" / "hpc2n-excerpt.swf").read_bytes())
    before = sweeps.spec_hash({**TINY_BATCH, "trace": str(trace)})
    trace.write_bytes(trace.read_bytes() + b"\n")
    assert sweeps.spec_hash({**TINY_BATCH, "trace": str(trace)}) != before


# --- command line -----------------------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "sched_engine", *args], cwd=ROOT, capture_output=True, text=True)


def test_cli_writes_sweep_csv_and_reports_progress(tmp_path):
    spec = tmp_path / "libra.json"
    spec.write_text(json.dumps(TINY_LIBRA))
    done = _cli("sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "2")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert len(table) == 8 and list(table.columns[:4]) == ["point", "scheme", "interval_s", "seed"]
    expected = sweeps.run_sweep(TINY_LIBRA, executor="serial").table
    assert np.allclose(table["mean_isolation"], expected["mean_isolation"], rtol=1e-12)
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert list(summary["scheme"]) == ["libra", "libra", "drf", "drf"]
    assert json.loads((tmp_path / "out" / "spec.json").read_text())["seeds"] == [0, 1]
    assert "runs 8/8" in done.stderr
    assert "mean_isolation" in done.stdout and "8 runs in" in done.stdout


def test_cli_bad_spec_exits_2_with_one_line(tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({**TINY_LIBRA, "intervals": [0.1, "often"]}))
    done = _cli("sweep", str(spec), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {spec}, intervals[1]: must be a number, got 'often'"
    assert not (tmp_path / "out").exists()
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "libra-intervals",\n "seeds": }')
    done = _cli("sweep", str(broken), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and f"{broken}, line 2" in done.stderr
    done = _cli("sweep", "elastic-fig7", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "elastic-fig6" in done.stderr


# --- the page's helpers -----------------------------------------------------------------------------------------

def _form(kind, **changes):
    ids, values = [], []
    for k in page.form.FORM:
        start = page.form.form_values(k)
        for param in page.form.FORM[k]:
            ids.append({"type": page.ids.PARAM, "kind": k, "name": param.name})
            values.append(changes.get(param.name, start[param.name]) if k == kind else start[param.name])
    return ids, values


def test_page_defaults_are_valid_and_small():
    counts = {}
    for kind in page.form.FORM:
        spec = sweeps.normalize_spec(page.form.spec_from_form(kind, *_form(kind)))
        counts[kind] = len(sweeps.expand(spec))
    assert counts == {"elastic-fig6": 16, "batch-ls-seeds": 10, "calibrate": 32, "libra-intervals": 40,
                      "libra-sensitivity": 8}


def test_form_errors_name_the_label():
    text, ok = page.form.preview("libra-intervals", *_form("libra-intervals", intervals="0.1, fast"))
    assert not ok and text == "Mean arrival intervals (s): 'fast' is not a number"
    text, ok = page.form.preview("elastic-fig6", *_form("elastic-fig6", penalties="1.5, 0.9"))
    assert not ok and text.startswith("Penalty factors (item 2): ")
    text, ok = page.form.preview("batch-ls-seeds", *_form("batch-ls-seeds", seeds=None))
    assert not ok and text == "Seeds: enter a number"
    text, ok = page.form.preview("libra-intervals", *_form("libra-intervals", seeds=1, intervals="1 10"))
    assert ok and text.startswith("8 points: 4 scheme(s) × 2 interval(s) × 1 seed(s)")


@pytest.mark.parametrize("name, forged", [("trace", "/etc/passwd"), ("machines", "../../etc/passwd"),
                                           ("policies", ["ls", "no-such-policy"]), ("variant", "EVERYTHING")])
def test_forged_form_choices_are_refused(name, forged):
    with pytest.raises(ScenarioError, match="is not one of the choices"):
        page.form.spec_from_form("batch-ls-seeds", *_form("batch-ls-seeds", **{name: forged}))


def test_store_round_trip_and_cache(tmp_path):
    store = page.store.SweepStore(tmp_path / "sweeps")
    ids, values = _form("libra-intervals", schemes=["libra", "drf"], intervals="0.1, 1", width=16, machines=64,
                        applications=10, seeds=2)
    seen = []
    key, message, cached = page.store.run_form(store, "libra-intervals", ids, values, lambda d, t: seen.append(d))
    assert not cached and message.startswith("8 runs in") and seen[-1] == 8
    assert key == sweeps.spec_hash(TINY_LIBRA)
    record = store.get(key)
    pd.testing.assert_frame_equal(record["table"], sweeps.run_sweep(TINY_LIBRA, executor="serial").table)
    again = page.store.run_form(store, "libra-intervals", ids, values, lambda d, t: pytest.fail("ran again"))
    assert again[0] == key and again[2] and "from cache" in again[1]
    summary, points, figure, heading = page.results.results(store, {"key": key}, "link_utilisation")
    assert len(points) == 8 and [row["Scheme"] for row in summary] == ["Libra", "Libra", "DRF", "DRF"]
    assert "±" in summary[2]["Mean isolation"]
    # The points read as the catalogue names them, to sensible precision (shares in percent).
    assert {"Scheme", "Mean arrival gap (s)", "Seed", "Mean isolation", "Link utilisation (%)"} <= set(points[0])
    assert all(0 <= row["Link utilisation (%)"] <= 100 for row in points)
    assert figure.layout.yaxis.title.text == "mean link utilisation"
    name, text = page.results.export_csv(store, {"key": key}, "points")
    assert name == "libra-intervals-sweep.csv" and len(text.strip().splitlines()) == 9
    assert store.get("../../etc/passwd") is None   # keys come from the browser: only hashes are looked up
    assert page.results.results(store, {"key": "0" * 64}, None)[0] == []


def test_pool_workers_exit_when_the_sweep_process_is_killed():
    psutil = pytest.importorskip("psutil")
    spec = json.dumps({**TINY_ELASTIC, "distributions": ["uniform"], "maxima": 2, "traces": 50, "nodes": 100,
                       "cores": 16, "jobs": 100})
    code = f"from sched_engine import sweeps; sweeps.run_sweep({spec}, workers=2, executor='processes')"
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        process = psutil.Process(parent.pid)
        deadline = time.monotonic() + 60
        while len(process.children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = process.children()
        assert len(workers) == 2
        parent.kill()   # as a cancelled background job is
        parent.wait()
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert alive == []
    finally:
        parent.kill()


# --- calibrate -----------------------------------------------------------------------------------------------

LIMITED_LOG = ("job_id,submit_time,run_time,procs,user,recorded_wait\n"
               "a,0,100,2,u1,0\nb,1,100,2,u1,99\nc,2,50,2,u2,0\n")


def test_calibrate_finds_the_user_limit_the_log_was_run_under(tmp_path):
    # The log's site ran one job per user at a time: b (u1) waited 99 s for a to end, c (u2) none.
    # On 10 CPUs without a limit every job starts at once: mean wait 0 vs the log's 33 s (off by 100%),
    # all 3 within 10 min (|0 - 99| < 600), no rank correlation (the simulated waits are all equal).
    # A limit of 1 reproduces every wait: off by 0%, Spearman 1 -- the best setting.
    log = tmp_path / "log.csv"
    log.write_text(LIMITED_LOG)
    machines = tmp_path / "ten.machines"
    machines.write_text("0\tc\t10\t1\t1\t1048576\n")
    spec = {"kind": "calibrate", "trace": str(log), "machines": str(machines), "estimates": ["trace"],
            "allocation": ["cpus"], "priorities": [False], "running_jobs_limits": [0, 1]}
    sweep = sweeps.run_sweep(spec, executor="serial")
    ranked = sweep.summary()
    assert ranked["running_jobs_limit"].tolist() == [1, 0]
    assert ranked["reference"].tolist() == [False, True]
    best, reference = ranked.iloc[0], ranked.iloc[1]
    assert (best["mean_wait_error"], best["wait_rank_correlation"], best["simulated_mean_wait_s"]) == (0, 1, 33)
    assert reference["mean_wait_error"] == 1 and np.isnan(reference["wait_rank_correlation"])
    assert best["share_within_10min"] == reference["share_within_10min"] == 1
    text = sweeps.calibrate.verdict(ranked)
    assert text.startswith("best: trace estimates, cpus, queue priorities off, at most 1 running jobs per user")
    assert "off by 0%" in text and "the reference (trace estimates, cpus, queue priorities off, no user limit) " \
                                  "is off by 100%" in text


def test_calibrate_ranks_by_the_mean_of_three_ranks():
    table = pd.DataFrame({
        "point": [0, 1, 2], "estimates": ["trace"] * 3, "allocation": ["cpus"] * 3, "priorities": [False] * 3,
        "running_jobs_limit": [0, 4, 16],
        "mean_wait_error": [0.5, 0.1, 0.2],        # ranks 3, 1, 2
        "share_within_10min": [0.9, 0.5, 0.6],     # ranks 1, 3, 2
        "wait_rank_correlation": [0.4, 0.3, np.nan],   # ranks 1, 2, 3 (missing last)
        "simulated_mean_wait_s": [1.0, 2.0, 3.0], "recorded_mean_wait_s": [2.0] * 3, "compared_jobs": [3.0] * 3,
    })
    ranked = sweeps.calibrate.rank(table)
    # scores: point 0 (3+1+1)/3 = 5/3, point 1 (1+3+2)/3 = 2, point 2 (2+2+3)/3 = 7/3
    assert ranked["point"].tolist() == [0, 1, 2] and ranked["rank"].tolist() == [1, 2, 3]
    assert ranked["score"].tolist() == pytest.approx([5 / 3, 2, 7 / 3])
    assert "the reference setting is already the best" in sweeps.calibrate.verdict(ranked)


@pytest.mark.parametrize("bad, field", [({"priorities": ["on"]}, "priorities[0]"),
                                        ({"running_jobs_limits": [-1]}, "running_jobs_limits[0]"),
                                        ({"policy": "cons", "running_jobs_limits": [0, 4]}, "running_jobs_limits"),
                                        ({"allocation": ["nodes"]}, "allocation[0]")])
def test_calibrate_spec_errors_name_the_parameter(bad, field):
    with pytest.raises(ScenarioError) as error:
        sweeps.normalize_spec({"kind": "calibrate", "jobs": 50, **bad})
    assert error.value.field == field


def test_the_calibrate_plot_draws_one_bar_per_setting_best_first_reference_grey():
    from components.figures.sweeps import metric_options, sweep_figure

    table = pd.DataFrame({
        "point": [0, 1], "estimates": ["trace", "perfect"], "allocation": ["cpus"] * 2, "priorities": [False] * 2,
        "running_jobs_limit": [0, 4], "mean_wait_error": [0.8, 0.2], "share_within_10min": [0.3, 0.4],
        "wait_rank_correlation": [0.2, 0.3], "simulated_mean_wait_s": [100.0, 400.0],
        "recorded_mean_wait_s": [500.0] * 2, "compared_jobs": [10.0] * 2,
    })
    figure = sweep_figure("calibrate", table, "simulated_mean_wait_s")
    bar = figure.data[0]
    assert list(bar.x) == [400.0, 100.0]
    assert bar.y[0].startswith("#1 perfect, cpus, prio off, limit 4") and bar.y[1].endswith("limit none")
    assert bar.marker.color[1] == "#9e9e9e" and bar.marker.color[0] != "#9e9e9e"
    assert metric_options("calibrate")[0]["value"] == "mean_wait_error"


def _component(tree, component_id):
    """The component of ``tree`` (a Dash layout) whose id is ``component_id``, or None."""
    if getattr(tree, "id", None) == component_id:
        return tree
    children = getattr(tree, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children] if children is not None else []:
        found = _component(child, component_id)
        if found is not None:
            return found
    return None


def test_the_calibrate_link_opens_the_sweeps_page_on_its_sample_trace():
    trace_field = {"type": page.ids.PARAM, "kind": "calibrate", "name": "trace"}
    opened = page.layout_for_url("/sweeps", {"kind": ["calibrate"], "trace": ["sample:cerit-sc-2013-slice.swf"]})
    assert _component(opened, page.ids.KIND).value == "calibrate"
    assert _component(opened, trace_field).value == "cerit-sc-2013-slice.swf"
    assert not _component(opened, page.ids.LINK_MSG).children
    # An upload is the workload until the user's choices arrive (tests/test_sweeps_uploads.py).
    opened = page.layout_for_url("/sweeps", {"kind": ["calibrate"], "trace": ["upload:" + "ab" * 32]})
    assert _component(opened, trace_field).value == "upload:" + "ab" * 32
    # A file the kind does not offer, or a malformed reference, leaves the kind's default workload, and says so.
    for trace in ("upload:abab", "sample:../../etc/passwd", "/etc/passwd"):
        opened = page.layout_for_url("/sweeps", {"kind": ["calibrate"], "trace": [trace]})
        assert _component(opened, trace_field).value == "hpc2n-excerpt.swf"
        assert "is not one this sweep offers" in str(_component(opened, page.ids.LINK_MSG).children)
    # Another kind takes no uploads.
    opened = page.layout_for_url("/sweeps", {"kind": ["batch-ls-seeds"], "trace": ["upload:" + "ab" * 32]})
    assert _component(opened, {**trace_field, "kind": "batch-ls-seeds"}).value == "hpc2n-excerpt.swf"
