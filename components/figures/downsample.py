"""Bounded chart data: a few thousand points per trace, whatever the run's size.

The server sends figures, never whole result frames, so every series is
reduced here before it becomes a trace:

* :func:`step_points` -- a step function (a value holds until the next
  change, as in every ``timeline`` frame) cut to a time window and reduced
  by M4 aggregation (Jugel et al., "M4: a visualization-oriented time series
  data aggregation", VLDB 2014): the window is split into ``bins`` equal
  bins and, per bin, only the first, last, lowest and highest samples are
  kept. Minima and maxima of every bin survive, so a drawn line shows the
  same envelope as the full series at the chart's resolution. The value in
  force when the window opens is kept as a point at the window's start.
* :func:`ecdf_points` -- an empirical CDF as at most ``points`` quantiles,
  the smallest and largest value included.

Zooming asks the server again with the narrower window, which then comes at
full detail once it holds fewer samples than the budget.
"""

from __future__ import annotations

import numpy as np

#: Bins per trace of a time chart: at most 4 points each (M4).
TIME_BINS = 1000
#: Points of a drawn empirical CDF.
ECDF_POINTS = 1000


def m4_indices(times: np.ndarray, values: np.ndarray, low: float, high: float, bins: int) -> np.ndarray:
    """Indices (ascending) of the M4 samples of ``times`` (sorted) within ``[low, high]``.

    Per bin of width ``(high - low) / bins``: the first and last sample, and
    one sample of the bin's minimum and one of its maximum value.
    """
    if len(times) == 0:
        return np.zeros(0, dtype=np.int64)
    width = (high - low) / bins if high > low else 1.0
    position = np.minimum(((times - low) / width).astype(np.int64), bins - 1)
    # ``position`` is non-decreasing: each bin is a contiguous run of samples.
    starts = np.flatnonzero(np.r_[True, position[1:] != position[:-1]])
    ends = np.r_[starts[1:], len(times)] - 1
    order = np.lexsort((values, position))  # by bin, then value: a bin's minimum first, maximum last
    run_start = np.searchsorted(position[order], position[starts], side="left")
    run_end = np.searchsorted(position[order], position[starts], side="right") - 1
    keep = np.concatenate([starts, ends, order[run_start], order[run_end]])
    return np.unique(keep)


def step_points(times, values, window=None, bins: int = TIME_BINS) -> tuple[np.ndarray, np.ndarray]:
    """A step series reduced for drawing: ``(times, values)`` of at most ``4 * bins + 2`` points.

    ``times`` must be sorted. With a ``window`` ``(start, end)`` only the
    samples inside it are kept, plus the value in force at ``start`` (drawn
    from ``start``) and the first sample after ``end`` (so the line reaches
    the window's right edge). Series that already fit are returned whole.
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if window is not None and len(times):
        low, high = float(window[0]), float(window[1])
        first = int(np.searchsorted(times, low, side="right"))  # samples after ``low``
        last = int(np.searchsorted(times, high, side="right"))
        head_t = [low] if first > 0 else []
        head_v = [values[first - 1]] if first > 0 else []
        inner_t, inner_v = times[first:last], values[first:last]
        tail_t = times[last:last + 1]
        tail_v = values[last:last + 1]
    else:
        head_t, head_v, tail_t, tail_v = [], [], times[:0], values[:0]
        inner_t, inner_v = times, values
        low, high = (float(times[0]), float(times[-1])) if len(times) else (0.0, 0.0)
    if len(inner_t) > 4 * bins:
        keep = m4_indices(inner_t, inner_v, low, high, bins)
        inner_t, inner_v = inner_t[keep], inner_v[keep]
    return (np.concatenate([np.asarray(head_t, dtype=float), inner_t, tail_t]),
            np.concatenate([np.asarray(head_v, dtype=float), inner_v, tail_v]))


def ecdf_points(values, points: int = ECDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(x, share)`` of the empirical CDF ``F(x) = #{v <= x} / n``, at most ``points + 1`` points.

    Small samples come whole (every sorted value with its rank share); larger
    ones as the values at evenly spaced ranks, the first and last included,
    each with its exact share.
    """
    ordered = np.sort(np.asarray(values, dtype=float))
    count = ordered.size
    if count == 0:
        return ordered, ordered
    ranks = np.arange(count) if count <= points else np.unique(np.linspace(0, count - 1, points).round().astype(int))
    # The share at a value counts every sample equal to it (ties end at the last equal rank).
    last_equal = np.searchsorted(ordered, ordered[ranks], side="right")
    return ordered[ranks], last_equal / count
