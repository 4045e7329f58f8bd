"""Where results are stored: bundle files in a directory, or values in Redis, each with an index of runs.

Used through :class:`~components.services.runs.ResultCache`, which picks one
pair (:class:`FileStore` + :class:`FileIndex`, or :class:`RedisStore` +
:class:`RedisIndex`); the formats, the legacy entries still read and the
pruning rules are described in :mod:`components.services.runs`. Nothing
read here is ever unpickled: a legacy entry's text is taken out of its
pickle by :func:`pickled_str`, a disassembler.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import pickletools
import re
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from flask_caching.backends.rediscache import RedisCache

from sched_engine import SimulationResult

from .data_check import report_once
from .storage import atomic_write, remove_stale_temporaries

logger = logging.getLogger(__name__)

REDIS_PREFIX = "schedscope:"
REDIS_INDEX = "schedscope:runs"
BUNDLE_SUFFIX = ".parquet.zip"
LOCK_NAME = ".lock"
#: A sha256 hex digest: scenario hashes (anything else is no stored result, and never part of a path)
#: and the names of legacy FileSystemCache files.
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
ZIP_MAGIC = b"PK\x03\x04"
#: The file of the legacy FileSystemCache that counted its entries (a pickle: never read, never an entry).
LEGACY_COUNT_FILE = hashlib.sha256(b"__wz_cache_count").hexdigest()
LEGACY_EXPIRY_BYTES = 4
#: What every index entry holds (the Workspace and Compare pages read them all).
INDEX_FIELDS = ("hash", "engine", "policy", "seed", "finished", "wall_seconds", "jobs")
#: Opcodes of a str pickled with protocol 4 or 5 (FileSystemCache used the highest, 5): the value,
#: and the framing and memo bookkeeping around it.
PICKLED_STR_VALUES = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"})
PICKLED_STR_FRAMING = frozenset({"PROTO", "FRAME", "MEMOIZE", "STOP"})


def result_key(scenario_hash: str) -> str:
    return f"result:{scenario_hash}"


def is_scenario_hash(value: Any) -> bool:
    return isinstance(value, str) and SHA256_HEX.fullmatch(value) is not None


def _is_entry(name: str) -> bool:
    """A bundle or a legacy entry; not a temporary, the lock or the legacy count file."""
    return name.endswith(BUNDLE_SUFFIX) or (SHA256_HEX.fullmatch(name) is not None and name != LEGACY_COUNT_FILE)


def pickled_str(data: bytes) -> str:
    """The str that ``data``, a pickle of one str, holds -- read without unpickling.

    :func:`pickletools.genops` is pickle's disassembler: it decodes each
    opcode and its argument and executes none of them (nothing is imported,
    called or built). Only the opcodes of a pickled str are accepted, so a
    pickle that would import or call anything is refused at its first such
    opcode, before anything could happen.
    """
    strings = []
    for opcode, argument, _ in pickletools.genops(data):
        if opcode.name in PICKLED_STR_VALUES:
            strings.append(argument)
        elif opcode.name not in PICKLED_STR_FRAMING:
            raise ValueError(f"not a pickled str: opcode {opcode.name}")
    if len(strings) != 1:
        raise ValueError(f"not a pickled str: {len(strings)} strings")
    return strings[0]


def _from_file_system_cache(data: bytes) -> SimulationResult:
    """A legacy FileSystemCache entry: the expiry (ignored: that cache never expired results), then a pickled str."""
    return SimulationResult.from_json(pickled_str(data[LEGACY_EXPIRY_BYTES:]))


def _from_compressed_json(data: bytes) -> SimulationResult:
    """A legacy Redis value: zlib-compressed JSON text."""
    return SimulationResult.from_json(zlib.decompress(data).decode("utf-8"))


def decoded(scenario_hash: str, decode: Callable[[bytes], SimulationResult], data: bytes) -> SimulationResult | None:
    """``decode(data)``, or None (logged) when the bytes are not the result of ``scenario_hash``."""
    try:
        result = decode(data)
        if result.scenario_hash != scenario_hash:
            raise ValueError(f"stored under {scenario_hash} but the result of {result.scenario_hash}")
        return result
    except Exception as exc:   # zipfile, JSON, Arrow, zlib and pickletools each raise their own errors on foreign bytes
        report_once(f"stored result {scenario_hash}",
                    f"unreadable ({decode.__name__}: {exc.__class__.__name__}: {str(exc)[:200]}); treated as a miss",
                    logger)
        return None


def read_file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        logger.warning("cannot read stored result %s; treated as a miss", path, exc_info=True)
        return None


def is_bundle_file(path: Path) -> bool:
    """A zip archive (what a bundle is), judged from its first bytes and its central directory."""
    try:
        with open(path, "rb") as stream:
            if stream.read(len(ZIP_MAGIC)) != ZIP_MAGIC:
                return False
        return zipfile.is_zipfile(path)
    except OSError:
        return False


@contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block, across processes."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)   # closing releases the lock


class FileStore:
    """Bundles in one directory, ``<hash>.parquet.zip``; at most ``capacity`` entries after each write."""

    def __init__(self, directory: Path, capacity: int):
        self.directory = directory
        self.capacity = capacity
        directory.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(directory)   # left by a process killed mid-write

    def path(self, scenario_hash: str) -> Path:
        return self.directory / f"{scenario_hash}{BUNDLE_SUFFIX}"

    def legacy_path(self, scenario_hash: str) -> Path:
        return self.directory / hashlib.sha256(result_key(scenario_hash).encode()).hexdigest()

    def read(self, scenario_hash: str) -> SimulationResult | None:
        data = read_file(self.path(scenario_hash))
        if data is not None:
            return decoded(scenario_hash, SimulationResult.from_bundle, data)
        legacy = self.legacy_path(scenario_hash)
        data = read_file(legacy)
        result = None if data is None else decoded(scenario_hash, _from_file_system_cache, data)
        if result is not None:
            self._convert(result, legacy)
        return result

    def _convert(self, result: SimulationResult, legacy: Path) -> None:
        """Replace a legacy entry by a bundle (same count of entries: no pruning needed)."""
        try:
            atomic_write(self.path(result.scenario_hash), result.to_bundle())
            legacy.unlink(missing_ok=True)
        except OSError:
            logger.warning("could not convert %s to a bundle; it stays readable as it is", legacy, exc_info=True)

    def write(self, result: SimulationResult) -> None:
        atomic_write(self.path(result.scenario_hash), result.to_bundle())
        self._prune()

    def has(self, scenario_hash: str) -> bool:
        return self.path(scenario_hash).exists() or self.legacy_path(scenario_hash).exists()

    def readable(self, scenario_hash: str) -> bool:
        """Whether the stored bundle at least looks like one (a zip archive); legacy entries are let through."""
        path = self.path(scenario_hash)
        return is_bundle_file(path) if path.exists() else True

    def _prune(self) -> None:
        """Remove the oldest entries beyond capacity.

        Under the lock no other process prunes, so the listing cannot lose
        entries while it is used: after the pass at most ``capacity`` entries
        remain (other writers may add theirs, and prune after).
        """
        with _exclusive_lock(self.directory / LOCK_NAME):
            entries = self._entries_oldest_first()
            for path in entries[: max(0, len(entries) - self.capacity)]:
                path.unlink(missing_ok=True)

    def _entries_oldest_first(self) -> list[Path]:
        """Bundles and legacy entries, by write time."""
        stamped = []
        for path in self.directory.iterdir():
            if _is_entry(path.name):
                try:
                    stamped.append((path.stat().st_mtime_ns, path.name, path))
                except FileNotFoundError:
                    continue   # a legacy entry converted right now
        return [path for _, _, path in sorted(stamped)]


class RawBytes:
    """Serializer of :class:`RedisResults`: values are bundle bytes already, stored and read as they are."""

    def dumps(self, value: bytes) -> bytes:
        return value

    def loads(self, value: bytes | None) -> bytes | None:
        return value


class RedisResults(RedisCache):
    """flask-caching's Redis backend, storing bytes as they are instead of pickles."""

    serializer = RawBytes()


class RedisStore:
    """Bundles in Redis, key ``schedscope:result:<hash>``; :class:`RedisIndex` enforces the capacity."""

    def __init__(self, client):
        self.client = client
        self.backend = RedisResults(client, default_timeout=0, key_prefix=REDIS_PREFIX)

    @staticmethod
    def key(scenario_hash: str) -> str:
        return REDIS_PREFIX + result_key(scenario_hash)

    def read(self, scenario_hash: str) -> SimulationResult | None:
        data = self.backend.get(result_key(scenario_hash))
        if data is None:
            return None
        if data.startswith(ZIP_MAGIC):
            return decoded(scenario_hash, SimulationResult.from_bundle, data)
        result = decoded(scenario_hash, _from_compressed_json, data)
        if result is not None:
            # xx: only if still stored, so a result dropped meanwhile by the capacity does not come back unindexed.
            self.client.set(self.key(scenario_hash), result.to_bundle(), xx=True)
        return result

    def write(self, result: SimulationResult) -> None:
        self.backend.set(result_key(result.scenario_hash), result.to_bundle())

    def has(self, scenario_hash: str) -> bool:
        return bool(self.client.exists(self.key(scenario_hash)))

    def delete(self, *scenario_hashes: str) -> None:
        self.backend.delete_many(*(result_key(h) for h in scenario_hashes))


class FileIndex:
    """One JSON file per run, ``<directory>/<hash>.json``, written atomically."""

    def __init__(self, directory: Path, store: FileStore):
        self.directory = directory
        self.store = store

    def add(self, entry: dict) -> None:
        atomic_write(self.directory / f"{entry['hash']}.json", json.dumps(entry).encode())

    def _read(self, path: Path) -> tuple[dict | None, str | None]:
        """``(entry, None)``, or ``(None, why the file is no index entry)``."""
        try:
            entry = json.loads(path.read_text())
        except FileNotFoundError:
            return None, None   # replaced right now
        except (OSError, ValueError) as exc:
            return None, f"damaged index entry ({exc.__class__.__name__})"
        if not isinstance(entry, dict) or entry.get("hash") != path.stem or not is_scenario_hash(path.stem):
            return None, "not an index entry of this app"
        missing = [k for k in INDEX_FIELDS if k not in entry]
        if missing:
            return None, f"index entry without {', '.join(missing)}"
        return entry, None

    def entries(self) -> list[dict]:
        """Entries whose result is still stored and is a bundle (damaged ones: :meth:`skipped`)."""
        entries = []
        for path in self.directory.glob("*.json"):
            entry, _ = self._read(path)
            if entry is not None and self.store.has(entry["hash"]) and self.store.readable(entry["hash"]):
                entries.append(entry)
        return entries

    def skipped(self) -> list[tuple[Path, str]]:
        """``(path, reason)`` of damaged index entries and of stored results that are not bundles."""
        found = []
        for path in sorted(self.directory.glob("*.json")):
            _, reason = self._read(path)
            if reason is not None:
                found.append((path, reason))
        for path in sorted(self.store.directory.glob(f"*{BUNDLE_SUFFIX}")):
            if not is_bundle_file(path):
                found.append((path, "not a result bundle (damaged or foreign); treated as not stored"))
        return found


class RedisIndex:
    """One Redis hash of entries; holds at most ``capacity`` runs, dropping the oldest with their results."""

    def __init__(self, client, store: RedisStore, capacity: int):
        self.client = client
        self.store = store
        self.capacity = capacity

    def add(self, entry: dict) -> None:
        self.client.hset(REDIS_INDEX, entry["hash"], json.dumps(entry))
        if self.client.hlen(REDIS_INDEX) > self.capacity:
            ordered = sorted(self._all(), key=lambda e: (e["finished"], e["hash"]))
            oldest = [e["hash"] for e in ordered[: max(0, len(ordered) - self.capacity)]]
            if oldest:
                self.client.hdel(REDIS_INDEX, *oldest)
                self.store.delete(*oldest)

    def _all(self) -> list[dict]:
        entries = []
        for value in self.client.hgetall(REDIS_INDEX).values():
            try:
                entry = json.loads(value)
            except ValueError:
                continue   # damaged: not listed (skipped() names it)
            if isinstance(entry, dict) and all(k in entry for k in INDEX_FIELDS):
                entries.append(entry)
        return entries

    def skipped(self) -> list[tuple[str, str]]:
        """``(where, reason)`` of the index's damaged entries."""
        found = []
        for field, value in self.client.hgetall(REDIS_INDEX).items():
            try:
                entry = json.loads(value)
            except ValueError:
                entry = None
            if not isinstance(entry, dict) or any(k not in entry for k in INDEX_FIELDS):
                name = field.decode("utf-8", "replace") if isinstance(field, bytes) else str(field)
                found.append((f"Redis {REDIS_INDEX}[{name[:80]}]", "damaged index entry; not listed"))
        return found

    def entries(self) -> list[dict]:
        """Entries whose result is still stored (one round trip for all the checks)."""
        entries = self._all()
        pipe = self.client.pipeline(transaction=False)
        for entry in entries:
            pipe.exists(self.store.key(entry["hash"]))
        return [entry for entry, present in zip(entries, pipe.execute()) if present]
