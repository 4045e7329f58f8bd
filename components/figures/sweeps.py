"""Pure figure builders for the Sweeps page: a gathered sweep table in, ``go.Figure`` out.

Tables are :func:`sched_engine.sweeps.gather` frames (one row per point).
Each kind has one plot: YARN-ME's ratio per Table 2 configuration
(``elastic-fig6``), a metric against the seed with each policy's mean
(``batch-ls-seeds``), a metric against the mean arrival interval per scheme
(``libra-intervals``), a metric against the slots per machine per scheme and
data volume (``libra-sensitivity``), a metric per setting in rank order with
the reference setting marked (``calibrate``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sched_engine.sweeps import BATCH_METRICS, LIBRA_METRICS, elastic_penalties, mean_std_text, penalty_label
from sched_engine.sweeps.calibrate import rank

from .common import empty_figure
from .fairshare import PALETTE

HEIGHT = 420
MARGIN = {"l": 60, "r": 20, "t": 50, "b": 60}
METRIC_LABELS = {
    "ratio": "YARN-ME / YARN average job runtime",
    "vs_meganode": "YARN-ME / Meganode average job runtime",
    "mean_response_s": "average response time (s)",
    "mean_slowdown": "average slowdown",
    "mean_bounded_slowdown_tau10": "average bounded slowdown (τ = 10 s)",
    "mean_wait_s": "mean wait (s)",
    "killed": "killed jobs",
    "cancelled": "cancelled jobs",
    "scheduler_cpu_s": "scheduler CPU time (s)",
    "mean_isolation": "mean isolation guarantee",
    "mean_duration_s": "mean application duration (s)",
    "link_utilisation": "mean link utilisation",
    "mean_wait_error": "|simulated / recorded mean wait − 1|",
    "share_within_10min": "share of jobs within 10 min of their recorded wait",
    "wait_rank_correlation": "wait rank correlation with the log (Spearman)",
    "simulated_mean_wait_s": "simulated mean wait (s)",
}
KIND_METRICS = {
    "elastic-fig6": ("ratio", "vs_meganode"),
    "batch-ls-seeds": BATCH_METRICS,
    "libra-intervals": LIBRA_METRICS,
    "libra-sensitivity": LIBRA_METRICS,
    "calibrate": ("mean_wait_error", "share_within_10min", "wait_rank_correlation", "simulated_mean_wait_s"),
}
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")


def metric_options(kind: str) -> list[dict]:
    """``[{label, value}]`` of the metrics a kind's plot can show, the default first."""
    return [{"label": METRIC_LABELS[m], "value": m} for m in KIND_METRICS.get(kind, ())]


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _layout(figure: go.Figure, title: str, **layout) -> go.Figure:
    figure.update_layout(title=title, height=HEIGHT, template="plotly_white", margin=MARGIN,
                         legend={"orientation": "h", "y": -0.22}, **layout)
    return figure


def configuration_label(row) -> str:
    """``200 · 2 · 200``: a Table 2 configuration by its maxima (tasks per job, GB per task, task seconds)."""
    return f"{int(row.tasks_max)} · {row.memory_gb_max:g} · {row.duration_s_max:g}"


def elastic_ratios(table: pd.DataFrame, family: str = "ratio") -> go.Figure:
    """Per configuration: each trace's ratio (dots) and the median over traces (line), one colour per penalty.

    ``family``: ``ratio`` (YARN-ME / YARN, paper Fig. 6a) or
    ``vs_meganode`` (YARN-ME / Meganode, Fig. 6c). One panel per
    distribution; the dotted line at 1 is parity, the dashed one at 0.7 the
    paper's "30% faster" mark.
    """
    if table.empty:
        return empty_figure("Run a sweep to see its ratios.", 260)
    distributions = list(dict.fromkeys(table["distribution"]))
    figure = make_subplots(rows=1, cols=len(distributions), shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[f"{d} traces" for d in distributions])
    labels = [configuration_label(row) for row in table.itertuples(index=False)]
    table = table.assign(label=labels)
    for col, distribution in enumerate(distributions, start=1):
        part = table[table["distribution"] == distribution]
        for k, factor in enumerate(elastic_penalties(table)):
            column = f"{family}_{penalty_label(factor)}"
            name = f"{factor:g}× penalty"
            figure.add_trace(go.Scatter(
                x=part["label"], y=part[column], mode="markers", name=name, legendgroup=name, showlegend=False,
                marker={"color": color(k), "size": 6, "opacity": 0.45},
                customdata=part[["trace", "seed"]].to_numpy(),
                hovertemplate="%{x}<br>trace %{customdata[0]} (seed %{customdata[1]}): %{y:.3f}<extra>" + name
                              + "</extra>",
            ), row=1, col=col)
            medians = part.groupby("configuration", sort=True).agg(label=("label", "first"), median=(column, "median"))
            figure.add_trace(go.Scatter(
                x=medians["label"], y=medians["median"], mode="lines+markers", name=f"{name}, median",
                legendgroup=name, showlegend=col == 1, line={"color": color(k), "width": 2},
                marker={"color": color(k), "size": 8, "symbol": "diamond"},
                hovertemplate="%{x}<br>median %{y:.3f}<extra>" + name + "</extra>",
            ), row=1, col=col)
        figure.add_hline(y=1.0, line={"color": "#555", "dash": "dot", "width": 1}, row=1, col=col)
        if family == "ratio":
            figure.add_hline(y=0.7, line={"color": "#999", "dash": "dash", "width": 1}, row=1, col=col)
        figure.update_xaxes(title_text="configuration: max tasks · GB · s", type="category", tickangle=-45,
                            row=1, col=col)
    figure.update_yaxes(title_text=METRIC_LABELS[family], row=1, col=1)
    _layout(figure, f"{METRIC_LABELS[family]} per Table 2 configuration")
    # room for the slanted configuration labels, then the legend; subplot titles below the figure title
    return figure.update_layout(height=HEIGHT + 60, margin={**MARGIN, "t": 80, "b": 150},
                                legend={"orientation": "h", "y": -0.55}, title={"y": 0.97})


def seed_scatter(table: pd.DataFrame, metric: str) -> go.Figure:
    """``metric`` against the seed, one colour per policy; a dashed line at each policy's mean, a band ± one std."""
    if table.empty:
        return empty_figure("Run a sweep to see the metric per seed.", 260)
    figure = go.Figure()
    for k, (policy, part) in enumerate(table.groupby("policy", sort=False)):
        mean = float(part[metric].mean())
        std = float(part[metric].std(ddof=1)) if len(part) > 1 else 0.0
        figure.add_trace(go.Scatter(
            x=part["seed"], y=part[metric], mode="lines+markers", name=str(policy), legendgroup=str(policy),
            line={"color": color(k), "width": 1}, marker={"color": color(k), "size": 9},
            hovertemplate="seed %{x}: %{y:.4g}<extra>" + str(policy) + "</extra>",
        ))
        seeds = [part["seed"].min(), part["seed"].max()]
        figure.add_trace(go.Scatter(
            x=seeds + seeds[::-1], y=[mean + std] * 2 + [mean - std] * 2, fill="toself", mode="none",
            fillcolor=color(k), opacity=0.12, legendgroup=str(policy), showlegend=False, hoverinfo="skip",
        ))
        figure.add_trace(go.Scatter(
            x=seeds, y=[mean, mean], mode="lines", name=f"{policy} mean {mean_std_text(mean, std)}",
            legendgroup=str(policy), line={"color": color(k), "dash": "dash", "width": 2},
            hovertemplate=f"mean {mean_std_text(mean, std)}<extra>{policy}</extra>",
        ))
    figure.update_xaxes(title_text="seed", tickmode="array", tickvals=sorted(table["seed"].unique()))
    figure.update_yaxes(title_text=METRIC_LABELS.get(metric, metric))
    return _layout(figure, f"{METRIC_LABELS.get(metric, metric)} per seed")


def interval_lines(table: pd.DataFrame, metric: str) -> go.Figure:
    """``metric`` against the mean arrival interval (log axis), one line per scheme: mean over seeds ± std, seeds as dots."""
    if table.empty:
        return empty_figure("Run a sweep to see the schemes over arrival intervals.", 260)
    figure = go.Figure()
    for k, (scheme, part) in enumerate(table.groupby("scheme", sort=False)):
        stats = part.groupby("interval_s", sort=True)[metric].agg(["mean", "std", "count"])
        figure.add_trace(go.Scatter(
            x=stats.index, y=stats["mean"], mode="lines+markers", name=str(scheme), legendgroup=str(scheme),
            line={"color": color(k), "width": 2}, marker={"color": color(k), "size": 8},
            error_y={"type": "data", "array": np.nan_to_num(stats["std"].to_numpy()), "visible": True, "width": 4},
            customdata=stats["count"].to_numpy(),
            hovertemplate="interval %{x:g} s: %{y:.4g} (mean of %{customdata} seeds)<extra>" + str(scheme) + "</extra>",
        ))
        if len(part) > len(stats):
            figure.add_trace(go.Scatter(
                x=part["interval_s"], y=part[metric], mode="markers", legendgroup=str(scheme), showlegend=False,
                marker={"color": color(k), "size": 5, "opacity": 0.4}, customdata=part["seed"],
                hovertemplate="seed %{customdata}: %{y:.4g}<extra>" + str(scheme) + "</extra>",
            ))
    intervals = sorted(table["interval_s"].unique())
    figure.update_xaxes(title_text="mean arrival interval (s)", type="log", tickmode="array", tickvals=intervals,
                        ticktext=[f"{v:g}" for v in intervals])
    figure.update_yaxes(title_text=METRIC_LABELS.get(metric, metric))
    return _layout(figure, f"{METRIC_LABELS.get(metric, metric)} over arrival intervals")


def sensitivity_lines(table: pd.DataFrame, metric: str) -> go.Figure:
    """``metric`` against the slots per machine (log axis): one colour per scheme, one dash per data volume (mean over seeds)."""
    if table.empty:
        return empty_figure("Run a sweep to see the schemes over slots and data volume.")
    volumes = sorted(table["volume_gb"].unique())
    figure = go.Figure()
    for k, (scheme, part) in enumerate(table.groupby("scheme", sort=False)):
        for d, volume in enumerate(volumes):
            stats = part[part["volume_gb"] == volume].groupby("slots", sort=True)[metric].agg(["mean", "count"])
            if stats.empty:
                continue
            name = f"{scheme}, {volume * 1000:g} Mb per flow"
            figure.add_trace(go.Scatter(
                x=stats.index, y=stats["mean"], mode="lines+markers", name=name, legendgroup=str(scheme),
                line={"color": color(k), "width": 2, "dash": DASHES[d % len(DASHES)]}, marker={"color": color(k)},
                customdata=stats["count"].to_numpy(),
                hovertemplate="%{x} slots: %{y:.4g} (mean of %{customdata} seeds)<extra>" + name + "</extra>",
            ))
    slots = sorted(table["slots"].unique())
    figure.update_xaxes(title_text="container slots per machine", type="log", tickmode="array", tickvals=slots,
                        ticktext=[f"{v:g}" for v in slots])
    figure.update_yaxes(title_text=METRIC_LABELS.get(metric, metric))
    return _layout(figure, f"{METRIC_LABELS.get(metric, metric)} over slots and data volume")


def calibration_bars(table: pd.DataFrame, metric: str) -> go.Figure:
    """One bar per setting, best fit first (:func:`sched_engine.sweeps.calibrate.rank`); the reference is grey."""
    ranked = rank(table)
    labels = [f"#{r.rank} {r.estimates}, {r.allocation}, prio {'on' if r.priorities else 'off'}, "
              f"limit {int(r.running_jobs_limit) or 'none'}"
              + (f"/{int(r.cpus_limit)} CPUs" if getattr(r, "cpus_limit", 0) else "")
              + (f", on {r.capacity}" if getattr(r, "capacity", "hardware") != "hardware" else "")
              for r in ranked.itertuples()]
    colors = ["#9e9e9e" if reference else color(0) for reference in ranked["reference"]]
    figure = go.Figure(go.Bar(x=ranked[metric], y=labels, orientation="h", marker_color=colors,
                              hovertemplate="%{y}<br>%{x:.4g}<extra></extra>"))
    figure.update_yaxes(autorange="reversed")
    figure.update_xaxes(title_text=METRIC_LABELS.get(metric, metric))
    return _layout(figure, f"{METRIC_LABELS.get(metric, metric)} per setting (grey: the reference)",
                   showlegend=False)


def sweep_figure(kind: str, table: pd.DataFrame, metric: str | None = None) -> go.Figure:
    """The kind's plot of ``table``; ``metric`` defaults to the kind's first."""
    metrics = KIND_METRICS.get(kind)
    if not metrics:
        return empty_figure("Run a sweep to see its plot.", 260)
    metric = metric if metric in metrics else metrics[0]
    if kind == "elastic-fig6":
        return elastic_ratios(table, metric)
    if kind == "batch-ls-seeds":
        return seed_scatter(table, metric)
    if kind == "libra-sensitivity":
        return sensitivity_lines(table, metric)
    if kind == "calibrate":
        return calibration_bars(table, metric)
    return interval_lines(table, metric)
