"""The one window_from_relayout (components/widgets/time_window.py): every relayoutData shape, by hand."""

from __future__ import annotations

import pytest
from dash import no_update

from components.widgets.time_window import window_from_relayout


@pytest.mark.parametrize("relayout, expected", [
    ({"xaxis.range[0]": 1, "xaxis.range[1]": 2.5}, [1.0, 2.5]),          # a zoom on the first x axis
    ({"xaxis3.range[0]": 0.5, "xaxis3.range[1]": 1}, [0.5, 1.0]),         # on a subplot's x axis
    ({"xaxis.range": [5, 7]}, [5.0, 7.0]),                                # a range set as a whole
    ({"xaxis2.range": (5, 7)}, [5.0, 7.0]),
    ({"xaxis.range[0]": 1.26, "xaxis.range[1]": 2.04}, [1.3, 2.0]),       # 0.1 s by default
])
def test_a_zoom_or_pan_on_any_x_axis_sets_the_window(relayout, expected):
    assert window_from_relayout(relayout, None) == expected


@pytest.mark.parametrize("relayout", [
    {"autosize": True},                                  # a chart drawn or resized
    {"yaxis.range[0]": 1, "yaxis.range[1]": 2},          # a zoom on a y axis only
    {"yaxis.autorange": True},                           # a y axis reset
    {"dragmode": "pan"},
    {"xaxis.range[0]": 1},                               # one end without the other
    {"xaxis.range[0]": 1, "xaxis2.range[1]": 2},         # ends of two different axes
    {"xaxis.range": [1]},
    {"xaxis.autorange": False},
    {},
    None,
])
def test_what_sets_no_range_changes_nothing(relayout):
    assert window_from_relayout(relayout, [0.0, 1.0]) is no_update


def test_a_reset_shows_everything_once():
    assert window_from_relayout({"xaxis.autorange": True}, [0.0, 1.0]) is None
    assert window_from_relayout({"xaxis2.autorange": True, "yaxis2.autorange": True}, [0.0, 1.0]) is None
    assert window_from_relayout({"xaxis.autorange": True}, None) is no_update


def test_the_same_window_again_changes_nothing():
    assert window_from_relayout({"xaxis.range[0]": 1.04, "xaxis.range[1]": 2}, [1.0, 2.0]) is no_update
    assert window_from_relayout({"xaxis.range[0]": 1.04, "xaxis.range[1]": 2}, [1.1, 2.0]) == [1.0, 2.0]


def test_axis_units_and_rounding():
    assert window_from_relayout({"xaxis.range": [0.5, 1.25]}, None, unit_seconds=3600.0) == [1800.0, 4500.0]
    assert window_from_relayout({"xaxis.range": [1 / 3, 2 / 3]}, None, unit_seconds=3600.0) == [1200.0, 2400.0]
    assert window_from_relayout({"xaxis.range[0]": 0.123456, "xaxis.range[1]": 0.5}, None, decimals=4) == \
        [0.1235, 0.5]
