"""Running scenarios for the app: a result store keyed by scenario hash.

Each result is stored as one *bundle* (``SimulationResult.to_bundle``: a zip
of three zstd-compressed Parquet files -- jobs, timeline, summary -- and a
small JSON document with the scenario, its hash and the wall time) under the
content hash of the normalised scenario, never the repr of arguments. A
450,000-job result loads in a fraction of a second. Nothing read from the
store is ever unpickled. Each result also gets a small index entry (engine,
policy, name, seed, when, wall time, jobs) so pages such as Compare can list
finished runs without loading them. They live in one of two places, with the
same behaviour:

On this machine (the default)
    ``<directory>/store/<hash>.parquet.zip``, shared by the web process and
    the background-callback processes (a server restart keeps them), and one
    index file per run, ``<directory>/index/<hash>.json``. Both are written
    atomically (:func:`~components.services.storage.atomic_write`: readers see the old
    file or the new one, never a partial one). Beyond ``capacity`` results the
    oldest written go; the writer that prunes holds an exclusive ``flock`` on
    ``store/.lock``, so writers in several processes never prune on stale
    listings.

In Redis (``redis_url=``; the app passes its ``REDIS_URL``)
    flask-caching's Redis backend (values stored as they are, never
    pickled): keys ``schedscope:result:<hash>`` hold the same bundle bytes, so the web
    server and the Celery workers on any machine share them. The index is the
    Redis hash ``schedscope:runs`` (field: the scenario hash, value: the
    entry as JSON). Beyond ``capacity`` runs the oldest finished ones are
    dropped, result and index entry together.

Results stored by earlier versions are still read, and rewritten as bundles
the first time they are read:

* files of flask-caching's ``FileSystemCache`` in ``store/``, named by the
  sha256 of ``result:<hash>``: a 4-byte expiry time, then a pickle of the
  JSON text (``SimulationResult.to_json``). The text is taken out of the
  pickle by a disassembler (:func:`~components.services.result_store.pickled_str`), never by unpickling; that
  backend's count file, also a pickle, is never opened.
* Redis values holding zlib-compressed JSON text.

Anything unreadable (damaged, foreign, planted) is logged and reads as a miss.

A Redis that cannot be reached is no miss: every operation then raises
:class:`ResultStoreUnreachable`, whose text names the store's address, and
the app's error handler shows that sentence on the page.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import urlsplit

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from sched_engine import SimulationResult, normalize_scenario, run_scenario

from .result_store import FileIndex, FileStore, RedisIndex, RedisStore, is_scenario_hash, result_key
from .uploads import DISK_TROUBLE

logger = logging.getLogger(__name__)

MEMO_SIZE = 24
#: Seconds to wait for a connection to Redis before calling it unreachable.
REDIS_CONNECT_TIMEOUT_S = 5


class ResultStoreUnreachable(RedisConnectionError):
    """Redis, where results (and with Celery the jobs) live, does not answer; the text names its address."""

    def __init__(self, address: str):
        super().__init__(f"the result store (Redis at {address}) is unreachable")
        self.address = address


class ResultStoreFull(ResultStoreUnreachable):
    """The result store's disk is full, over quota or read-only: a finished run could not be kept.

    A kind of :class:`ResultStoreUnreachable` so that the page shows its sentence the same way.
    """

    def __init__(self, directory: Path, code: int, run: str):
        store = f"{directory.parent.name}/{directory.name}"
        RedisConnectionError.__init__(self, f"the result store ({store}) {DISK_TROUBLE[code]}: the result of {run} "
                                            f"was not saved; earlier uploads and results are kept")
        self.address = store


def redis_address(url: str) -> str:
    """``host:port`` of a Redis URL (its socket path for ``unix://``); never its password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"


@contextmanager
def reachable(address: str) -> Iterator[None]:
    """Turn Redis's connection errors inside the block into :class:`ResultStoreUnreachable`."""
    try:
        yield
    except ResultStoreUnreachable:
        raise
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise ResultStoreUnreachable(address) from exc



class ResultCache:
    """Results addressed by the scenario's content hash: on disk, or in Redis with ``redis_url``."""

    def __init__(self, directory: str | Path, capacity: int = 2000, redis_url: str | None = None):
        if redis_url:
            import redis  # needed only when scaling out

            client = redis.Redis.from_url(redis_url, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S)
            self._store = RedisStore(client)
            self._index = RedisIndex(client, self._store, capacity)
            self._address = redis_address(redis_url)
        else:
            # Two sibling directories: the store prunes its own entries only.
            self._store = FileStore(Path(directory) / "store", capacity)
            self._index = FileIndex(Path(directory) / "index", self._store)
            self._address = None
        # Recently read results of this process (results are immutable).
        self._memo: OrderedDict[str, SimulationResult] = OrderedDict()

    @staticmethod
    def key(scenario_hash: str) -> str:
        return result_key(scenario_hash)

    def has(self, scenario_hash: str) -> bool:
        """Whether a result is stored under ``scenario_hash``, without reading it."""
        if not is_scenario_hash(scenario_hash):
            return False
        if scenario_hash in self._memo:
            return True
        with self._reachable():
            return self._store.has(scenario_hash)

    def get(self, scenario_hash: str) -> SimulationResult | None:
        if not is_scenario_hash(scenario_hash):
            return None
        if scenario_hash in self._memo:
            self._memo.move_to_end(scenario_hash)
            return self._memo[scenario_hash]
        with self._reachable():
            result = self._store.read(scenario_hash)
        if result is None:
            return None
        self._memo[scenario_hash] = result
        if len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)
        return result

    def _reachable(self):
        return reachable(self._address) if self._address else nullcontext()

    def put(self, result: SimulationResult) -> None:
        scenario = result.scenario
        with self._reachable(), self._disk_trouble(result):
            self._store.write(result)
            self._index.add({"hash": result.scenario_hash, "engine": scenario["engine"], "policy": scenario["policy"],
                             "name": scenario.get("name", ""), "seed": scenario.get("seed", 0),
                             "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                             "wall_seconds": result.wall_seconds, "jobs": len(result.jobs)})

    @contextmanager
    def _disk_trouble(self, result: SimulationResult) -> Iterator[None]:
        """A full or read-only disk under the file store becomes :class:`ResultStoreFull`, naming the run."""
        kept = self._address is None and self._store.has(result.scenario_hash)
        try:
            yield
        except OSError as exc:
            if self._address or exc.errno not in DISK_TROUBLE:
                raise
            if not kept:   # stored but not indexed: not listed, so not kept either
                self._store.path(result.scenario_hash).unlink(missing_ok=True)
            run = repr(result.scenario.get("name")) if result.scenario.get("name") else "this run"
            raise ResultStoreFull(self._store.directory, exc.errno, run) from None

    def skipped(self) -> list[tuple]:
        """``(file or key, reason)`` of what the store holds and cannot use (see :mod:`.data_check`)."""
        with self._reachable():
            return self._index.skipped()

    def listing(self) -> list[dict]:
        """Index entries of the stored runs, newest first (entries whose result was evicted are left out)."""
        with self._reachable():
            entries = self._index.entries()
        return sorted(entries, key=lambda e: (e["finished"], e["hash"]), reverse=True)

    def run(
        self, scenario: Mapping[str, Any], progress: Callable[[float], None] | None = None
    ) -> tuple[SimulationResult, bool]:
        """Return ``(result, came_from_cache)``; simulates only on a miss.

        Raises :class:`~sched_engine.ScenarioError` for invalid scenarios.
        """
        normal = normalize_scenario(scenario)
        cached = self.get(normal.content_hash())
        if cached is not None:
            return cached, True
        result = run_scenario(normal, progress=progress)
        self.put(result)
        return result, False


def loaded_runs(results: ResultCache, records) -> list[tuple[dict, SimulationResult]]:
    """``(record, result)`` for every run record (a dict with its ``hash``) whose result is still in the cache."""
    pairs = [(record, results.get(record["hash"])) for record in records or []]
    return [(record, result) for record, result in pairs if result is not None]


#: How a sizing search names each of its probe runs (components/pages/batch/sizing.py, ``probe_name``):
#: ``sizing probe: <what it varies> · <the name of the run it sized>``.
PROBE_PREFIX = "sizing probe: "


def runs_and_searches(entries: list[dict]) -> tuple[list[dict], list[dict]]:
    """Index entries split into runs and sizing searches, so a search's probes never crowd out the runs.

    Returns ``(runs, searches)`` in the entries' order (newest first). A
    search is ``{"label", "engine", "policy", "seed", "finished", "probes"}``:
    the probes of one search share the sized run's name, engine, policy
    and seed; each probe is its entry with ``"varied"`` (e.g. ``pool of 349
    CPUs``); ``finished`` is its newest probe's.
    """
    runs, searches = [], {}
    for entry in entries:
        name = entry.get("name") or ""
        if not name.startswith(PROBE_PREFIX):
            runs.append(entry)
            continue
        varied, _, sized = name[len(PROBE_PREFIX):].partition(" · ")
        key = (sized, entry["engine"], entry["policy"], entry["seed"])
        search = searches.setdefault(key, {"label": sized or "a run", "engine": entry["engine"],
                                           "policy": entry["policy"], "seed": entry["seed"],
                                           "finished": entry["finished"], "probes": []})
        search["probes"].append({**entry, "varied": varied})
    return runs, list(searches.values())
