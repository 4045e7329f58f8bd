"""The compiled CSV writer (sched_engine/core/csv_rows.py) writes Arrow's bytes: hand-made frames and hypothesis."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.pending import REASON_DTYPE
from sched_engine.core import csv_rows, result


def arrow_bytes(frame: pd.DataFrame) -> bytes:
    """Arrow's writer as write_frame_csv calls it, whole numbers as integers (its own rule for floats)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for index, dtype in enumerate(frame.dtypes):
        if dtype == np.float64:
            table = table.set_column(index, table.field(index).with_type(pa.int64()),
                                     pa.array(frame.iloc[:, index].to_numpy().astype(np.int64)))
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink, write_options=pa_csv.WriteOptions(quoting_style="needed"))
    return sink.getvalue()


def compiled_bytes(frame: pd.DataFrame, slice_rows: int = 3) -> bytes:
    found = csv_rows.plan(frame)
    assert found is not None
    sink = io.BytesIO()
    csv_rows.write(frame, found, sink, slice_rows)
    return sink.getvalue()


def test_a_pending_frame_is_written_as_arrow_writes_it():
    names = pd.CategoricalDtype(pd.Index(["280", 'say "hi"', "a,b", "ünï", ""], dtype="str"))
    frame = pd.DataFrame({
        "job_id": pd.Categorical.from_codes([0, 1, 2, 3, 0], dtype=names),
        "from_time": [0.0, 129746.0, -5.0, 9_999_999_999.0, 12.0],
        "to_time": np.array([1, 130616, 0, 10, 13], dtype=np.int64),
        "reason": pd.Categorical.from_codes([0, 1, 2, -1, 5], dtype=REASON_DTYPE),
        "blocking_job": pd.Categorical.from_codes([4, 0, 4, 1, -1], dtype=names),
    })
    written = compiled_bytes(frame)
    assert written == arrow_bytes(frame)
    assert written.splitlines()[2] == b'"say ""hi""",129746,130616,"reservation","280"'
    assert written.splitlines()[4] == '"ünï",9999999999,10,,"say ""hi"""'.encode()


@pytest.mark.parametrize("column", [
    [0.5, 1.0],               # not whole
    [1e10, 1.0],              # Arrow may write an exponent
    [float("nan"), 1.0],      # missing
    [-0.0, 1.0],              # a negative zero
])
def test_frames_it_cannot_write_exactly_are_left_to_arrow(column):
    assert csv_rows.plan(pd.DataFrame({"x": column})) is None
    assert csv_rows.plan(pd.DataFrame({"x": pd.Series(["a", "b"], dtype="string")})) is None
    assert csv_rows.plan(pd.DataFrame({"x": np.array([np.iinfo(np.int64).min, 0])})) is None


def test_write_frame_csv_takes_it_from_its_row_threshold(tmp_path, monkeypatch):
    frame = pd.DataFrame({"job_id": pd.Categorical(["1", "2"] * 3), "value": np.arange(6.0)})
    calls = []
    monkeypatch.setattr(csv_rows, "write", lambda *args: calls.append(args) or args[2].write(b"x"))
    monkeypatch.setattr(result, "COMPILED_CSV_ROWS", 6)
    result.write_frame_csv(frame, tmp_path / "a.csv")
    monkeypatch.setattr(result, "COMPILED_CSV_ROWS", 7)
    result.write_frame_csv(frame, tmp_path / "b.csv")
    assert len(calls) == 1 and (tmp_path / "a.csv").read_bytes() == b"x"
    assert (tmp_path / "b.csv").read_bytes() == arrow_bytes(frame)


texts = st.lists(st.text(max_size=6), min_size=1, max_size=5, unique=True)


@settings(max_examples=60, deadline=None)
@given(names=texts, data=st.data(), rows=st.integers(0, 12), slice_rows=st.integers(1, 5))
def test_random_frames_are_written_as_arrow_writes_them(names, data, rows, slice_rows):
    dtype = pd.CategoricalDtype(pd.Index(names, dtype="str"))
    codes = data.draw(st.lists(st.integers(-1, len(names) - 1), min_size=rows, max_size=rows))
    whole = data.draw(st.lists(st.integers(-10**9, 10**9), min_size=rows, max_size=rows))
    ints = data.draw(st.lists(st.integers(-2**62, 2**62), min_size=rows, max_size=rows))
    frame = pd.DataFrame({"text": pd.Categorical.from_codes(codes, dtype=dtype),
                          "whole": np.array(whole, dtype=float), "int": np.array(ints, dtype=np.int64)})
    assert compiled_bytes(frame, slice_rows) == arrow_bytes(frame)
