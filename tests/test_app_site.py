"""The Site study page's functions: the plan of a run, the derived organisation, the summary and linked charts."""

from __future__ import annotations

import pytest

from components.pages.site import callbacks, charts, run
from components.services.uploads import UploadStore
from sched_engine import ScenarioError, run_scenario


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def test_the_plan_runs_the_trace_under_every_chosen_order(uploads):
    plan = run.plan(uploads, "hpc2n-excerpt.swf", 300, "equal", "synthetic", ["on"], ["fcfs", "hdrf"], "easy", 600)
    assert [p.scenario["policy"] for p in plan] == ["fcfs", "hdrf"]
    assert [p.record["label"] for p in plan] == ["FCFS", "H-DRF"]
    scenario = plan[1].scenario
    assert scenario["policy_params"] == {"backfill": "easy", "half_life_s": 600.0}
    assert scenario["model"]["trace"]["max_jobs"] == 300
    assert scenario["model"]["memory_elastic"] == {"enabled": True}
    with pytest.raises(ScenarioError, match="at least one queue order"):
        run.plan(uploads, "hpc2n-excerpt.swf", 300, "equal", "none", [], [], "easy", 0)
    with pytest.raises(ScenarioError, match="choose a sample trace"):
        run.plan(uploads, None, 300, "equal", "none", [], ["fcfs"], "easy", 0)


def test_the_derived_organisation_lists_groups_with_their_entitlement(uploads):
    rows, hardware = charts.organisation_rows(uploads, "hpc2n-excerpt.swf", "equal")
    assert rows and {"group", "users", "weight", "entitlement"} == set(rows[0])
    assert sum(row["users"] for row in rows) > 1
    assert "CPUs" in hardware and "2,048 MB per CPU assumed" in hardware


def test_the_stakeholder_summary_and_a_highlighted_group_in_every_chart(uploads):
    loaded = []
    for planned in run.plan(uploads, "hpc2n-excerpt.swf", 400, "equal", "synthetic", [], ["fcfs", "drf"], "easy", 0):
        loaded.append((planned.record, run_scenario(planned.scenario)))
    rows, _ = charts.organisation_rows(uploads, "hpc2n-excerpt.swf", "equal")
    block = charts.stakeholder_block(loaded, rows)
    lines = [item.children for item in block[1].children]
    assert len(lines) == 2 * len(rows) and all("of CPU time for" in line for line in lines)
    group = rows[0]["group"]
    shares, isolation, utilisation, waits, killed = charts.chart_figures(loaded, group, None)
    for figure in (shares, isolation, waits):
        bold = {trace.name for trace in figure.data if trace.line.width == 3.0}
        assert bold and all(name.startswith(group) for name in bold)
    zoomed = charts.chart_figures(loaded, None, [0.0, 1.0])[0]
    assert max(max(trace.x) for trace in zoomed.data) <= 1.0
    assert charts.clicked_group({"points": [{"customdata": group}]}) == group
    payload = sum(len(figure.to_json()) for figure in (shares, isolation, utilisation, waits, killed))
    assert payload < 3_000_000


def test_a_bad_upload_is_refused_in_words(uploads):
    options, value, message = callbacks.upload(uploads, "data:text/plain;base64,////", "bad.swf")
    assert message.className == "error" and "bad.swf" in message.children
