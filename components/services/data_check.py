"""Files in the data directory the app cannot read: logged once, skipped, listed on the Workspace page.

A truncated saved scenario, a damaged index entry, a result file that is not
a bundle, an unreadable upload label or a background jobs' database that is
not a database never stop the app from starting nor break a page: each store
skips what it cannot read, says why through its ``skipped()`` (``(path,
reason)`` pairs), and :func:`skipped_files` gathers them for the Workspace
page, logging each one the first time this process sees it.

The background jobs' store is the one file read as the app starts: a
damaged one is set aside (renamed ``callbacks.unreadable-<time>``, kept for
inspection) and a new one started, by :func:`open_job_store`; the set-aside
directory is listed as skipped until someone removes it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import time
from pathlib import Path

from .progress import JobStore

log = logging.getLogger(__name__)

SET_ASIDE = ".unreadable-"
SET_ASIDE_REASON = "the background jobs' store was unreadable; it was set aside and a new one started"
_logged: set[tuple[str, str]] = set()   # what this process has logged already (the once in "logged once")


def report_once(file: str, reason: str, logger: logging.Logger = log) -> None:
    """Log (on ``logger``) that ``file`` was skipped, once per process."""
    if (file, reason) not in _logged:
        _logged.add((file, reason))
        logger.warning("skipped %s: %s", file, reason)


def skipped_files(data_dir: str | os.PathLike, *stores) -> list[dict]:
    """``{"file", "reason"}`` of every unreadable file of ``stores`` and every set-aside jobs' store, by name.

    ``file`` is relative to ``data_dir``; each one is logged the first time.
    """
    data = Path(data_dir)
    found = [(path, reason) for store in stores for path, reason in store.skipped()]
    found += [(path, SET_ASIDE_REASON) for path in data.glob(f"*{SET_ASIDE}*") if path.is_dir()]
    entries = []
    for path, reason in found:
        try:
            name = str(Path(path).relative_to(data))
        except ValueError:
            name = str(path)
        report_once(name, reason)
        entries.append({"file": name, "reason": reason})
    return sorted(entries, key=lambda e: e["file"])


def open_job_store(directory: str | os.PathLike) -> JobStore:
    """The jobs' store in ``directory``; a damaged one is set aside (logged) and a new one made.

    Several server processes start at once: an exclusive ``flock`` beside
    the directory makes one of them check (and set aside) while the others
    wait, then open the store it left.
    """
    directory = Path(directory)
    lock = directory.with_name(f".{directory.name}.lock")
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            return JobStore(str(directory))
        except sqlite3.DatabaseError as exc:
            aside = directory.with_name(f"{directory.name}{SET_ASIDE}{time.strftime('%Y%m%dT%H%M%S')}")
            directory.rename(aside)
            log.warning("the background jobs' store %s is unreadable (%s)", directory, exc)
            report_once(aside.name, SET_ASIDE_REASON)
            return JobStore(str(directory))
    finally:
        os.close(descriptor)   # closing releases the lock
