"""The batch page's machines × time chart: each job's bars, or a density picture at any run size.

Clusters are stacked top-down, one row per machine; time is in hours since
the first submission and a window is a pair of seconds ``(start, end)`` or
``None`` for the whole run. Up to :data:`GANTT_MAX_JOBS` jobs and
:data:`GANTT_MAX_BARS` bars the chart draws every job; beyond, a density
picture of the busy share of CPU time per (machines, time) cell, whose size
does not grow with the run. The page asks again for a narrower window on
zoom, which brings the jobs back one by one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.compute as pc

from .batch import HOUR, window_range
from .common import empty_figure

#: Jobs in a window at most for the per-job Gantt; beyond, it is a density picture.
GANTT_MAX_JOBS = 1500
#: Bars at most (one per (job, machine) and per down interval); beyond, a density picture.
GANTT_MAX_BARS = 6000
#: Rows (binned machines, about) and columns (time bins) of the density picture.
DENSITY_ROWS = 300
DENSITY_COLUMNS = 600
#: The jobs columns the Gantt draws from.
RAN_COLUMNS = ("job_id", "status", "cluster", "procs", "start_time", "end_time", "machines")


def _arrow(texts: pd.Series) -> pa.Array:
    """A string column as an Arrow array (no copy when pandas already keeps it in Arrow)."""
    return pa.array(texts.astype("string").array)


def held_machines(machines: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(machine index per entry, entries per job)`` of ``machines`` strings (``"0,1,2,7"``, none empty).

    Vectorised in Arrow (split, flatten, cast): the ~2 million entries of a
    450,000-job trace take about a tenth of a second.
    """
    lists = pc.split_pattern(_arrow(machines), ",")
    flat = pc.cast(pc.list_flatten(lists), pa.int64()).to_numpy(zero_copy_only=False)
    counts = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    return flat.astype(np.int64, copy=False), counts.astype(np.int64, copy=False)


def cluster_machines(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, int]:
    """Per cluster, in order of appearance, the machines the run shows: one more than the highest index used.

    Used by any job or failure of the run. A job lists its machines in
    ascending order, so its last one is its highest (read by one regular
    expression over the column; jobs that never ran have none).
    """
    last = pc.struct_field(pc.extract_regex(_arrow(jobs["machines"]), r"(?P<last>[0-9]+)$"), [0])
    last = pd.Series(pc.cast(last, pa.int64()).to_numpy(zero_copy_only=False), index=jobs.index, dtype=float)
    highest = {str(cluster): int(top)
               for cluster, top in last.groupby(jobs["cluster"], sort=False).max().dropna().items()}
    for entity in timeline.loc[timeline["metric"] == "machine_down", "entity"].unique():
        cluster, _, machine = str(entity).rpartition("/")
        highest[cluster] = max(highest.get(cluster, 0), int(machine))
    return {cluster: top + 1 for cluster, top in highest.items()}


def machine_rows(jobs: pd.DataFrame, timeline: pd.DataFrame) -> dict[str, int]:
    """First y row of each cluster's machines: clusters stacked in order of appearance, a gap between."""
    return _first_rows(cluster_machines(jobs, timeline))


def _first_rows(sizes: dict[str, int]) -> dict[str, int]:
    offsets, offset = {}, 0
    for cluster, machines in sizes.items():
        offsets[cluster] = offset
        offset += machines + 1
    return offsets


def down_intervals(timeline: pd.DataFrame, end: float) -> pd.DataFrame:
    """``cluster, machine, start, end`` of every interval a machine was down (open ones end at ``end``).

    A machine's ``machine_down`` rows, in time order, switch it down (value
    > 0; repeats change nothing) or up (0): each switch down pairs with the
    machine's next switch, if any. Vectorised over all machines.
    """
    rows = timeline[timeline["metric"] == "machine_down"]
    if rows.empty:
        return pd.DataFrame({"cluster": pd.Series([], dtype=object), "machine": np.zeros(0, dtype=np.int64),
                             "start": np.zeros(0), "end": np.zeros(0)})
    codes, entities = pd.factorize(rows["entity"])
    times = rows["time"].to_numpy(dtype=float)
    order = np.lexsort((times, codes))
    codes, times, down = codes[order], times[order], rows["value"].to_numpy(dtype=float)[order] > 0
    was_down = np.r_[False, down[:-1]] & np.r_[False, codes[1:] == codes[:-1]]
    switches = np.flatnonzero(down != was_down)
    switch_down = down[switches]
    same_machine_next = np.r_[codes[switches[1:]] == codes[switches[:-1]], False]
    next_time = times[np.r_[switches[1:], switches[:1]]]   # the last one's is never used
    starts = times[switches][switch_down]
    stops = np.where(same_machine_next[switch_down], next_time[switch_down], np.maximum(end, starts))
    split = [str(entity).rpartition("/") for entity in entities]
    cluster_of = np.array([cluster for cluster, _, _ in split], dtype=object)
    machine_of = np.array([int(machine) for _, _, machine in split], dtype=np.int64)
    which = codes[switches][switch_down]
    return pd.DataFrame({"cluster": cluster_of[which], "machine": machine_of[which], "start": starts, "end": stops})


def jobs_that_ran(jobs: pd.DataFrame, window=None) -> pd.DataFrame:
    """The jobs that held machines (completed or killed, for a positive time) overlapping the window.

    Only the columns the Gantt draws from, so a large frame is not copied whole.
    """
    start = jobs["start_time"].to_numpy(dtype=float)
    stop = jobs["end_time"].to_numpy(dtype=float)
    keep = jobs["status"].isin(["finished", "killed"]).to_numpy(dtype=bool, na_value=False) & (stop > start)
    if window:
        keep &= (stop >= window[0]) & (start <= window[1])
    return jobs.loc[keep, [*RAN_COLUMNS, *(c for c in OWNER_COLUMNS if c in jobs.columns)]]


def gantt(jobs: pd.DataFrame, timeline: pd.DataFrame, window=None, highlight: str | None = None) -> go.Figure:
    """Machines × time for the window: each job, or a density picture when the window holds too many.

    Clusters are stacked top-down in order of appearance, one row per
    machine, their names on the y axis. Up to :data:`GANTT_MAX_JOBS` jobs
    and :data:`GANTT_MAX_BARS` bars (a bar per (job, machine) and per
    down interval): each job on every machine it held, killed jobs red
    with a cross at their end, ``highlight`` outlined, down machines shaded.
    Beyond that, a density picture (:func:`_add_density`) of at most about
    :data:`DENSITY_ROWS` × :data:`DENSITY_COLUMNS` cells, whatever the
    run's size; zooming in brings back each job.
    """
    end = float(jobs["end_time"].max()) if len(jobs) else 0.0
    low, high = window if window else (0.0, end)
    ran = jobs_that_ran(jobs, window)
    # Failures outside the run (the failure trace may be longer) are clipped to it.
    down = down_intervals(timeline, end)
    down = down.assign(start=down["start"].clip(lower=0.0), end=down["end"].clip(upper=end))
    down = down[(down["end"] > max(low, 0.0)) & (down["start"] < min(high, end))]
    if ran.empty and down.empty:
        return empty_figure("No jobs ran in this window." if window else "No run selected.", 420)
    sizes = cluster_machines(jobs, timeline)
    offsets = _first_rows(sizes)
    machines, counts = held_machines(ran["machines"])
    figure = go.Figure()
    if len(ran) > GANTT_MAX_JOBS or len(machines) + len(down) > GANTT_MAX_BARS:
        first = max(low, 0.0)
        _add_density(figure, ran, machines, counts, down, sizes, timeline, (first, max(min(high, end), first + 1.0)))
        # Short enough to stay clear of the mode bar on a 1024-px screen (it shows at the top right on hover).
        title = (f"Machines × time: share busy, density picture of {len(ran):,} jobs (zoom in for each)"
                 + ("; red: machines down" if not down.empty else ""))
    else:
        _add_down_bars(figure, down, offsets)
        _add_job_bars(figure, ran, machines, counts, offsets, highlight)
        key = colour_key(ran)
        title = ("Machines × time" + (f"; colour: {key}" if key else "")
                 + ("; shaded: machine down" if not down.empty else ""))
    figure.update_layout(
        title=title, height=460, template="plotly_white", barmode="overlay", uirevision="batch-time",
        xaxis={"title": "hours since first submission", "range": window_range(window)},
        yaxis={**dict(zip(("tickvals", "ticktext"), cluster_ticks(sizes, offsets))),
               "title": "cluster, machine", "autorange": "reversed", "zeroline": False},
        margin={"l": 90, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2},
    )
    return figure


#: Rows of the Gantt's plot area per cluster label, at least (about 16 px each on its 460-px chart).
LABEL_SPACING = 1 / 24


def cluster_ticks(sizes: dict[str, int], offsets: dict[str, int]) -> tuple[list[float], list[str]]:
    """``(positions, names)`` of the cluster labels on the Gantt's machine axis, none overlapping.

    A label sits at the middle of its cluster's rows. Going down the axis, a
    cluster is labelled when its middle is at least :data:`LABEL_SPACING` of
    the axis below the last label; the larger clusters are placed first, so
    a run of one-machine clusters gives way to its large neighbours (every
    bar's hover still names its cluster).
    """
    total = max(1, sum(sizes.values()) + len(sizes) - 1)
    middles = {cluster: offsets[cluster] + (sizes[cluster] - 1) / 2 for cluster in sizes}
    kept: list[str] = []
    for cluster in sorted(sizes, key=lambda c: (-sizes[c], offsets[c])):
        if all(abs(middles[cluster] - middles[other]) >= LABEL_SPACING * total for other in kept):
            kept.append(cluster)
    kept.sort(key=lambda c: offsets[c])
    return [middles[c] for c in kept], kept


def _add_down_bars(figure: go.Figure, down: pd.DataFrame, offsets: dict[str, int]) -> None:
    """One shaded bar per interval a machine was down."""
    if down.empty:
        return
    figure.add_trace(go.Bar(
        base=down["start"] / HOUR, x=(down["end"] - down["start"]) / HOUR,
        y=down["cluster"].map(offsets) + down["machine"], orientation="h", width=1.0, name="machine down",
        marker={"color": "rgba(214,39,40,0.18)", "line": {"width": 0}},
        customdata=np.stack([down["cluster"], down["machine"], down["start"], down["end"]], axis=1),
        hovertemplate="%{customdata[0]} machine %{customdata[1]} down<br>"
                      "%{customdata[2]:.0f} s → %{customdata[3]:.0f} s<extra></extra>",
    ))


def _add_job_bars(figure: go.Figure, ran: pd.DataFrame, machines, counts, offsets, highlight) -> None:
    """One bar per (job, machine) it held; killed jobs red with a cross at their end; the highlight outlined."""
    held = ran.iloc[np.repeat(np.arange(len(ran)), counts)].reset_index(drop=True).assign(machine=machines)
    y = held["cluster"].map(offsets) + held["machine"]
    key = colour_key(held)
    for status, color in (("finished", "#4c78a8"), ("killed", "#d62728")):
        part = held[held["status"] == status]
        if part.empty:
            continue
        owner = part[key].astype(str) if key else pd.Series("", index=part.index)
        # Finished jobs take their user's (or group's) colour; every bar is outlined, so neighbours stay apart.
        colours = job_colours(owner, held[key].astype(str)) if key and status == "finished" else color
        figure.add_trace(go.Bar(
            base=part["start_time"] / HOUR, x=(part["end_time"] - part["start_time"]) / HOUR, y=y[part.index],
            orientation="h", width=0.8, name=status, marker={"color": colours, "line": {"width": 0.7, "color": "white"}},
            customdata=np.stack([part["job_id"], part["procs"], part["cluster"], part["machine"],
                                 part["start_time"], part["end_time"], owner], axis=1),
            hovertemplate="job %{customdata[0]} (%{customdata[1]} CPUs) on %{customdata[2]} machine "
                          "%{customdata[3]}<br>%{customdata[4]:.0f} s → %{customdata[5]:.0f} s"
                          + (f"<br>{key} %{{customdata[6]}}" if key else "") + "<extra>" + status + "</extra>",
        ))
    killed = held[held["status"] == "killed"]
    if not killed.empty:
        figure.add_trace(go.Scatter(
            x=killed["end_time"] / HOUR, y=y[killed.index], mode="markers", name="killed at",
            marker={"symbol": "x", "color": "#7f0000", "size": 9}, hoverinfo="skip",
        ))
    if highlight is not None and (held["job_id"] == highlight).any():
        rows = held[held["job_id"] == highlight]
        figure.add_trace(go.Bar(
            base=rows["start_time"] / HOUR, x=(rows["end_time"] - rows["start_time"]) / HOUR, y=y[rows.index],
            orientation="h", width=0.8, name=f"job {highlight}", hoverinfo="skip",
            marker={"color": "rgba(0,0,0,0)", "line": {"color": "#ffbf00", "width": 3}},
        ))


#: The colours of the users (or groups) in the per-job chart, in the order of their names; more wrap around.
OWNER_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#72b7b2", "#eeca3b", "#9d755d", "#bab0ac",
                 "#ff9da6", "#439894")


#: The columns a job's colour may come from, in order of preference (see :func:`colour_key`).
OWNER_COLUMNS = ("group", "user")


def colour_key(jobs: pd.DataFrame) -> str | None:
    """What the per-job chart colours by: the group where the log names more than one, else the user, else none."""
    for column in OWNER_COLUMNS:
        if column in jobs.columns and jobs[column].dropna().astype(str).replace("", np.nan).nunique() > 1:
            return column
    return None


def job_colours(owners: pd.Series, every: pd.Series) -> list[str]:
    """Each job's colour: its owner's place among all the owners shown (``every``), so one owner keeps one colour."""
    order = {name: index for index, name in enumerate(sorted(set(every)))}
    return [OWNER_COLOURS[order[name] % len(OWNER_COLOURS)] for name in owners]


def occupancy(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, cpus: np.ndarray, row_count: int,
              low: float, high: float, columns: int) -> np.ndarray:
    """Busy CPU-seconds per (row, time bin): ``sum over entries of cpus × |[start, end) ∩ bin|``.

    The window ``[low, high)`` is cut into ``columns`` equal bins. An entry
    adds its partial first and last bins directly and its whole bins in
    between through a difference array along time, so the cost is linear in
    the entries, whatever their length.
    """
    width = (high - low) / columns
    start = np.clip(starts, low, high)
    end = np.clip(ends, low, high)
    keep = end > start
    rows, start, end, cpus = rows[keep], start[keep], end[keep], cpus[keep]
    first = np.minimum(((start - low) / width).astype(np.int64), columns - 1)
    last = np.minimum(((end - low) / width).astype(np.int64), columns - 1)
    cells = row_count * columns
    one_bin = first == last
    busy = np.zeros(cells)   # (bincount of nothing is integer: accumulate into floats)
    busy += np.bincount(rows[one_bin] * columns + first[one_bin], cpus[one_bin] * (end - start)[one_bin], cells)
    spans = ~one_bin
    r, f, la, c = rows[spans], first[spans], last[spans], cpus[spans]
    busy += np.bincount(r * columns + f, c * (low + (f + 1) * width - start[spans]), cells)
    busy += np.bincount(r * columns + la, c * (end[spans] - (low + la * width)), cells)
    whole = np.zeros(row_count * (columns + 1))
    whole += np.bincount(r * (columns + 1) + f + 1, c * width, row_count * (columns + 1))
    whole -= np.bincount(r * (columns + 1) + la, c * width, row_count * (columns + 1))
    busy += np.cumsum(whole.reshape(row_count, columns + 1), axis=1)[:, :columns].ravel()
    return busy.reshape(row_count, columns)


def density_rows(sizes: dict[str, int], budget: int) -> dict[str, int]:
    """Rows of the density picture per cluster: a row per machine if all fit in ``budget``, else
    ``max(1, budget × machines // all machines)`` rows, each holding equally many machines (±1)."""
    total = sum(sizes.values())
    if total <= budget:
        return dict(sizes)
    return {cluster: max(1, budget * machines // total) for cluster, machines in sizes.items()}


def _machine_row(clusters: pd.Series, machine: np.ndarray, sizes: dict[str, int], rows: dict[str, int],
                 repeat: np.ndarray | None = None) -> np.ndarray:
    """Density row of each machine: its cluster's first row + ``m·k // n`` (``k`` rows for ``n`` machines).

    ``clusters`` names one cluster per ``repeat`` entries of ``machine`` (one each without ``repeat``).
    """
    code = pd.Categorical(clusters, categories=list(sizes)).codes.astype(np.int64)
    code = code if repeat is None else np.repeat(code, repeat)
    rows_of = np.array(list(rows.values()), dtype=np.int64)
    first_row = np.r_[0, np.cumsum(rows_of)[:-1]]
    return first_row[code] + machine * rows_of[code] // np.array(list(sizes.values()), dtype=np.int64)[code]


def busy_cpu_seconds(ran: pd.DataFrame, machines, counts, sizes: dict[str, int], rows: dict[str, int],
                     span: tuple[float, float], columns: int) -> np.ndarray:
    """Busy CPU-seconds per (density row, time bin) of ``span``: :func:`occupancy` of every (job, machine).

    A job counts ``procs / machines listed`` CPUs on each machine it held.
    Its machines are listed in ascending order, so those falling in one
    row are consecutive and add up to one entry: the work follows the
    (job, row) pairs, not the millions of (job, machine) pairs.
    """
    job = np.repeat(np.arange(len(ran)), counts)
    row = _machine_row(ran["cluster"], machines, sizes, rows, counts)
    at = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (job[1:] != job[:-1])])
    job = job[at]
    cpus = np.diff(np.r_[at, len(row)]) * ran["procs"].to_numpy(dtype=float)[job] / counts[job]
    starts = ran["start_time"].to_numpy(dtype=float)[job]
    ends = ran["end_time"].to_numpy(dtype=float)[job]
    return occupancy(row[at], starts, ends, cpus, sum(rows.values()), span[0], span[1], columns)


def _add_density(figure: go.Figure, ran: pd.DataFrame, machines, counts, down: pd.DataFrame,
                 sizes: dict[str, int], timeline: pd.DataFrame, span: tuple[float, float]) -> None:
    """The density picture of :func:`gantt`: a heatmap per cluster, machines binned to rows, ``span`` to columns.

    A cell holds the busy share of its CPU time in whole percent,
    ``busy CPU-seconds / (machines × CPUs per machine × bin seconds)``
    (:func:`busy_cpu_seconds`), a machine having its cluster's CPUs (largest
    ``up_cpus``) over the cluster's machines. Down time is a red layer on
    top, as opaque as the share of the cell's machine-seconds spent down.
    """
    rows = density_rows(sizes, DENSITY_ROWS)
    bin_seconds = (span[1] - span[0]) / DENSITY_COLUMNS
    up = timeline[timeline["metric"] == "up_cpus"].groupby("entity")["value"].max()
    per_machine = [float(up.get(cluster, machines)) / machines for cluster, machines in sizes.items()]
    machines_in_row = np.concatenate([np.bincount(np.arange(n) * k // n, minlength=k)
                                      for n, k in zip(sizes.values(), rows.values())])
    capacity = (np.repeat(per_machine, list(rows.values())) * machines_in_row * bin_seconds)[:, None]
    busy = busy_cpu_seconds(ran, machines, counts, sizes, rows, span, DENSITY_COLUMNS)
    layers = [("busy", np.divide(busy, capacity, out=np.zeros_like(busy), where=capacity > 0))]
    if not down.empty:
        lost = occupancy(_machine_row(down["cluster"], down["machine"].to_numpy(), sizes, rows),
                         down["start"].to_numpy(dtype=float), down["end"].to_numpy(dtype=float), np.ones(len(down)),
                         sum(rows.values()), span[0], span[1], DENSITY_COLUMNS)
        layers.append(("down", lost / (machines_in_row * bin_seconds)[:, None]))
    x = (span[0] + np.arange(DENSITY_COLUMNS + 1) * bin_seconds) / HOUR
    offsets = _first_rows(sizes)
    for layer, share in layers:
        percent = np.rint(np.clip(share, 0.0, 1.0) * 100).astype(np.uint8)
        first = 0
        for cluster, k in rows.items():
            # Row edges at the first machine of each row (half a machine above it).
            edges = offsets[cluster] - 0.5 - (-np.arange(k + 1) * sizes[cluster] // k)
            figure.add_trace(go.Heatmap(
                x=x, y=edges, z=percent[first:first + k], name=f"{cluster} {layer}",
                coloraxis="coloraxis" if layer == "busy" else "coloraxis2",
                hoverinfo="skip" if layer == "down" else None,
                hovertemplate=None if layer == "down" else
                f"{cluster}<br>%{{x:.1f}} h: %{{z}}% of CPU time in use<extra></extra>",
            ))
            first += k
    figure.update_layout(
        coloraxis={"colorscale": "Blues", "cmin": 0, "cmax": 100,
                   "colorbar": {"title": {"text": "busy"}, "ticksuffix": "%", "len": 0.8}},
        coloraxis2={"colorscale": [[0, "rgba(214,39,40,0)"], [1, "rgba(214,39,40,0.8)"]], "cmin": 0, "cmax": 100,
                    "showscale": False},
    )
