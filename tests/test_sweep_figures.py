"""The Sweeps page's pure figure builders, on small hand-made sweep tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from components.figures import sweeps as figures


def elastic_table() -> pd.DataFrame:
    rows = []
    for distribution in ("uniform", "exponential"):
        for configuration, (tasks, memory, duration) in enumerate([(200, 2.0, 200.0), (400, 10.0, 500.0)]):
            for trace in range(3):
                ratio = 0.5 + 0.1 * trace + 0.2 * configuration + (0.3 if distribution == "exponential" else 0)
                rows.append({"point": len(rows), "distribution": distribution, "configuration": configuration,
                             "tasks_max": tasks, "memory_gb_max": memory, "duration_s_max": duration,
                             "trace": trace, "seed": 1000 * configuration + trace, "yarn_s": 100.0,
                             "meganode_s": 80.0, "yarn_me_1.5x_s": 100 * ratio, "ratio_1.5x": ratio,
                             "vs_meganode_1.5x": 100 * ratio / 80, "yarn_me_3x_s": 100 * (ratio + 0.1),
                             "ratio_3x": ratio + 0.1, "vs_meganode_3x": 100 * (ratio + 0.1) / 80})
    return pd.DataFrame(rows)


def test_metric_options_per_kind():
    assert [o["value"] for o in figures.metric_options("elastic-fig6")] == ["ratio", "vs_meganode"]
    assert figures.metric_options("batch-ls-seeds")[0] == {"label": "average response time (s)",
                                                            "value": "mean_response_s"}
    assert [o["value"] for o in figures.metric_options("libra-intervals")] == \
        ["mean_isolation", "mean_duration_s", "link_utilisation", "mean_wait_s"]
    assert figures.metric_options("nope") == []


def test_elastic_ratios_one_panel_per_distribution_with_medians():
    figure = figures.elastic_ratios(elastic_table())
    assert [a.text for a in figure.layout.annotations] == ["uniform traces", "exponential traces"]
    medians = [t for t in figure.data if t.mode == "lines+markers"]
    dots = [t for t in figure.data if t.mode == "markers"]
    assert len(medians) == 4 and len(dots) == 4   # 2 distributions x 2 penalties
    uniform_15 = medians[0]
    assert uniform_15.name == "1.5× penalty, median"
    assert list(uniform_15.x) == ["200 · 2 · 200", "400 · 10 · 500"]
    assert list(uniform_15.y) == pytest.approx([0.6, 0.8])
    exponential_3 = medians[3]
    assert list(exponential_3.y) == pytest.approx([1.0, 1.2]) and exponential_3.xaxis == "x2"
    assert len(dots[0].y) == 6   # 2 configurations x 3 traces
    assert [s.y0 for s in figure.layout.shapes] == [1.0, 0.7, 1.0, 0.7]   # parity and the paper's 0.7 mark
    assert sum(t.showlegend is not False for t in figure.data) == 2       # one legend entry per penalty


def test_elastic_vs_meganode_has_no_0_7_mark():
    figure = figures.sweep_figure("elastic-fig6", elastic_table(), "vs_meganode")
    assert [s.y0 for s in figure.layout.shapes] == [1.0, 1.0]
    assert figure.layout.yaxis.title.text == "YARN-ME / Meganode average job runtime"
    assert list(figure.data[1].y) == pytest.approx([0.6 / 0.8, 0.8 / 0.8])


def test_seed_scatter_mean_line_and_band():
    table = pd.DataFrame({"point": range(5), "policy": ["ls", "ls", "ls", "cons", "cons"],
                          "variant": ["BASIC"] * 5, "seed": [0, 1, 2, 0, 1],
                          "mean_wait_s": [10.0, 20.0, 60.0, 30.0, 30.0]})
    figure = figures.seed_scatter(table, "mean_wait_s")
    names = [t.name for t in figure.data if t.name]
    assert names == ["ls", "ls mean 30.00 ± 26", "cons", "cons mean 30.00 ± 0"]
    ls_points, ls_band, ls_mean = figure.data[:3]
    assert list(ls_points.x) == [0, 1, 2] and list(ls_points.y) == [10, 20, 60]
    assert list(ls_mean.y) == [30, 30] and list(ls_mean.x) == [0, 2]
    std = np.std([10, 20, 60], ddof=1)
    assert max(ls_band.y) == pytest.approx(30 + std) and min(ls_band.y) == pytest.approx(30 - std)
    assert figure.layout.yaxis.title.text == "mean wait (s)"
    assert list(figure.layout.xaxis.tickvals) == [0, 1, 2]


def test_interval_lines_mean_and_std_per_scheme():
    table = pd.DataFrame({
        "point": range(6), "scheme": ["libra"] * 4 + ["drf"] * 2, "interval_s": [0.1, 0.1, 1.0, 1.0, 0.1, 1.0],
        "seed": [0, 1, 0, 1, 0, 0], "mean_isolation": [0.8, 1.0, 1.0, 1.0, 0.3, 0.9],
    })
    figure = figures.interval_lines(table, "mean_isolation")
    libra_mean, libra_seeds, drf_mean = figure.data
    assert list(libra_mean.x) == [0.1, 1.0] and list(libra_mean.y) == pytest.approx([0.9, 1.0])
    assert list(libra_mean.error_y.array) == pytest.approx([np.std([0.8, 1.0], ddof=1), 0.0])
    assert len(libra_seeds.y) == 4 and libra_seeds.showlegend is False
    assert drf_mean.name == "drf" and list(drf_mean.error_y.array) == [0.0, 0.0]   # one seed: no spread drawn
    assert figure.layout.xaxis.type == "log"


def test_dispatch_and_empty_states():
    assert figures.sweep_figure("libra-intervals", pd.DataFrame()).layout.annotations[0].text.startswith("Run a")
    assert figures.sweep_figure("", pd.DataFrame()).layout.annotations[0].text == "Run a sweep to see its plot."
    table = pd.DataFrame({"point": [0], "policy": ["ls"], "variant": ["BASIC"], "seed": [0],
                          "mean_response_s": [5.0], "mean_slowdown": [1.5]})
    assert figures.sweep_figure("batch-ls-seeds", table).layout.yaxis.title.text == "average response time (s)"
    assert figures.sweep_figure("batch-ls-seeds", table, "mean_slowdown").layout.yaxis.title.text == \
        "average slowdown"
    assert figures.sweep_figure("batch-ls-seeds", table, "bogus").layout.yaxis.title.text == \
        "average response time (s)"


def test_sensitivity_lines_one_line_per_scheme_and_volume_over_slots():
    table = pd.DataFrame({
        "point": range(6), "scheme": ["libra"] * 4 + ["drf"] * 2, "volume_gb": [0.03, 0.03, 0.03, 0.1, 0.03, 0.03],
        "slots": [2, 2, 32, 2, 2, 32], "seed": [0, 1, 0, 0, 0, 0],
        "mean_isolation": [1.0, 0.8, 0.2, 1.0, 0.5, 0.15],
    })
    figure = figures.sweep_figure("libra-sensitivity", table, "mean_isolation")
    assert [trace.name for trace in figure.data] == ["libra, 30 Mb per flow", "libra, 100 Mb per flow",
                                                     "drf, 30 Mb per flow"]
    assert list(figure.data[0].x) == [2, 32] and list(figure.data[0].y) == pytest.approx([0.9, 0.2])
    assert figure.data[0].line.dash == "solid" and figure.data[1].line.dash == "dash"
    assert figure.layout.xaxis.title.text == "container slots per machine"
