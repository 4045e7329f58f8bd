"""Uploaded files, stored content-addressed in the data directory.

An upload is written once as ``<sha256>.<kind>`` (``kind`` from a fixed
list, never from the user's file name, so a name can never become a path),
through a temporary file and an atomic rename: a crash mid-write leaves
either no file or the whole file. The original name is kept only as a label,
in a sidecar ``<sha256>.<kind>.meta.json`` (label, size, time) that the
Workspace page lists.

A scenario names an upload by content, ``upload:<sha256>``
(:mod:`sched_engine.core.inputs`), never by its path: every store adds its
directory to the process's resolver (``PROCESS_INPUTS``), so whichever
process runs the scenario -- this server, a job process, a worker that
mounts the data directory elsewhere -- finds the file in its own directory.

Limits: ``max_bytes`` bounds an upload's size (the app reads it from
``SCHEDSCOPE_MAX_UPLOAD_BYTES``); a gzip upload must also decompress to at
most ``max_decompressed_bytes`` (default ``SCHEDSCOPE_MAX_DECOMPRESSED_BYTES``,
the readers' limit). A refused upload writes nothing.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from sched_engine.core.inputs import PROCESS_INPUTS, upload_reference
from sched_engine.core.io import FileError, env_byte_limit, iter_gunzip, max_decompressed_bytes, size_text

from .storage import atomic_write, remove_stale_temporaries

UPLOAD_KINDS = ("trace", "machines", "failures", "apps", "scenario", "clusters", "hierarchy")
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
MAX_UPLOAD_ENV = "SCHEDSCOPE_MAX_UPLOAD_BYTES"
STORED_NAME = re.compile(r"[0-9a-f]{64}\.(?:%s)" % "|".join(UPLOAD_KINDS))


class UploadError(ValueError):
    """An upload cannot be stored (too large, not base64, unknown kind)."""


def max_upload_bytes() -> int:
    """The upload size limit: ``SCHEDSCOPE_MAX_UPLOAD_BYTES``, else :data:`DEFAULT_MAX_BYTES`."""
    return env_byte_limit(MAX_UPLOAD_ENV, DEFAULT_MAX_BYTES)


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
                 max_decompressed_bytes: int | None = None):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(self.directory)   # left by a server killed mid-upload
        PROCESS_INPUTS.add_directory(self.directory)
        self.max_bytes = max_bytes
        self.max_decompressed_bytes = max_decompressed_bytes

    def save_data_url(self, contents: str, kind: str, label: str | None = None) -> Path:
        """Store a ``dcc.Upload`` data URL (``data:<type>;base64,<data>``); returns the file's path."""
        if not isinstance(contents, str):
            raise UploadError("the upload did not arrive as a file's contents")
        label = label if isinstance(label, str) else None
        _, _, encoded = contents.partition(",")
        if len(encoded) * 3 // 4 > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({size_text(self.max_bytes)})")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise UploadError("the upload did not arrive as base64 data") from None
        return self.save(data, kind, label)

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

    def save(self, data: bytes, kind: str, label: str | None = None) -> Path:
        if kind not in UPLOAD_KINDS:
            raise UploadError(f"unknown upload kind {kind!r}")
        if len(data) > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({size_text(self.max_bytes)})")
        if data[:2] == b"\x1f\x8b":  # gzip, as the readers recognise it: measure, keep nothing
            limit = max_decompressed_bytes() if self.max_decompressed_bytes is None else self.max_decompressed_bytes
            try:
                for _ in iter_gunzip(data, limit=limit, source=label or "the upload"):
                    pass
            except FileError as exc:
                raise UploadError(str(exc)) from None
        target = self.directory / f"{hashlib.sha256(data).hexdigest()}.{kind}"
        if not target.exists():
            atomic_write(target, data)
        if label:
            meta = {"label": str(label)[:200], "kind": kind, "size": len(data),
                    "uploaded": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            atomic_write(target.with_name(target.name + ".meta.json"), json.dumps(meta).encode())
        return target

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
