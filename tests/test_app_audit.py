"""The Audit panel (components/widgets/audit_panel.py) and its figures, called as plain functions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest
from dash.exceptions import PreventUpdate

from components.figures import audit as figures
from components.pages.batch import callbacks as batch_callbacks
from components.pages.batch.draft import initial_draft
from components.pages.batch.sources import sample_ref
from components.pages.site import callbacks as site_callbacks
from components.services.uploads import UploadStore
from components.widgets import audit_panel
from sched_engine import ScenarioError
from sched_engine.analysis.audit import NEEDS_WAITS, audit

TABLE = pd.DataFrame([("jobs", 3.0, "jobs", "ok", "three jobs"), ("share", 0.25, "share", "warning", "over it"),
                      ("gone", float("nan"), "", "warning", "needs waits"), ("wait", 1234.5, "s", "ok", "mean")],
                     columns=["check", "value", "unit", "verdict", "detail"])


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def test_the_table_puts_warnings_first_and_formats_values_by_unit():
    rows = figures.table_rows(TABLE)
    assert [r["check"] for r in rows] == ["Share", "Gone", "Jobs", "Wait"]
    assert [r["value"] for r in rows] == ["25.00%", "—", "3", "1,234"]
    assert figures.WARNING_STYLE[0]["if"]["filter_query"] == '{verdict} = "warning"'
    assert figures.summary_sentence(TABLE, "log.swf") == "log.swf: 2 of 4 checks warn, first Share: Over it."
    calm = TABLE[TABLE["verdict"] == "ok"]
    assert "none warns" in figures.summary_sentence(calm, "log.swf")


def test_the_usage_figure_is_downsampled_and_draws_the_hardware_and_the_capacity_used():
    steps = 200_000
    times = np.arange(steps, dtype=float) * 60.0
    usage = pd.DataFrame({"time": times, "cpus": (np.arange(steps) * 7919 % 1000).astype(float)})
    figure = figures.usage_figure(usage, 600.0, 990.0)
    assert len(figure.data[0].x) <= 4 * 1000 + 2 and len(pio.to_json(figure)) < 300_000
    assert [trace.name for trace in figure.data] == ["CPUs in use (the log)", "hardware (600)",
                                                     "capacity the log used (990)"]
    assert figure.data[1].y == (600.0, 600.0) and figure.data[0].x[-1] == times[-1] / figures.DAY
    assert len(figures.usage_figure(usage, 600.0, 600.0).data) == 2     # the capacity line only where it differs
    empty = figures.usage_figure(pd.DataFrame({"time": [], "cpus": []}), 4.0, 4.0)
    assert "records no wait times" in empty.layout.annotations[0].text


def test_the_batch_page_audits_the_trace_in_use_on_the_next_runs_hardware(uploads):
    model = {**initial_draft(), "trace": sample_ref("trace", "hpc2n-excerpt.swf"), "clusters": []}
    result, label = batch_callbacks.log_audit(uploads, model)
    found = result.table.set_index("check")
    assert label == "hpc2n-excerpt.swf" and found.loc["hardware_cpus", "value"] == 240   # the header's machine
    assert found.loc["recorded_mean_wait_s", "value"] == pytest.approx(17285.4, abs=0.1)
    assert "'1 [fque:1]'" in found.loc["header_queues", "detail"]     # read from the file's header lines
    sentence, rows, figure = audit_panel.panel(lambda m: batch_callbacks.log_audit(uploads, m), model)
    assert sentence.startswith("hpc2n-excerpt.swf: ") and rows[0]["verdict"] == "warning"
    assert figure.data[0].name == "CPUs in use (the log)" and figure.data[1].name == "hardware (240)"
    # The table's clusters, when chosen: their CPUs are the hardware.
    chosen = {**model, "clusters": [{"name": "a", "machines": 10, "cpus_per_machine": "8", "speed": 1,
                                     "properties": ""}]}
    assert batch_callbacks.log_audit(uploads, chosen)[0].hardware_cpus == 80


def test_the_site_page_audits_the_whole_trace_on_its_hardware_table(uploads):
    draft = {"rows": [{"name": "seth", "machines": 120, "cpus_per_machine": 2, "memory_per_machine_mb": None}]}
    result, label = site_callbacks.log_audit(uploads, "hpc2n-excerpt.swf", draft)
    assert label == "hpc2n-excerpt.swf" and result.hardware_cpus == 240 and len(result.usage) > 1000
    unknown, _ = site_callbacks.log_audit(uploads, "hpc2n-excerpt.swf", {"rows": []})
    assert math.isnan(unknown.hardware_cpus)
    assert site_callbacks.log_audit(uploads, None, draft) is None
    with pytest.raises(PreventUpdate):
        audit_panel.panel(lambda trace: site_callbacks.log_audit(uploads, trace, draft), None)


def test_an_unreadable_trace_says_why_instead_of_an_audit():
    def refuse(_):
        raise ScenarioError("trace", "line 3: 'x' is not a number", source="bad.swf")
    message, rows, figure = audit_panel.panel(refuse, "anything")
    assert "No audit: " in message.children and "bad.swf" in message.children and rows == []
    assert figure["layout"]["annotations"][0]["text"] == "no audit: the trace cannot be read"


def test_a_log_without_waits_shows_its_table_and_says_the_chart_needs_them():
    jobs = pd.DataFrame({"job_id": ["1", "2"], "submit_time": [0.0, 5.0], "run_time": [10.0, 3.0], "procs": [1, 2],
                         "requested_time": [20.0, 3.0], "user": ["a", "b"], "queue": ["", ""], "partition": ["", ""],
                         "recorded_wait": [np.nan, np.nan]})
    sentence, rows, figure = audit_panel.view(audit(jobs, 4), "nowaits.csv")
    assert "first Recorded waits" in sentence and rows[0]["check"] == "Recorded waits"
    assert "records no wait times" in figure.layout.annotations[0].text
    # Said once: one warning, one row naming every check that needs recorded waits; no row of its own for each.
    assert [row["check"] for row in rows if row["verdict"] == "warning"] == ["Recorded waits"]
    assert sentence.startswith("nowaits.csv: 1 of ") and sentence.count("need recorded waits") == 1
    assert all(name in rows[0]["detail"] for name in NEEDS_WAITS)
    assert not {row["check"] for row in rows} & {figures.check_name(check) for check in NEEDS_WAITS}
    assert not any(row["detail"].startswith("needs ") for row in rows)


def test_checks_read_as_names_on_the_panel():
    assert figures.check_name("recorded_peak_cpus") == "Peak CPUs in use (log)"
    assert figures.check_name("idle_period_2") == "Idle period 2"
    assert figures.check_name("queue_wait_s") == "Queue wait"
