"""The metric catalogue covers every metric any engine emits, and says numbers the way a person reads them."""

from __future__ import annotations

import math

import pytest

from components.figures import catalogue
from sched_engine.core.records import SUMMARY_METRICS, TIMELINE_METRICS


def _declared(table):
    for engine, metrics in table.items():
        for name in metrics:
            yield engine, name.replace("<resource>", "cpu")


@pytest.mark.parametrize("engine, metric", [*_declared(SUMMARY_METRICS), *_declared(TIMELINE_METRICS)])
def test_every_declared_metric_has_a_catalogue_entry(engine, metric):
    found = catalogue.entry(metric, engine)
    assert found is not None, f"{engine} metric {metric} has no entry in components/figures/catalogue.py"
    assert found.label and found.label[0].isupper() and "_" not in found.label
    assert found.definition and found.kind in {"seconds", "count", "percent", "share", "ratio", "rate"}
    assert found.direction in {catalogue.LOWER, catalogue.HIGHER, None}


def test_a_resource_utilisation_names_its_resource():
    assert catalogue.label("utilisation_cpu", "fairshare") == "CPU utilisation"
    assert catalogue.label("utilisation_memory", "fairshare") == "Memory utilisation"


@pytest.mark.parametrize("metric, engine, value, text", [
    ("mean_wait_s", "batch", 3489.4, "3,489 s"),
    ("mean_wait_s", "batch", 12.34, "12.3 s"),
    ("mean_wait_s", "batch", 0.0070938550000000005, "0.00709 s"),
    ("utilisation", "batch", 0.6354, "63.5%"),
    ("min_isolation", "network", 0.625, "0.63"),
    ("jobs", "batch", 2000.0, "2,000 jobs"),
    ("mean_bounded_slowdown_tau10", "batch", 1.8449, "1.84×"),
    ("weight_recomputations", "fairshare", 7.0, "7"),
    ("decisions_per_second", "fairshare", 12403.7, "12,404/s"),
])
def test_numbers_read_with_their_unit_at_sensible_precision(metric, engine, value, text):
    assert catalogue.formatted(metric, value, engine) == text


def test_tables_keep_numbers_but_round_them_and_headers_carry_units():
    assert catalogue.rounded("mean_wait_s", 0.0070938550000000005, "batch") == 0.00709
    assert catalogue.rounded("utilisation", 0.63549, "batch") == 63.5
    assert catalogue.rounded("mean_wait_s", math.nan, "batch") is None
    assert catalogue.column("mean_wait_s", "batch") == "Mean wait (s)"
    assert catalogue.column("jobs", "batch") == "Jobs"
    assert "lower is better" in catalogue.tooltip("mean_wait_s", "batch")


def test_better_follows_the_metrics_direction():
    assert catalogue.better("mean_wait_s", 100.0, 80.0, "batch") is True
    assert catalogue.better("mean_wait_s", 80.0, 100.0, "batch") is False
    assert catalogue.better("min_isolation", 0.5, 0.63, "network") is True
    assert catalogue.better("jobs", 10.0, 20.0, "batch") is None
    assert catalogue.better("mean_wait_s", 5.0, 5.0, "batch") is None


def test_a_name_the_catalogue_lacks_still_reads_as_words():
    assert catalogue.label("some_new_metric") == "Some new metric"


def test_run_labels_read_as_words():
    assert catalogue.run_label("batch", "easy", "HPC2N", 2000, 240) == "EASY · HPC2N 2,000 jobs · 240 CPUs"
    assert catalogue.run_label("network", "libra") == "Libra"
    assert catalogue.run_label("batch", "gone") == "gone"


def test_every_summary_column_of_an_engine_page_has_a_header_tooltip():
    from components.widgets import run_panel

    for engine, metrics in SUMMARY_METRICS.items():
        table = run_panel.summary_table(run_panel.Ids(engine))
        for metric in metrics:
            metric = metric.replace("<resource>", "cpu")
            header = catalogue.column(metric, engine)
            assert table.tooltip_header[header] == catalogue.tooltip(metric, engine), (engine, metric)
    assert table.tooltip_header["Mean wait (s)"].endswith("lower is better")


def test_axis_titles_that_name_a_metric_carry_its_definition():
    tips = catalogue.axis_tooltips("batch")
    assert tips["cpus in use"] == "CPUs in use: CPUs held by running jobs"
    assert tips["mean wait (s)"] == tips["mean wait"] and "start - submit" in tips["mean wait"]
    assert tips["cpu utilisation (share, 0–1)"].startswith("CPU utilisation: CPU time of the jobs that ran")
    assert "isolation guarantee" in catalogue.axis_tooltips("network")
    from components.widgets import run_panel

    hidden = run_panel.controls(run_panel.Ids("network"))[-1]
    assert hidden.hidden and "isolation guarantee" in hidden.to_plotly_json()["props"]["data-tooltips"]


def test_a_permalinks_tables_read_as_the_catalogue_names_them(tmp_path):
    import pandas as pd

    from components.pages.scenario import content
    from components.services.runs import ResultCache

    result, _ = ResultCache(tmp_path).run({"engine": "batch", "policy": "easy",
                                           "model": {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}})
    rows, tips = content.summary_rows(result)
    shown = {row["Metric"]: row["Value"] for row in rows}
    assert shown["CPU utilisation"] == "75.8%" and shown["Mean wait"] == "6.8 s" and shown["Jobs"] == "4 jobs"
    assert not [name for name in shown if "_" in name]
    assert tips[[row["Metric"] for row in rows].index("Mean wait")]["Metric"].endswith("lower is better")
    table = pd.DataFrame({"metric": ["utilisation", "mean_wait_s"], "unit": ["share", "s"],
                          "original": [0.7581234, 6.7512], "what-if": [0.5, 10.0], "Δ% what-if": [-34.05, 48.12]})
    readable = content.readable_comparison(table, "batch")
    assert readable.to_dict("records") == [
        {"Metric": "CPU utilisation", "Unit": "%", "original": 75.8, "what-if": 50.0, "Δ% what-if": -34.05},
        {"Metric": "Mean wait", "Unit": "s", "original": 6.8, "what-if": 10.0, "Δ% what-if": 48.12}]
