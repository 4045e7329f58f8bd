"""The run panel every engine page uses: ids, running a plan through the cache, messages, refusals."""

import pytest
from dash import no_update

from components.services.runs import ResultCache
from components.widgets import run_panel
from sched_engine import ScenarioError
from sched_engine.fairshare import starter_model


def _plan(*policies):
    return [run_panel.Planned({"engine": "fairshare", "policy": p, "model": starter_model(), "seed": 0},
                              {"policy": p}) for p in policies]


def test_ids_are_the_pages_strings():
    ids = run_panel.Ids("batch")
    assert (ids.run, ids.cancel, ids.progress, ids.message, ids.runs, ids.summary, ids.download) == (
        "batch-run-button", "batch-cancel-button", "batch-run-progress", "batch-run-message", "batch-runs-store",
        "batch-summary-table", "batch-download")
    assert ids.export_button("jobs") == {"type": "batch-export-button", "frame": "jobs"}


def test_run_many_records_each_run_and_reports_progress_to_the_end(tmp_path):
    progress = []
    records, message = run_panel.run_many(ResultCache(tmp_path), _plan("mch", "hdrf"),
                                          lambda done, total: progress.append((done, total)))
    assert [r["policy"] for r in records] == ["mch", "hdrf"]
    assert all(set(r) == {"policy", "hash", "cached", "wall_seconds"} and not r["cached"] for r in records)
    assert progress[-1] == (200, 200) and all(a[0] <= b[0] for a, b in zip(progress, progress[1:]))
    assert message.startswith("2 run(s): 2 simulated in ") and message.endswith(", 0 from the cache.")


def test_runs_side_by_side_give_the_records_and_stored_results_of_runs_one_after_another(tmp_path):
    plan = _plan("mch", "hdrf", "drf")
    alone, _ = run_panel.run_many(ResultCache(tmp_path / "alone"), plan, lambda d, t: None, workers=1)
    together, _ = run_panel.run_many(ResultCache(tmp_path / "together"), plan, lambda d, t: None, workers=3)
    assert [(r["policy"], r["hash"], r["cached"]) for r in together] == \
        [(r["policy"], r["hash"], r["cached"]) for r in alone]
    stored, kept = ResultCache(tmp_path / "together"), ResultCache(tmp_path / "alone")
    for record in together:   # each forked run stored its result where this process reads it
        assert stored.get(record["hash"]).jobs.equals(kept.get(record["hash"]).jobs)
    again, message = run_panel.run_many(stored, plan, lambda d, t: None, workers=3)
    assert all(r["cached"] for r in again) and message.endswith("3 from the cache.")


def test_a_second_run_comes_from_the_cache_and_the_message_says_so(tmp_path):
    run_panel.run_many(ResultCache(tmp_path), _plan("mch"), lambda d, t: None)
    records, message = run_panel.run_many(ResultCache(tmp_path), _plan("mch"), lambda d, t: None,
                                          noun="scheme", timed=False)
    assert records[0]["cached"]
    assert message == "1 scheme(s): 0 simulated, 1 from the cache."


def test_a_bad_scenario_anywhere_in_the_plan_runs_nothing_and_names_its_origin(tmp_path):
    cache = ResultCache(tmp_path)
    bad = run_panel.Planned({"engine": "fairshare", "policy": "nope", "model": starter_model(), "seed": 0},
                            origin="with failures")
    with pytest.raises(ScenarioError, match=r"\(scenario with failures\)"):
        run_panel.run_many(cache, [*_plan("mch"), bad], lambda d, t: None)
    assert run_panel.run_many(cache, _plan("mch"), lambda d, t: None)[0][0]["cached"] is False


def test_on_run_keeps_the_previous_records_when_the_plan_is_refused(tmp_path):
    def refuse():
        raise ScenarioError("policy", "choose at least one policy")

    records, message = run_panel.on_run(ResultCache(tmp_path), refuse, lambda value: None, (),
                                        refused_note=". The previous results stay.")
    assert records is no_update
    assert message.children == "Not run: policy: choose at least one policy. The previous results stay."
    assert message.className == "error"


def test_summary_columns_render_the_named_columns_as_markdown():
    columns = run_panel.summary_columns([{"policy": "EASY", "open": "[permalink](/scenario/x)"}], ("open",))
    assert columns == [{"name": "policy", "id": "policy"},
                       {"name": "open", "id": "open", "presentation": "markdown"}]


def test_runs_side_by_side_on_one_log_have_it_parsed_once_before_they_fork(tmp_path):
    from sched_engine.batch import model as batch_model

    trace = {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 300}
    plan = [run_panel.Planned({"engine": "batch", "policy": p, "model": {"trace": trace}, "seed": 0}, {"policy": p})
            for p in ("fcfs", "easy")]
    batch_model._cached_workload.cache_clear()
    together, _ = run_panel.run_many(ResultCache(tmp_path / "together"), plan, lambda d, t: None, workers=2)
    assert batch_model._cached_workload.cache_info().misses == 1   # read here; the forked runs found it read
    alone, _ = run_panel.run_many(ResultCache(tmp_path / "alone"), plan, lambda d, t: None, workers=1)
    assert [r["hash"] for r in together] == [r["hash"] for r in alone]
