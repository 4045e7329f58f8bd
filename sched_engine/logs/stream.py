"""A log read from its file piece by piece, so memory follows the jobs kept, never the file's size.

A reader's ``read(pieces, ...)`` takes the text as pieces that each end
with a line break (the last may not): :func:`file_pieces` reads them from a
file (gzip recognised by its magic bytes and bounded by the same limit as
:func:`sched_engine.core.io.read_text`), :func:`text_pieces` cuts a text
already in memory. :func:`line_blocks` turns pieces into numbered lists of
lines. :func:`read_log_path` sniffs a file's first 64 KiB and reads it with
its reader, never holding the whole text.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from itertools import chain
from pathlib import Path

from ..core.io import GZIP_MAGIC, MAX_DECOMPRESSED_ENV, FileError, max_decompressed_bytes, size_text

#: Bytes read at a time: a piece is about this long (small enough to stay in the processor's cache).
PIECE = 1 << 20
HEAD = 1 << 16


def text_pieces(text: str, piece: int = PIECE):
    """``text`` cut after a line break every ``piece`` characters or so."""
    position = 0
    while position < len(text):
        end = text.find("\n", position + piece - 1) + 1 or len(text)
        yield text[position:end]
        position = end


class Pieces:
    """A file's (or a text's) pieces, read again from the start each time they are iterated over."""

    def __init__(self, path: str | Path | None = None, *, text: str | None = None, piece: int = PIECE, **options):
        self.path, self.text, self.piece, self.options = path, text, piece, options

    def __iter__(self):
        if self.text is not None:
            return text_pieces(self.text, self.piece)
        return file_pieces(self.path, piece=self.piece, **self.options)


def _open(path: Path, source: str):
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise FileError("", f"cannot read the file ({exc.strerror})", source=source) from None
    except ValueError:
        raise FileError("", "not a usable file name", source=source) from None
    if raw.read(2) == GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw), raw
    raw.seek(0)
    return raw, raw


def file_pieces(path: str | Path, *, source: str | None = None, piece: int = PIECE,
                max_decompressed: int | None = None, stop_after: int | None = None):
    """The file's text in pieces ending at a line break, gunzipped when it is gzip, decoded as UTF-8.

    A gzip file stops at ``max_decompressed`` bytes (default: the one limit of
    :func:`~sched_engine.core.io.max_decompressed_bytes`); text that is not UTF-8
    raises a :class:`FileError` naming its line, as :func:`~sched_engine.core.io.read_text` does.
    ``stop_after``: read no further once this many bytes were read (the text so far, its last line as read).
    A line longer than a piece is gathered in parts and joined once: a file with no line break (a gzip bomb
    of zeros) costs its length, not its length squared.
    """
    name = source or Path(path).name
    stream, raw = _open(Path(path), name)
    gzipped = stream is not raw
    limit = (max_decompressed_bytes() if max_decompressed is None else max_decompressed) if gzipped else None
    decoder = codecs.getincrementaldecoder("utf-8")()
    carry: list[str] = []   # the text after the last line break, in parts (it holds no line break)
    lines, size = 0, 0
    try:
        while True:
            try:
                chunk = stream.read(piece)
            except (OSError, EOFError, zlib.error) as exc:
                raise FileError("", f"broken gzip data ({exc})", source=name) from None
            size += len(chunk)
            if limit is not None and size > limit:
                raise FileError("", f"decompresses to more than {size_text(limit)}, the limit "
                                 f"(set {MAX_DECOMPRESSED_ENV} to raise it)", source=name)
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                byte = size - len(chunk) + max(exc.start - len(exc.object) + len(chunk), 0)
                line = lines + chunk.count(b"\n", 0, max(exc.start - len(exc.object) + len(chunk), 0)) + 1
                raise FileError("", f"not UTF-8 text (byte {byte})", source=name, line=line) from None
            ended = not chunk or (stop_after is not None and size >= stop_after)
            cut = text.rfind("\n") + 1
            if cut:
                lines += text.count("\n", 0, cut)
                yield "".join(carry) + text[:cut]
                carry = []
            rest = text[cut:]
            if rest:
                carry.append(rest)
            if ended:
                if carry:
                    yield "".join(carry)
                return
    finally:
        stream.close()
        raw.close()


def _with_ends(piece: str) -> list[str]:
    lines = piece.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def ended_lines(pieces):
    """Each line of the pieces with its ``\n`` (the file's last line as it is)."""
    return chain.from_iterable(map(_with_ends, pieces))


def line_blocks(pieces):
    """``(number of the first line, lines)`` for each piece, its lines without their ``\\n``."""
    number = 1
    for piece in pieces:
        lines = (piece[:-1] if piece.endswith("\n") else piece).split("\n")
        yield number, lines
        number += len(lines)


def head(path: str | Path, *, source: str | None = None) -> str:
    """The first 64 KiB of the file's text (for sniffing): up to its last line break in them, or all of them
    when they hold none. Nothing past them is read."""
    pieces = file_pieces(path, source=source, piece=HEAD, stop_after=HEAD)
    try:
        return next(pieces, "")[:HEAD]
    finally:
        pieces.close()


def read_log_path(path: str | Path, fmt: str = "auto", *, source: str | None = None, timezone: str = "UTC",
                  skip_malformed: bool = False, max_decompressed: int | None = None, piece: int | None = None,
                  compact: bool = False):
    """The workload of a resource-manager log read from its file in pieces; ``None`` when it is no such log.

    ``fmt`` is a reader's ``KIND`` or ``auto`` (the file's first 64 KiB sniffed); ``piece``: the text read at
    a time (default: the reader's own, ``read.piece``); ``compact``: the frame a conversion needs (names as
    categoricals, no job ids), a fraction of the memory.
    """
    from . import reader, sniff_log

    name = source or Path(path).name
    kind = sniff_log(name, head(path, source=name)) if fmt == "auto" else fmt
    module = reader(kind) if kind else None
    if module is None:
        return None
    pieces = Pieces(path, source=name, piece=piece or module.read.piece, max_decompressed=max_decompressed)
    return module.read(pieces, source=name, timezone=timezone, skip_malformed=skip_malformed, compact=compact)
