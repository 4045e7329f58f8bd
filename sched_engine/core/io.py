"""Reading input files: gzip recognised by its magic bytes, decompressed as a stream under a byte limit.

Every engine's reader goes through :func:`read_text` (batch workloads,
``.machines`` and failure files, elasticity traces), and the web app's upload
check through :func:`iter_gunzip`, so one limit bounds what any file may
expand to: :func:`max_decompressed_bytes` (``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES``,
default 2 GiB). A file over the limit stops being read at the limit, and the
error says which variable raises it.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import zlib
from pathlib import Path

from .errors import ScenarioError

#: How far a gzip file may expand when read; ``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES`` overrides it.
DEFAULT_MAX_DECOMPRESSED_BYTES = 2 * 2**30
MAX_DECOMPRESSED_ENV = "SCHEDSCOPE_MAX_DECOMPRESSED_BYTES"
GUNZIP_CHUNK = 2**20
GZIP_MAGIC = b"\x1f\x8b"
#: Largest magnitude of a whole-number field (ids, processor counts, machine
#: indices): beyond 2**53 floats skip whole numbers and int64 columns overflow.
MAX_WHOLE = 2**53


class FileError(ScenarioError):
    """An input file cannot be read (missing, not UTF-8, broken or oversized gzip, malformed content)."""


def env_byte_limit(variable: str, default: int) -> int:
    """A byte limit from the environment variable ``variable`` (a positive integer), else ``default``."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{variable} must be a positive whole number of bytes, got {value!r}")
    return int(value)


def max_decompressed_bytes() -> int:
    """How far a gzip file may expand: ``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES``, else :data:`DEFAULT_MAX_DECOMPRESSED_BYTES`."""
    return env_byte_limit(MAX_DECOMPRESSED_ENV, DEFAULT_MAX_DECOMPRESSED_BYTES)


def size_text(size: int) -> str:
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size} bytes"


def iter_gunzip(raw: bytes, *, limit: int, source: str):
    """Yield the decompressed chunks of gzip data (every member).

    Raises :class:`TraceError` for broken data and as soon as the output
    passes ``limit`` bytes, so a gzip bomb stops at the limit instead of exhausting memory.
    """
    size = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            while chunk := stream.read(GUNZIP_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise FileError("", f"decompresses to more than {size_text(limit)}, the limit "
                                     f"(set {MAX_DECOMPRESSED_ENV} to raise it)", source=source)
                yield chunk
    except (OSError, EOFError, zlib.error) as exc:
        raise FileError("", f"broken gzip data ({exc})", source=source) from None


def read_text(path: str | Path, *, source: str | None = None, max_decompressed: int | None = None) -> str:
    """The file's text, gunzipped when it starts with gzip's magic bytes.

    ``max_decompressed`` bounds the gunzipped size (default:
    :func:`max_decompressed_bytes`).
    """
    name = source or Path(path).name
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise FileError("", f"cannot read the file ({exc.strerror})", source=name) from None
    except ValueError:   # a NUL byte in the name: no such file can exist
        raise FileError("", "not a usable file name", source=name) from None
    if raw[:2] == GZIP_MAGIC:
        limit = max_decompressed_bytes() if max_decompressed is None else max_decompressed
        raw = b"".join(iter_gunzip(raw, limit=limit, source=name))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FileError("", f"not UTF-8 text (byte {exc.start})", source=name, line=line) from None


def text_number(token: str, number: int, field_name: str, source: str, *, whole: bool = False) -> float:
    """A number read from a text file: ``token`` as a finite float; ``whole`` fields also within :data:`MAX_WHOLE`.

    Errors name the file (``source``), the 1-based line (``number``) and the field.
    """
    try:
        value = float(token)
    except ValueError:
        raise FileError(field_name, f"{token!r} is not a number", source=source, line=number) from None
    if not math.isfinite(value):
        raise FileError(field_name, f"{token!r} is not a finite number", source=source, line=number)
    if whole and abs(value) > MAX_WHOLE:
        raise FileError(field_name, f"{token!r} is too large (at most 2**53)", source=source, line=number)
    return value
