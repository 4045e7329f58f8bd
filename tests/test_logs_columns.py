"""A reader's columns, grown in segments: the rows come back as appended, whatever the segments' bounds."""

from __future__ import annotations

import numpy as np

from sched_engine.logs import columns as columns_module
from sched_engine.logs.columns import Columns


def test_blocks_across_segments_come_back_whole_kinds_widened_and_late_columns_nan(monkeypatch):
    monkeypatch.setattr(columns_module, "SEGMENT", 4)
    table = Columns()
    table.append({"n": np.arange(3), "id": np.array([b"a", b"bb", b"c"])}, 3)
    table.append({"n": np.arange(3, 10), "id": np.array([b"d"] * 7), "x": np.ones(7)}, 7)   # x starts late
    table.append({"n": np.arange(10, 10), "id": np.zeros(0, dtype="S1"), "x": np.zeros(0)}, 0)
    table.append({"n": np.array([10.5]), "id": np.array([b"longer"])}, 1)                   # x missing: NaN
    out = table.result(names=("never",))
    assert out["n"].tolist() == [*range(10), 10.5] and out["n"].dtype == float
    assert out["id"].tolist() == [b"a", b"bb", b"c", *[b"d"] * 7, b"longer"]
    assert np.isnan(out["x"][:3]).all() and out["x"][3:10].tolist() == [1.0] * 7 and np.isnan(out["x"][10])
    assert np.isnan(out["never"]).all() and len(out["never"]) == 11
    assert table.arrays == {}


def test_an_empty_block_keeps_its_kind():
    table = Columns()
    table.append({"codes": np.zeros(0, dtype=np.uint16)}, 0)
    codes = table.result()["codes"]
    assert codes.dtype == np.uint16 and codes.size == 0


def test_float32_only_where_every_value_is_exact_and_a_wider_block_widens_the_column_exactly():
    from sched_engine.logs.columns import exact_float32

    assert exact_float32(np.array([1.0, 64.0, np.nan, 3600.0])).dtype == np.float32
    precise = np.array([4096 / 3, 1.0])
    assert exact_float32(precise) is precise
    table = Columns()
    table.append({"v": exact_float32(np.array([2.0, np.nan]))}, 2)
    table.append({"v": exact_float32(precise)}, 2)
    out = table.result()["v"]
    assert out.dtype == np.float64 and out[0] == 2.0 and np.isnan(out[1]) and out[2:].tolist() == precise.tolist()


def test_epoch_seconds_held_as_uint32_codes_come_back_with_no_time_and_before_1970_told_apart():
    from sched_engine.logs.columns import epoch_codes, epoch_seconds

    seconds = np.array([0.0, 1_709_283_600.0, np.nan, -86400.0, 2**32 - 3.0])
    codes = epoch_codes(seconds)
    assert codes.dtype == np.uint32
    back = epoch_seconds(codes)
    assert back[[0, 1, 4]].tolist() == [0.0, 1_709_283_600.0, 2**32 - 3.0] and np.isnan(back[2]) and back[3] == -1.0


def test_rows_keyed_twice_are_found_without_sorting_the_others(monkeypatch):
    from sched_engine.logs import keys

    monkeypatch.setattr(keys, "SEGMENT", 3)   # the lookup a few rows at a time
    key = np.array([5, 9, 5, 1, 7, 9, 9, 2], dtype=np.uint64)
    assert keys.keyed_twice(key).tolist() == [0, 1, 2, 5, 6]
    assert keys.keyed_twice(np.arange(6, dtype=np.uint64)).tolist() == []
    assert keys.keyed_twice(np.zeros(0, dtype=np.uint64)).tolist() == []
    # Keys sharing only their low 32 bits are candidates; repeated_keys tells them apart.
    shared = np.array([1, 1 + (1 << 32), 3], dtype=np.uint64)
    assert keys.keyed_twice(shared).tolist() == [0, 1]
    assert not keys.repeated_keys(shared, np.array([b"a", b"b", b"c"])).any()
