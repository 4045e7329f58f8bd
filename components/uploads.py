"""Uploaded files, stored content-addressed in the data directory.

An upload is written once as ``<sha256>.<kind>`` (``kind`` from a fixed
list, never from the user's file name, so a name can never become a path),
through a temporary file and an atomic rename: a crash mid-write leaves
either no file or the whole file. The original name is kept only as a label.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from pathlib import Path

from .storage import atomic_write

UPLOAD_KINDS = ("trace", "machines", "failures", "apps", "scenario")
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
STORED_NAME = re.compile(r"[0-9a-f]{64}\.(?:%s)" % "|".join(UPLOAD_KINDS))


class UploadError(ValueError):
    """An upload cannot be stored (too large, not base64, unknown kind)."""


class UploadStore:
    """Content-addressed upload files under one directory."""

    def __init__(self, directory: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes

    def save_data_url(self, contents: str, kind: str) -> Path:
        """Store a ``dcc.Upload`` data URL (``data:<type>;base64,<data>``); returns the file's path."""
        _, _, encoded = (contents or "").partition(",")
        if len(encoded) * 3 // 4 > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({self.max_bytes // 2**20} MiB)")
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise UploadError("the upload did not arrive as base64 data") from None
        return self.save(data, kind)

    def path_of(self, name: str) -> Path:
        """The stored file called ``name`` (``<sha256>.<kind>``); anything else is refused."""
        if not isinstance(name, str) or not STORED_NAME.fullmatch(name):
            raise UploadError("not the name of a stored upload")
        path = self.directory / name
        if not path.is_file():
            raise UploadError("the uploaded file is no longer in the data directory; upload it again")
        return path

    def save(self, data: bytes, kind: str) -> Path:
        if kind not in UPLOAD_KINDS:
            raise UploadError(f"unknown upload kind {kind!r}")
        if len(data) > self.max_bytes:
            raise UploadError(f"the file is larger than the upload limit ({self.max_bytes // 2**20} MiB)")
        target = self.directory / f"{hashlib.sha256(data).hexdigest()}.{kind}"
        if target.exists():
            return target
        atomic_write(target, data)
        return target
