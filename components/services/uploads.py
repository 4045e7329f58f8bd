"""Uploaded files, stored content-addressed in the data directory.

An upload is written once as ``<sha256>.<kind>`` (``kind`` from a fixed
list, never from the user's file name, so a name can never become a path),
through a temporary file and an atomic rename: a crash mid-write leaves
either no file or the whole file. The original name is kept only as a label,
in a sidecar ``<sha256>.<kind>.meta.json`` (label, size, time) that the
Workspace page lists.

Limits, all checked as the upload is received, before anything is stored
or parsed: ``max_bytes`` bounds an upload's size (the app reads it from
``SCHEDSCOPE_MAX_UPLOAD_BYTES``); a gzip upload is decompressed as a stream,
chunk by chunk, and must expand to at most ``max_decompressed_bytes``
(``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES`` if set, else the upload limit: the
text behind a compressed file is never larger than an uncompressed upload
may be); a line of a text file read line by line may be at most
``max_line_bytes`` long (``SCHEDSCOPE_MAX_LINE_BYTES``, default 1 MiB; JSON
documents, where lines mean nothing, are exempt). A refused upload writes
nothing, and its error names the file and the limit.

A scenario names an upload by content, ``upload:<sha256>``
(:mod:`sched_engine.core.inputs`), never by its path: every store adds its
directory to the process's resolver (``PROCESS_INPUTS``), so whichever
process runs the scenario -- this server, a job process, a worker that
mounts the data directory elsewhere -- finds the file in its own directory.
"""

from __future__ import annotations

import base64
import binascii
import errno
import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from sched_engine.core.inputs import PROCESS_INPUTS, upload_reference
from sched_engine.core.io import MAX_DECOMPRESSED_ENV, FileError, env_byte_limit, iter_gunzip, size_text

from .storage import atomic_write, remove_stale_temporaries

UPLOAD_KINDS = ("trace", "machines", "failures", "apps", "scenario", "clusters", "hierarchy", "organisation")
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
MAX_UPLOAD_ENV = "SCHEDSCOPE_MAX_UPLOAD_BYTES"
DEFAULT_MAX_LINE_BYTES = 2**20
MAX_LINE_ENV = "SCHEDSCOPE_MAX_LINE_BYTES"
#: How much of a plain (not gzip) upload the line check looks at in one step.
CHECK_CHUNK = 2**20
LF, CR = ord("\n"), ord("\r")
#: A write failing with one of these is the disk's fault, not the file's: the user is told, the app carries on.
DISK_TROUBLE = {errno.ENOSPC: "is full", errno.EDQUOT: "is over its disk quota", errno.EROFS: "is read-only"}

STORED_NAME = re.compile(r"[0-9a-f]{64}\.(?:%s)" % "|".join(UPLOAD_KINDS))


class UploadError(ValueError):
    """An upload cannot be stored (too large, not base64, unknown kind)."""


def max_upload_bytes() -> int:
    """The upload size limit: ``SCHEDSCOPE_MAX_UPLOAD_BYTES``, else :data:`DEFAULT_MAX_BYTES`."""
    return env_byte_limit(MAX_UPLOAD_ENV, DEFAULT_MAX_BYTES)


def max_line_bytes() -> int:
    """The longest line a line-by-line text upload may have: ``SCHEDSCOPE_MAX_LINE_BYTES``, else 1 MiB."""
    return env_byte_limit(MAX_LINE_ENV, DEFAULT_MAX_LINE_BYTES)


def max_decompressed_upload_bytes(max_bytes: int) -> int:
    """How far a gzip upload may expand: ``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES`` if set, else ``max_bytes``."""
    return env_byte_limit(MAX_DECOMPRESSED_ENV, max_bytes)


def check_lines(chunks, *, max_line: int, source: str) -> None:
    """Raise :class:`UploadError` naming ``source`` when a line of the text in ``chunks`` (bytes) is longer
    than ``max_line`` bytes; a text that starts as a JSON document (``{`` or ``[``) is not read by lines."""
    run = 0            # bytes of the line still open at the end of the chunks seen so far
    line = 1
    first = True
    open_cr = False    # the last chunk ended with a CR: a line end, unless the next chunk starts with a LF
    for chunk in chunks:
        if not chunk:
            continue
        if first and chunk.strip():
            first = False
            if chunk.lstrip()[:1] in (b"{", b"["):
                for _ in chunks:   # drain a stream (the gzip check still runs to its end)
                    pass
                return
        codes = np.frombuffer(chunk, dtype=np.uint8)
        if open_cr and codes[0] != LF:   # the CR that ended the chunk before ended a line
            run, line = 0, line + 1
        lone_cr = codes == CR
        lone_cr[:-1] &= codes[1:] != LF   # a CR ends a line unless a LF follows (CRLF ends one line)
        open_cr = bool(lone_cr[-1])
        lone_cr[-1] = False               # ... which the next chunk tells
        ends = np.flatnonzero((codes == LF) | lone_cr)
        if ends.size == 0:
            run += len(chunk) - open_cr
            longest, where = run, line
        else:
            lengths = np.diff(ends) - 1
            inner = int(lengths.max()) if lengths.size else -1
            head = run + int(ends[0])
            longest, where = (head, line) if head >= inner else (inner, line + 1 + int(lengths.argmax()))
            run = len(chunk) - int(ends[-1]) - 1 - open_cr
            line += int(ends.size)
        if longest > max_line:
            raise UploadError(f"{source}: line {where:,} is longer than {size_text(max_line)}, the limit "
                              f"(set {MAX_LINE_ENV} to raise it)")


def upload_choices(uploads, kind: str, *, value_prefix: str = "", suffixes: tuple[str, ...] = ()) -> list[dict]:
    """Dropdown options for earlier uploads of ``kind``, newest first (only labels ending in ``suffixes``, if given).

    Each value is the stored name behind ``value_prefix``; the label is the
    original file name and the upload date.
    """
    return [{"label": f"{entry['label']} (uploaded {entry['uploaded'][:10]})", "value": value_prefix + entry["name"]}
            for entry in uploads.listing()
            if entry["kind"] == kind and (not suffixes or entry["label"].lower().endswith(suffixes))]


class UploadStore:
    """Content-addressed upload files under one directory."""

    def __init__(self, directory: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_decompressed_bytes: int | None = None, max_line_bytes: int | None = None):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.directory)   # left by a server killed mid-upload
        PROCESS_INPUTS.add_directory(self.directory)
        self.max_bytes = max_bytes
        self.max_decompressed_bytes = max_decompressed_bytes
        self.max_line_bytes = max_line_bytes

    def save_data_url(self, contents: str, kind: str, label: str | None = None, meta: dict | None = None) -> Path:
        """Store a ``dcc.Upload`` data URL (``data:<type>;base64,<data>``); returns the file's path."""
        return self.save(self.data_of(contents), kind, label, meta)

    def data_of(self, contents: str) -> bytes:
        """The bytes of a ``dcc.Upload`` data URL; raises :class:`UploadError` past the limit or for bad base64."""
        if not isinstance(contents, str):
            raise UploadError("the upload did not arrive as a file's contents")
        _, _, encoded = contents.partition(",")
        if len(encoded) * 3 // 4 > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({size_text(self.max_bytes)})")
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise UploadError("the upload did not arrive as base64 data") from None

    def path_of(self, name: str) -> Path:
        """The stored file called ``name`` (``<sha256>.<kind>``); anything else is refused."""
        if not isinstance(name, str) or not STORED_NAME.fullmatch(name):
            raise UploadError("not the name of a stored upload")
        path = self.directory / name
        if not path.is_file():
            raise UploadError("the uploaded file is no longer in the data directory; upload it again")
        return path

    def reference_of(self, name: str) -> str:
        """The content reference (``upload:<sha256>``) a scenario uses for the stored file ``name``."""
        self.path_of(name)
        return upload_reference(name.partition(".")[0])

    def save(self, data: bytes, kind: str, label: str | None = None, meta: dict | None = None) -> Path:
        """Store ``data``; ``label`` and ``meta`` (more words about the file, such as a log's ``timezone``) are
        listed with it by :meth:`listing`, the latest upload's words standing."""
        label = label if isinstance(label, str) else None
        if kind not in UPLOAD_KINDS:
            raise UploadError(f"unknown upload kind {kind!r}")
        if len(data) > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({size_text(self.max_bytes)})")
        if kind == "trace" and not data.strip():
            raise UploadError("the file is empty: a trace needs at least one job")
        self._check_text(data, label or "the upload")
        target = self.target(data, kind)
        is_new = not target.exists()
        try:
            if is_new:
                atomic_write(target, data)
            if label:
                meta = {**(meta or {}), "label": str(label)[:200], "kind": kind, "size": len(data),
                        "uploaded": datetime.now(timezone.utc).isoformat(timespec="seconds")}
                atomic_write(target.with_name(target.name + ".meta.json"), json.dumps(meta).encode())
        except OSError as exc:
            if exc.errno not in DISK_TROUBLE:
                raise
            if is_new:
                target.unlink(missing_ok=True)   # a file without its label is not what the user asked for
            raise UploadError(self.disk_message(exc.errno, label or "the file")) from None
        return target

    def disk_message(self, code: int, what: str) -> str:
        """Why ``what`` was not stored: the store, its trouble, and that nothing stored earlier is lost."""
        store = f"{self.directory.parent.name}/{self.directory.name}"
        return (f"the upload store ({store}) {DISK_TROUBLE[code]}: {what} was not saved; "
                f"earlier uploads and results are kept")

    def target(self, data: bytes, kind: str) -> Path:
        """Where :meth:`save` stores ``data`` (named by its sha256 and kind)."""
        return self.directory / f"{hashlib.sha256(data).hexdigest()}.{kind}"

    def _check_text(self, data: bytes, source: str) -> None:
        """Refuse a gzip upload that expands past its limit or a text with a line past its limit.

        Gzip data (as the readers recognise it) is decompressed as a stream and
        measured chunk by chunk: nothing of it is kept.
        """
        max_line = max_line_bytes() if self.max_line_bytes is None else self.max_line_bytes
        if data[:2] != b"\x1f\x8b":
            check_lines((data[i:i + CHECK_CHUNK] for i in range(0, len(data), CHECK_CHUNK)), max_line=max_line,
                        source=source)
            return
        limit = (max_decompressed_upload_bytes(self.max_bytes) if self.max_decompressed_bytes is None
                 else self.max_decompressed_bytes)
        try:
            check_lines(iter_gunzip(data, limit=limit, source=source), max_line=max_line, source=source)
        except FileError as exc:
            raise UploadError(str(exc)) from None

    def skipped(self) -> list[tuple[Path, str]]:
        """``(path, reason)`` of label files that cannot be read (their upload is listed under its stored name)."""
        found = []
        for path in sorted(self.directory.glob("*.meta.json")):
            try:
                meta = json.loads(path.read_text())
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as exc:
                found.append((path, f"damaged label file ({exc.__class__.__name__}); "
                                    "its upload is listed under its stored name"))
                continue
            if not isinstance(meta, dict) or not all(k in meta for k in ("label", "kind", "size", "uploaded")):
                found.append((path, "not a label file of this app; its upload is listed under its stored name"))
        return found

    def listing(self) -> list[dict]:
        """Stored uploads with their label, kind, size and time, newest first."""
        entries = []
        for path in self.directory.iterdir():
            if not STORED_NAME.fullmatch(path.name):
                continue
            meta_path = path.with_name(path.name + ".meta.json")
            try:
                meta = json.loads(meta_path.read_text())
                if not isinstance(meta, dict) or not all(k in meta for k in ("label", "kind", "size", "uploaded")):
                    raise ValueError("not a label file")
            except (OSError, ValueError):   # no label (or a damaged one: skipped() names it)
                stat = path.stat()
                meta = {"label": path.name[:12], "kind": path.suffix[1:], "size": stat.st_size,
                        "uploaded": datetime.fromtimestamp(stat.st_mtime, timezone.utc).isoformat(timespec="seconds")}
            entries.append({**meta, "name": path.name})
        return sorted(entries, key=lambda e: (e["uploaded"], e["name"]), reverse=True)
