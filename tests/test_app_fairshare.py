"""The fair-sharing page's logic without a browser: edits, cache, figures."""

import pytest
from dash import no_update

from components.figures import fairshare as figures
from components.pages import fairshare as page
from components.pages.fairshare import tree_edit
from components.services.runs import ResultCache
from sched_engine import ScenarioError
from sched_engine.fairshare.presets import (
    FIG4_AFTER_N12_AT,
    FIG4_ALL_ACTIVE_AT,
    FIG4_PAPER_SHARES,
    FIG4_PAPER_WEIGHTS,
    fig4_model,
    starter_model,
)
from tests.support.callbacks import fired


def test_add_job_under_selected_department_and_apply_form():
    draft, name = tree_edit.add_job(starter_model(), "dev")
    assert name == "job1" and tree_edit.find(draft["tree"], "dev")["children"][-1]["name"] == "job1"
    form = {"name": "etl", "weight": "2", "tasks": "10", "duration": "5", "arrival": "0", "departure": "",
            "demand": {"cpu": "1", "mem": "2"}}
    applied = tree_edit.apply_form(draft, "job1", form)
    job = tree_edit.find(applied["tree"], "etl")
    assert job["weight"] == 2.0 and job["demand"] == {"cpu": 1.0, "mem": 2.0} and job["departure"] is None


def test_edits_never_modify_their_input():
    draft = starter_model()
    before = repr(draft)
    tree_edit.add_department(draft, None)
    tree_edit.remove(draft, "ads")
    assert repr(draft) == before


@pytest.mark.parametrize("form_change, field", [
    ({"tasks": "many"}, "tasks"), ({"demand": {"cpu": "0", "mem": "0"}}, "demand"),
    ({"demand": {"cpu": "500", "mem": "1"}}, "demand.cpu"),
])
def test_invalid_form_keeps_the_draft_and_says_why(form_change, field):
    draft = starter_model()
    form = {**tree_edit.form_values(draft, "dev-batch"), **form_change}
    new, selected, rows, message, _, _ = page.draft.edit_draft(page.ids.APPLY, draft, "dev-batch", form, draft["resources"])
    assert new is no_update and selected is no_update
    assert field in message.children


def test_invalid_capacity_row_is_reported_next_to_the_table():
    draft = starter_model()
    rows = [{"name": "cpu", "capacity": -5, "unit": ""}, draft["resources"][1]]
    new, _, _, _, capacity_message, _ = page.draft.edit_draft(page.ids.CAPACITY, draft, None, {}, rows)
    assert new is no_update
    assert capacity_message.children == "resources[0].capacity: must be greater than 0, got -5"


def test_root_cannot_be_removed_and_jobs_take_no_children():
    with pytest.raises(ScenarioError, match="root stays"):
        tree_edit.remove(starter_model(), "root")
    with pytest.raises(ScenarioError, match="is a job"):
        tree_edit.add_job(starter_model(), "dev-batch")


def test_empty_tree_is_an_error_at_run_time_not_while_editing(tmp_path):
    draft = tree_edit.remove(tree_edit.remove(starter_model(), "ads"), "dev")
    with pytest.raises(ScenarioError, match="empty"):
        page.run.run_policies(ResultCache(tmp_path), draft, ["mch"], lambda done, total: None)


def test_second_identical_run_is_a_cache_hit(tmp_path):
    cache = ResultCache(tmp_path)
    progress = []
    first, _ = page.run.run_policies(cache, starter_model(), ["mch"], lambda d, t: progress.append((d, t)))
    second, message = page.run.run_policies(ResultCache(tmp_path), starter_model(), ["mch"], lambda d, t: None)
    assert not first[0]["cached"] and second[0]["cached"]
    assert first[0]["hash"] == second[0]["hash"]
    assert "0 simulated, 1 from the cache" in message
    assert progress[-1] == (100, 100)


def test_share_timelines_has_one_panel_per_policy_with_shared_axes(tmp_path):
    cache = ResultCache(tmp_path)
    records, _ = page.run.run_policies(cache, fig4_model(), ["mch", "hdrf"], lambda d, t: None)
    runs = [(r["label"], cache.get(r["hash"]).timeline) for r in records]
    leaves = page.tree.leaves_of(fig4_model())
    figure = figures.share_timelines(runs, leaves, highlight="n23")
    assert len(figure.data) == 2 * 6
    assert figure.layout.xaxis.matches == "x2"  # the panels share one time axis
    assert [t.line.width for t in figure.data if t.name == "n23"] == [4, 4]
    table = figures.fig4_table(dict(runs), FIG4_PAPER_SHARES, FIG4_PAPER_WEIGHTS, FIG4_ALL_ACTIVE_AT,
                               FIG4_AFTER_N12_AT)
    by_leaf = {row["leaf"]: row for row in table}
    assert by_leaf["n21"]["MCH"] == pytest.approx(1 / 6, abs=0.006)
    assert by_leaf["n21"]["our MCH weight"] == 0.5
    assert by_leaf["n23"]["MCH at 900 s"] == 1.0


def test_tree_elements_mark_jobs_and_edges():
    elements = page.tree.tree_elements(fig4_model())
    jobs = [e["data"]["id"] for e in elements if e.get("classes") == "job"]
    assert jobs == ["n11", "n12", "n21", "n22", "n23", "n31"]
    assert sum("source" in e["data"] for e in elements) == 9


def test_the_draft_callback_names_its_outputs_and_sets_only_what_an_action_changes():
    names = [*page.callbacks.PRESET_INPUTS, *page.callbacks.TREE_INPUTS, *page.callbacks.CAPACITY_INPUTS,
             *page.callbacks.EDIT_STATES]
    values = {**dict.fromkeys(names), "model": starter_model(), "rows": starter_model()["resources"],
              "amounts": [], "demand_ids": []}
    with fired(page.ids.PRESET):
        out = page.callbacks.edit(**{**values, "preset": 1})
    assert set(out) == set(page.callbacks.EDIT_OUTPUTS)
    assert out["draft"] == fig4_model() and out["rows"] == fig4_model()["resources"]
    assert out["policies"] == page.draft.FIG4_POLICIES
    with fired(page.ids.ADD_RESOURCE):
        out = page.callbacks.edit(**{**values, "add_resource": 1})
    assert out["draft"] is no_update and out["rows"][-1] == {"name": "", "capacity": None, "unit": ""}
    assert "Name" in out["capacity_msg"] and out["tree_msg"] is no_update
