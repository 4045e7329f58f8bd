"""Large frames as CSV, compiled: the bytes Arrow's writer makes, several times faster, for the frames that
run to tens of millions of rows (a run's reasons: full RICC under Conservative, 59.6 M rows, 2.7 GB).

A frame qualifies when every column is either text codes (categorical over
strings; a missing value is an empty field) or whole numbers (integers, or
floats that are all whole, below 1e10 in magnitude, never a negative zero,
none missing). Its text is then what ``pyarrow.csv.write_csv`` writes with
``quoting_style="needed"`` (:func:`.result.write_frame_csv`): a header of
quoted column names, every text value quoted with its quotes doubled, numbers
bare, fields joined by ``,``, rows ended by ``\\n``, in UTF-8.
``tests/test_csv_rows.py`` holds the two writers to the same bytes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from .result import whole_numbers

NUMBER, TEXT = 0, 1
CHECK_ROWS = 1 << 20   # floats checked this many at a time (a column's temporaries stay small)


def quoted(text: str) -> bytes:
    return ('"' + text.replace('"', '""') + '"').encode("utf-8")


class Plan:
    """How each column of a qualifying frame is written: its kind, and for text its categories' bytes."""

    def __init__(self, frame: pd.DataFrame):
        self.kinds = np.empty(frame.shape[1], dtype=np.int8)
        blobs, offsets = [], [np.zeros(1, dtype=np.int64)]
        self.bases = np.zeros(frame.shape[1], dtype=np.int64)   # per column: its first category's piece
        widths, pieces, size = [], 0, 0
        for index, (_, column) in enumerate(frame.items()):
            if isinstance(column.dtype, pd.CategoricalDtype):
                self.kinds[index] = TEXT
                self.bases[index] = pieces
                blob, ends = _quoted_all(column.cat.categories)
                blobs.append(blob)
                offsets.append(ends + size)
                widths.append(int(np.diff(ends, prepend=0).max(initial=0)))
                pieces, size = pieces + len(ends), size + len(blob)
            else:
                self.kinds[index] = NUMBER
                widths.append(20)   # int64: up to 19 digits and a sign
        self.blob = np.frombuffer(b"".join(blobs) or b"\0", dtype=np.uint8)
        self.offsets = np.concatenate(offsets)
        self.row_bytes = sum(widths) + len(widths)   # the fields, the commas and the end of the row
        self.header = b",".join(quoted(str(name)) for name in frame.columns) + b"\n"


def _quoted_all(names: pd.Index) -> tuple[bytes, np.ndarray]:
    """Every name quoted (its quotes doubled), in UTF-8, end to end, and where each ends: through Arrow, not
    name by name (a run's job ids: hundreds of thousands)."""
    text = pa.array(names.to_numpy(dtype=object), type=pa.large_string())
    quote = pa.scalar('"', type=pa.large_string())
    text = pc.binary_join_element_wise(quote, pc.replace_substring(text, '"', '""'), quote,
                                       pa.scalar("", type=pa.large_string()))
    _, ends, data = text.buffers()
    ends = np.frombuffer(ends, dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    return data.to_pybytes()[ends[0]:ends[-1]] if len(text) else b"", ends[1:] - ends[0]


def _whole(values: np.ndarray) -> bool:
    """None missing, and all whole numbers Arrow writes as integers (:func:`.result.whole_numbers`)."""
    return not np.isnan(values).any() and whole_numbers(values)


def plan(frame: pd.DataFrame) -> Plan | None:
    """A :class:`Plan` for ``frame``, or None if a column does not qualify (see the module docstring)."""
    for _, column in frame.items():
        dtype = column.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            if not (pd.api.types.is_string_dtype(dtype.categories.dtype)
                    and dtype.categories.inferred_type in ("string", "empty")):
                return None
        elif isinstance(dtype, np.dtype) and dtype.kind in "iu":
            values = column.to_numpy()
            if len(values) and (values.max() > np.iinfo(np.int64).max if dtype.kind == "u"
                                else values.min() == np.iinfo(np.int64).min):   # no positive twin to write
                return None
        elif dtype == np.float64:
            values = column.to_numpy()
            if not all(_whole(values[at:at + CHECK_ROWS]) for at in range(0, len(values), CHECK_ROWS)):
                return None
        else:
            return None
    return Plan(frame)


def write(frame: pd.DataFrame, found: Plan, sink, slice_rows: int) -> None:
    """Write ``frame`` (qualifying, planned as ``found``) to the binary ``sink``, ``slice_rows`` rows at a time."""
    sink.write(found.header)
    columns = [column.array.codes if kind == TEXT else column.to_numpy()   # views, not copies
               for kind, (_, column) in zip(found.kinds, frame.items())]
    values = np.empty((len(columns), min(slice_rows, len(frame))), dtype=np.int64)
    out = np.empty(found.row_bytes * values.shape[1], dtype=np.uint8)
    for offset in range(0, len(frame), slice_rows):
        rows = min(slice_rows, len(frame) - offset)
        for index, column in enumerate(columns):
            values[index, :rows] = column[offset:offset + rows]   # codes and whole floats to int64
        written = _render(values, rows, found.kinds, found.blob, found.offsets, found.bases, out)
        sink.write(memoryview(out)[:written])


@njit(cache=True)
def _render(values, rows, kinds, blob, offsets, bases, out):
    """Rows ``0 .. rows`` of ``values`` (column by row: numbers, or category codes with -1 for missing) as
    CSV bytes in ``out``; returns how many."""
    digits = np.empty(20, dtype=np.uint8)
    at = 0
    columns = values.shape[0]
    for row in range(rows):
        for column in range(columns):
            if column:
                out[at] = 44   # ,
                at += 1
            value = values[column, row]
            if kinds[column] == 1:
                if value >= 0:
                    piece = bases[column] + value
                    for k in range(offsets[piece], offsets[piece + 1]):
                        out[at] = blob[k]
                        at += 1
            else:
                if value < 0:
                    out[at] = 45   # -
                    at += 1
                    value = -value
                count = 0
                while True:
                    digits[count] = 48 + value % 10
                    count += 1
                    value //= 10
                    if value == 0:
                        break
                for k in range(count - 1, -1, -1):
                    out[at] = digits[k]
                    at += 1
        out[at] = 10   # \n
        at += 1
    return at
