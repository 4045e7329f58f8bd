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
