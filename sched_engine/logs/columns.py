"""The columns a log reader fills block by block, and giving the memory they freed back to the system."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pandas as pd

#: Rows of a segment of :class:`Columns` (a float column's segment is 8 MB).
SEGMENT = 1 << 20


def _trim():
    """glibc's ``malloc_trim``, or None elsewhere."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _trim()


def give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc; elsewhere nothing).

    Arrays of a few megabytes freed while a log is read (its pieces, the
    segments of :class:`Columns`) stay in the process's heap, counted in its
    resident memory beside the large arrays made next; given back, a
    conversion's peak is the data it holds, not that plus what it held.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)



def exact_float32(values: np.ndarray) -> np.ndarray:
    """``values`` as float32 when each one (NaN too) is the same there, half the memory; else as they are.

    A float32 block after float64 ones (or before) widens the column to float64 (:class:`Columns`), exactly.
    """
    narrow = values.astype(np.float32)
    return narrow if np.array_equal(narrow, values, equal_nan=True) else values


#: Seconds since 1970 held as uint32 (half of float64's memory): these two codes are no time and a negative one.
NO_TIME, BEFORE_1970 = np.uint32(2**32 - 1), np.uint32(2**32 - 2)
#: The first second uint32 cannot hold (2106-02-07): a time from it on is refused by the reader holding times so.
LAST_SECOND = 2**32 - 2


def epoch_codes(seconds: np.ndarray) -> np.ndarray:
    """Whole seconds since 1970 (NaN: none) as uint32 codes; each must be below :data:`LAST_SECOND`."""
    codes = np.where(np.isnan(seconds), NO_TIME, np.where(seconds < 0, BEFORE_1970, np.nan_to_num(seconds)))
    return codes.astype(np.uint32)


def epoch_seconds(codes: np.ndarray) -> np.ndarray:
    """The seconds of :func:`epoch_codes` as float64: NaN for none, -1 for a time before 1970 (refused later)."""
    seconds = codes.astype(np.float64)
    seconds[codes == NO_TIME] = np.nan
    seconds[codes == BEFORE_1970] = -1.0
    return seconds


class Columns:
    """Columns that grow block by block, in segments of :data:`SEGMENT` rows, joined once, column by column.

    A block's values are copied into its column's last segment (a new one
    when it is full), so no more than a segment per column is room to spare,
    and the blocks (small, often) are freed at once. When the columns are
    taken (:meth:`pop`, :meth:`result`) a column is joined into one array
    alone, its segments freed as they are copied: its segments and its joined
    array are the most one column holds at once. (An array grown by half
    again when full is a quarter empty on average, and twice held as it grows.)
    """

    def __init__(self):
        self.arrays: dict[str, list[np.ndarray]] = {}   # name -> its segments, the last one filled to `self.size`
        self.kinds: dict[str, np.dtype] = {}             # name -> the kind its values have had (empty blocks too)
        self.size = 0

    def append(self, block: dict[str, np.ndarray], count: int) -> None:
        """Add ``count`` rows; a float column a block lacks (or that starts late) is NaN there."""
        for name in self.arrays.keys() - block.keys():
            block[name] = np.full(count, np.nan)
        for name, values in block.items():
            values = np.asarray(values)
            segments = self.arrays.get(name)
            if segments is None:
                segments = self.arrays[name] = []
                self.kinds[name] = values.dtype if not self.size else np.result_type(values.dtype, np.float64)
                self._put(segments, np.full(self.size, np.nan), 0)
            self.kinds[name] = np.result_type(self.kinds[name], values.dtype)
            self._put(segments, values, self.size)
        self.size += count

    @staticmethod
    def _put(segments: list[np.ndarray], values: np.ndarray, at: int) -> None:
        """Copy ``values`` into the segments from row ``at`` on, a segment added (or widened to the values'
        kind) as it must be."""
        done = 0
        while done < len(values):
            row = at + done
            if row == len(segments) * SEGMENT:
                segments.append(np.empty(SEGMENT, dtype=values.dtype))
            last = segments[-1]
            kind = np.result_type(last.dtype, values.dtype)
            if kind != last.dtype:
                segments[:] = [segment.astype(kind) for segment in segments]
                last = segments[-1]
            offset = row - (len(segments) - 1) * SEGMENT
            take = min(SEGMENT - offset, len(values) - done)
            last[offset:offset + take] = values[done:done + take]
            done += take

    def pop(self, name: str, give_back: bool = True) -> np.ndarray:
        segments = self.arrays.pop(name)
        joined = np.empty(self.size, dtype=self.kinds.pop(name))
        segments.reverse()
        at = 0
        while segments:
            segment = segments.pop()
            take = min(SEGMENT, self.size - at)
            joined[at:at + take] = segment[:take]
            at += take
            del segment
        if give_back:
            give_back_freed_memory()
        return joined

    def result(self, names=(), give_back: bool = True) -> dict[str, np.ndarray]:
        """Every column, as long as what was appended (the object is emptied); ``names`` never given are NaN.
        ``give_back``: the heap's free pages are returned to the system after each column (:meth:`pop`)."""
        return {**{name: np.broadcast_to(np.float64(np.nan), (self.size,)) for name in names},
                **{name: self.pop(name, give_back) for name in list(self.arrays)}}


def as_objects(values) -> np.ndarray:
    """A column as a one-dimensional object array (a list of tuples stays a list of tuples)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=object)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array
