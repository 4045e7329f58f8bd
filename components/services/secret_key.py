"""The server's secret key: one random text in a file of the data directory, readable by its owner only.

Dash signs background-callback handles with the Flask server's
``secret_key`` (and the optional login signs its session cookie with it).
Every server process of one data directory must use the same key, across
restarts, and whatever state Redis is in: a key kept in the job store or in
Redis would change with a restart on a fresh store, or fall back to a
per-process key while Redis is down (each gunicorn worker would then refuse
the handles the others signed).

The key is made by the first process that finds no file, under an
exclusive lock (of two processes racing, the second reads the first's key),
written to a private temporary file (mode ``0600``) and renamed into place:
the file appears whole or not at all. A file that is not a key (not 64 hex
digits, not a regular file) is replaced the same way; a key file that others
could read is made private again.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "secret_key"
KEY_BYTES = 32
KEY_TEXT = re.compile(r"[0-9a-f]{%d}" % (2 * KEY_BYTES))
PRIVATE = 0o600


def server_secret(data_dir: str | os.PathLike) -> str:
    """The key kept in ``<data_dir>/secret_key``, made on first use."""
    path = Path(data_dir) / FILE_NAME
    key = _read(path, quiet=True)
    if key is not None:
        return key
    descriptor = os.open(path.with_name(f".{FILE_NAME}.lock"), os.O_RDWR | os.O_CREAT, PRIVATE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        key = _read(path)   # made (or repaired) by another process while this one waited
        if key is None:
            key = secrets.token_hex(KEY_BYTES)
            _install(path, key)
        return key
    finally:
        os.close(descriptor)   # closing releases the lock


def _read(path: Path, quiet: bool = False) -> str | None:
    """The key in ``path``, or None when there is no file or it holds no key (logged unless ``quiet``)."""
    try:
        mode = path.lstat().st_mode
        text = path.read_text(encoding="ascii").strip() if stat.S_ISREG(mode) else ""
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        if not quiet:
            log.warning("the server's key file %s is unreadable (%s); a new key replaces it", path, exc)
        return None
    if not KEY_TEXT.fullmatch(text):
        if not quiet:
            log.warning("the server's key file %s holds no key; a new key replaces it", path)
        return None
    if stat.S_IMODE(mode) & ~PRIVATE:
        os.chmod(path, PRIVATE)
        log.warning("the server's key file %s was readable by others; it is private again", path)
    return text


def _install(path: Path, key: str) -> None:
    """Put ``key`` at ``path`` whole, mode 0600 (``mkstemp`` makes private files), replacing what is there."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{FILE_NAME}-")
    try:
        with os.fdopen(handle, "w", encoding="ascii") as stream:
            stream.write(key + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
