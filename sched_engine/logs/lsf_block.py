"""Many ``lsb.acct`` records read at once: their fields found by position in the bytes, never split one by one.

:mod:`.lsf` hands a text of whole lines here. NumPy finds the blanks and line
breaks outside quotes (a quote's parity), hence every field's first and last
byte; the host-list counts give each record's later positions, and only the
fields :mod:`.lsf` keeps are taken: numbers parsed as whole columns, names
sliced and unquoted once per distinct text. What this cannot read as the csv
module would (a carriage return, a NUL, a quote that does not open or close
a field) is left to the record-by-record reading: :meth:`Layout.read` says
so by returning None, and a record it cannot place (a count that is not a
plain number, a field past its end) comes back by its line, to be read alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .jobs_table import as_objects

QUOTE, BLANK, BREAK = 34, 32, 10
EVENT = b'"JOB_FINISH"'
#: Token positions (0-based) before the first host list, as in :data:`.lsf.FIXED`.
EVENT_TIME, JOB_ID, PROCESSORS, SUBMIT, START, USER, QUEUE, RES_REQ, ASKED_HOSTS = 2, 3, 6, 7, 10, 11, 12, 13, 22
#: Positions after ``jStatus`` (as in :data:`.lsf.AFTER_STATUS`).
UTIME, STIME, PROJECT, IDX, MAX_RMEM, EXIT_INFO, SAAP, SUBMIT_EXT = 4, 5, 24, 29, 30, 38, 41, 52
WIDEST = 32   # bytes of the longest number read as a column; a longer one is read alone
#: Bytes of a field Arrow reads as a number.
NUMERIC = np.zeros(256, dtype=bool)
NUMERIC[list(b"0123456789+-.eE")] = True


class Layout:
    """The fields of the whole lines at the head of ``data`` (UTF-8) found by position.

    ``cut`` is how many bytes those lines take (a quoted line break does not
    end a record): the caller keeps the rest for the next piece.
    """

    def __init__(self, data: bytes):
        b = np.frombuffer(data, dtype=np.uint8)
        marked = np.flatnonzero((b == QUOTE) | (b == BLANK) | (b == BREAK))
        kind = b[marked]
        quote = kind == QUOTE
        quoted = (np.cumsum(quote, dtype=np.int8) & 1).view(bool)   # a quote's parity, wrapping harmlessly
        ends = marked[~quote & ~quoted]
        breaks = np.flatnonzero(b[ends] == BREAK)
        self.cut = int(ends[breaks[-1]]) + 1 if breaks.size else 0
        self.data, self.b = data[:self.cut], b[:self.cut]
        self.ends = ends[:breaks[-1] + 1] if breaks.size else ends[:0]
        self.line_ends = breaks
        self.quotes = marked[quote & (marked < self.cut)]
        self.quoted_breaks = marked[quoted & (kind == BREAK) & (marked < self.cut)]

    def plain(self) -> bool:
        """Whether the quoting is what the csv module reads as ours does: else read it record by record."""
        b, data = self.b, self.data
        if b"\r" in data or b"\0" in data:
            return False
        quotes = self.quotes
        opens, closes = quotes[0::2], quotes[1::2]
        before = b[np.maximum(opens - 1, 0)]
        after = b[np.minimum(closes + 1, b.size - 1)]
        escaped_before = np.zeros(opens.size, dtype=bool)   # "" inside a quoted field: it goes on
        escaped_before[1:] = closes[:-1] + 1 == opens[1:]
        escaped_after = np.zeros(closes.size, dtype=bool)
        escaped_after[:-1] = escaped_before[1:]
        open_ok = (opens == 0) | (before == BLANK) | (before == BREAK) | escaped_before
        close_ok = (closes + 1 == b.size) | (after == BLANK) | (after == BREAK) | escaped_after
        return bool(open_ok.all() and close_ok.all())

    def split(self) -> None:
        """Each line's first field, field count, first byte, length and physical line (quoted breaks counted)."""
        ends, line_ends = self.ends, self.line_ends
        self.first = np.concatenate(([0], line_ends[:-1] + 1))
        self.count = line_ends - self.first + 1
        self.start = np.concatenate(([0], ends[line_ends[:-1]] + 1))
        self.length = ends[line_ends] - self.start
        self.physical = np.arange(self.start.size)
        if self.quoted_breaks.size:
            self.physical = self.physical + np.searchsorted(self.quoted_breaks, self.start)

    def token_bounds(self, rows: np.ndarray, index: np.ndarray):
        """First byte and end of field ``index`` of the lines ``rows`` (index within the line's count)."""
        at = self.first[rows] + index
        end = self.ends[at]
        start = np.where(index > 0, self.ends[np.maximum(at - 1, 0)] + 1, self.start[rows])
        return start, end

    def events(self) -> tuple[np.ndarray, np.ndarray]:
        """Lines whose first field is ``"JOB_FINISH"``, and the other lines with something on them."""
        first_end = self.ends[self.first]
        width = first_end - self.start
        same = width == len(EVENT)
        probe = np.flatnonzero(same)
        for offset, byte in enumerate(EVENT):
            probe = probe[self.b[self.start[probe] + offset] == byte]
        event = np.zeros(self.start.size, dtype=bool)
        event[probe] = True
        return np.flatnonzero(event), np.flatnonzero(~event & (self.length > 0))

    def gathered(self, start: np.ndarray, end: np.ndarray) -> tuple[pa.StringArray, np.ndarray]:
        """The byte ranges ``start:end`` as one Arrow string array, and their bytes end to end."""
        width = end - start
        offsets = np.zeros(width.size + 1, dtype=np.int64)
        np.cumsum(width, out=offsets[1:])
        spots = np.repeat(start - offsets[:-1], width) + np.arange(offsets[-1])
        joined = self.b[spots]
        return pa.LargeStringArray.from_buffers(width.size, pa.py_buffer(offsets), pa.py_buffer(joined)), joined

    def numbers(self, start: np.ndarray, end: np.ndarray):
        """Fields as floats where Arrow reads them as Python's ``float`` would; and the rows left to read one by one.

        Arrow reads fields of digits, signs, points and exponents only (correctly rounded, as ``float``); an
        empty or quoted field, or any other character (``inf``, ``1_000``), is left to ``float`` (NaN here).
        """
        values = np.full(start.size, np.nan)
        width = end - start
        simple = (width > 0) & (width <= WIDEST) & (self.b[start] != QUOTE)
        rows = np.flatnonzero(simple)
        if rows.size:
            strings, joined = self.gathered(start[rows], end[rows])
            if NUMERIC[joined].all():
                try:
                    values[rows] = pc.cast(strings, pa.float64()).to_numpy(zero_copy_only=False)
                except pa.ArrowInvalid:
                    simple[rows] = False
            else:
                simple[rows] = False
        return values, np.flatnonzero(~simple)

    def counts(self, rows: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A list count of each line (field ``index``) as a whole number, and which lines have a plain one.

        Plain: the field is there and is only the digits 0-9 (at most nine), as ``int`` reads it alike.
        """
        there = index < self.count[rows]
        value = np.zeros(rows.size, dtype=np.int64)
        ok = there.copy()
        start, end = self.token_bounds(rows[there], index[there])
        width = end - start
        good = (width > 0) & (width <= 9)
        number = np.zeros(start.size, dtype=np.int64)
        for offset in range(9):
            digit = self.b[np.minimum(start + offset, self.b.size - 1)].astype(np.int64) - 48
            live = offset < width
            good &= ~live | ((digit >= 0) & (digit <= 9))
            number = np.where(live, number * 10 + digit, number)
        ok[there] = good
        value[there] = np.where(good, number, 0)
        return value, ok

    def texts(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Fields as the csv module gives them (a quoted one without its quotes, ``""`` read as ``"``), as objects.

        Each distinct field becomes one Python string, shared by its rows.
        """
        quoted = self.b[start] == QUOTE
        strings, joined = self.gathered(start + quoted, end - quoted)
        if (joined == QUOTE).any():   # only a quoted field holds a quote, doubled
            strings = pc.replace_substring(strings, '""', '"')
        encoded = strings.dictionary_encode()
        names = as_objects(encoded.dictionary.to_pylist())
        return names[encoded.indices.to_numpy(zero_copy_only=False)] if len(names) else np.full(start.size, "", object)

    def line_text(self, row: int) -> str:
        """Line ``row`` as text (its quoted line breaks included)."""
        start = int(self.start[row])
        return self.data[start:start + int(self.length[row])].decode()


def unquoted(field: str) -> str:
    """A field as the csv module reads it (quotes with ``""`` inside for a quote)."""
    return field[1:-1].replace('""', '"') if field[:1] == '"' else field
