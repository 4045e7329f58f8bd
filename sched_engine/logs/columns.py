"""The columns a log reader fills block by block, and giving the memory they freed back to the system."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

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

    def pop(self, name: str) -> np.ndarray:
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
        give_back_freed_memory()
        return joined

    def result(self, names=()) -> dict[str, np.ndarray]:
        """Every column, as long as what was appended (the object is emptied); ``names`` never given are NaN."""
        return {**{name: np.broadcast_to(np.float64(np.nan), (self.size,)) for name in names},
                **{name: self.pop(name) for name in list(self.arrays)}}
