"""Atomic file writes for everything the app keeps on disk.

A write goes to a temporary file in the target's directory, is flushed and
fsynced, then renamed over the target (``os.replace`` is atomic on POSIX):
a crash at any point leaves the old file or the new one, never a torn one.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

TEMPORARY_PREFIX = ".incoming-"
#: A temporary file older than this was left by a process that died mid-write.
STALE_AFTER_S = 3600


def atomic_write(target: str | os.PathLike, data: bytes) -> Path:
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=TEMPORARY_PREFIX)
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


def remove_stale_temporaries(directory: str | os.PathLike, older_than_s: float = STALE_AFTER_S) -> int:
    """Delete temporary files a crashed write left in ``directory``; returns how many.

    Only files named like :func:`atomic_write`'s temporaries and not modified
    for ``older_than_s`` seconds go (a younger one may be a write in progress
    in another process).
    """
    cutoff = time.time() - older_than_s
    removed = 0
    for path in Path(directory).glob(TEMPORARY_PREFIX + "*"):
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue   # another process cleaned it first
    return removed
