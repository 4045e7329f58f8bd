"""Atomic file writes for everything the app keeps on disk.

A write goes to a temporary file in the target's directory, is flushed and
fsynced, then renamed over the target (``os.replace`` is atomic on POSIX):
a crash at any point leaves the old file or the new one, never a torn one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(target: str | os.PathLike, data: bytes) -> Path:
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
