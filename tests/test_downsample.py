"""Bounded chart data (components/figures/downsample.py): M4 reduction of step series and quantile CDFs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from components.figures.downsample import ecdf_points, m4_indices, step_points


def test_m4_keeps_first_last_lowest_and_highest_of_every_bin():
    times = np.arange(12, dtype=float)
    values = np.array([5, 1, 9, 4, 7, 7, 2, 8, 3, 6, 0, 5], dtype=float)
    # Three bins of four samples: [0..3], [4..7], [8..11].
    keep = m4_indices(times, values, 0.0, 12.0, 3)
    assert keep.tolist() == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11]


def test_a_series_within_budget_comes_back_whole():
    times, values = np.arange(10.0), np.arange(10.0) % 3
    got_t, got_v = step_points(times, values, bins=5)
    assert got_t.tolist() == times.tolist() and got_v.tolist() == values.tolist()


def test_a_window_starts_with_the_value_in_force_and_reaches_past_its_end():
    times = np.array([0.0, 10.0, 20.0, 30.0])
    values = np.array([1.0, 2.0, 3.0, 4.0])
    got_t, got_v = step_points(times, values, window=(15.0, 25.0))
    assert got_t.tolist() == [15.0, 20.0, 30.0] and got_v.tolist() == [2.0, 3.0, 4.0]


def test_a_long_series_is_bounded():
    rng = np.random.default_rng(3)
    times = np.sort(rng.random(200_000) * 1e6)
    got_t, _ = step_points(times, rng.random(200_000), bins=100)
    assert len(got_t) <= 4 * 100 + 2


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1000, allow_nan=False), st.integers(-50, 50)), min_size=1, max_size=300),
       st.floats(0, 1000, allow_nan=False), st.floats(0, 1000, allow_nan=False), st.integers(1, 8))
def test_the_reduced_series_spans_the_same_values_over_a_window(rows, a, b, bins):
    """Over the window, the values drawn are exactly the values the full step function takes there."""
    rows.sort(key=lambda row: row[0])
    times = np.array([t for t, _ in rows])
    values = np.array([v for _, v in rows], dtype=float)
    low, high = min(a, b), max(a, b)
    got_t, got_v = step_points(times, values, window=(low, high), bins=bins)
    inside = (times > low) & (times <= high)
    before = times <= low
    taken = set(values[inside].tolist()) | ({values[before][-1]} if before.any() else set())
    drawn = set(got_v[got_t <= high].tolist())
    if taken:
        assert min(drawn) == min(taken) and max(drawn) == max(taken)


def test_the_cdf_counts_ties_and_keeps_the_extremes():
    x, share = ecdf_points([3, 1, 1, 2])
    assert x.tolist() == [1, 1, 2, 3] and share.tolist() == [0.5, 0.5, 0.75, 1.0]
    rng = np.random.default_rng(1)
    sample = rng.integers(0, 50, 100_000)
    x, share = ecdf_points(sample, points=200)
    assert len(x) <= 200 and x[0] == sample.min() and x[-1] == sample.max() and share[-1] == 1.0
    assert np.allclose(share, [(sample <= value).mean() for value in x])
