"""Who may see what, with a login on: each run, saved scenario, upload and sweep has owners and a list it is
shared with.

Runs, saved scenarios, uploads and sweeps are content-addressed and stored
once whoever made them; visibility is a separate record per item, a
:class:`Grant`, keyed by the item's kind (:data:`KINDS`) and content key
(a run's or scenario's hash, an upload's sha256, a sweep's spec hash):

* ``owners``: every user who made the item -- ran the run (a run found in
  the cache counts: the user asked for it), saved the scenario, uploaded the
  file. Two users uploading the same bytes both own them: each holds the
  content already.
* ``shared``: the users an owner shared it with, or :data:`EVERYONE` (every
  signed-in user). Any owner may change it; sharing replaces the list.

An item with no record at all was made while the app had no login (before
it was turned on): it is *made before sign-in*. Every signed-in user sees
it, as everyone who reached the app saw it then, and nobody owns it: nobody
can share or hide it, and using it again (a cached run asked for, the same
file uploaded) leaves it so (:meth:`Access.own` with ``existed``). The
Workspace page marks it. A new item gets its record before it is stored
(the scoped views own first), so it never passes for one made before sign-in.

Grants live where every server process and worker sees them: one small JSON
file per item under ``<data>/access/<kind>/`` (an update holds an exclusive
``flock`` on ``access/.lock``, so two processes never lose each other's
owner), or, with ``REDIS_URL``, one Redis hash per kind
(``schedscope:access:<kind>``, updated in a ``WATCH`` transaction; an unreachable Redis raises
:class:`~components.services.runs.ResultStoreUnreachable`, as results do).
A damaged record reads as no grant (nobody sees the item) and is logged.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from sched_engine import ScenarioError

from .data_check import report_once
from .runs import REDIS_CONNECT_TIMEOUT_S, reachable, redis_address
from .storage import atomic_write
from .uploads import DISK_TROUBLE

log = logging.getLogger(__name__)

RUN, SCENARIO, UPLOAD, SWEEP = "run", "scenario", "upload", "sweep"
KINDS = (RUN, SCENARIO, UPLOAD, SWEEP)
EVERYONE = "*"
KEY = re.compile(r"[0-9a-f]{64}")
#: A user name as the users file and the share form take it: no spaces, commas or colons.
USER_NAME = re.compile(r"[^\s,:*]{1,80}")
REDIS_PREFIX = "schedscope:access:"
DAMAGED = "damaged sharing record; the item is seen by nobody until an owner uses it again"


class NotAllowed(PermissionError):
    """A user tried to change the sharing of an item they do not own; the text says so."""


@dataclass(frozen=True)
class Grant:
    owners: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()

    def visible_to(self, user: str | None) -> bool:
        return user is not None and (user in self.owners or user in self.shared or EVERYONE in self.shared)

    def to_json(self) -> str:
        return json.dumps({"owners": list(self.owners), "shared": list(self.shared)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes, where: str) -> Grant:
        """The grant in ``text``; a damaged one is logged and grants nothing."""
        try:
            value = json.loads(text)
            owners, shared = value["owners"], value["shared"]
            if not all(isinstance(n, str) for n in [*owners, *shared]):
                raise ValueError("names must be strings")
            return cls(tuple(owners), tuple(shared))
        except (ValueError, TypeError, KeyError):
            report_once(where, DAMAGED, log)
            return cls()


def _readable(text: str | bytes) -> bool:
    try:
        value = json.loads(text)
        return all(isinstance(n, str) for n in [*value["owners"], *value["shared"]])
    except (ValueError, TypeError, KeyError):
        return False


def _check(kind: str, key: str) -> None:
    if kind not in KINDS or not isinstance(key, str) or not KEY.fullmatch(key):
        raise ValueError(f"no item {kind}:{str(key)[:80]}")


class AccessRecordsFull(ScenarioError):
    """The access records could not be written (full, over quota, read-only): the item was not saved either.

    A :class:`~sched_engine.ScenarioError`, so a run or a saved scenario is refused with it as with any other
    reason; the stores' views (:mod:`.scoped`) turn it into their own refusal (an upload's
    :class:`~components.services.uploads.UploadError`).
    """

    def __init__(self, store: str, code: int, kind: str):
        super().__init__("", f"the access records ({store}) {DISK_TROUBLE[code]}: who owns this {kind} could not be "
                             f"written, so the {kind} was not saved; earlier items and results are kept. Free space in "
                             "the data directory (or make it writable) and try again")


class FileGrants:
    """Grants as files, ``<directory>/<kind>/<key>.json``; updates under one exclusive ``flock``."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        for kind in KINDS:
            (self.directory / kind).mkdir(parents=True, exist_ok=True)

    def _path(self, kind: str, key: str) -> Path:
        return self.directory / kind / f"{key}.json"

    def read(self, kind: str, keys: Iterable[str]) -> dict[str, Grant]:
        found = {}
        for key in keys:
            path = self._path(kind, key)
            try:
                found[key] = Grant.from_json(path.read_bytes(), f"access/{kind}/{path.name}")
            except FileNotFoundError:
                continue
        return found

    def skipped(self) -> list[tuple[Path, str]]:
        """``(path, reason)`` of the grant files that cannot be read (their items are seen by nobody)."""
        found = []
        for kind in KINDS:
            for path in sorted((self.directory / kind).glob("*.json")):
                try:
                    text = path.read_bytes()
                except OSError:
                    continue
                if not _readable(text):
                    found.append((path, DAMAGED))
        return found

    @contextmanager
    def _locked(self) -> Iterator[None]:
        descriptor = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)   # closing releases the lock

    def update(self, kind: str, key: str, change: Callable[[Grant], Grant]) -> Grant:
        """Write the changed grant; a full, over-quota or read-only disk raises :class:`AccessRecordsFull`."""
        try:
            with self._locked():
                grant = change(self.read(kind, [key]).get(key, Grant()))
                atomic_write(self._path(kind, key), grant.to_json().encode())
        except OSError as exc:
            if exc.errno not in DISK_TROUBLE:
                raise
            raise AccessRecordsFull(f"{self.directory.parent.name}/{self.directory.name}", exc.errno, kind) from None
        return grant


class RedisGrants:
    """Grants in Redis, one hash per kind (``schedscope:access:<kind>``, field: the key)."""

    def __init__(self, client, address: str):
        self.client, self.address = client, address

    def read(self, kind: str, keys: Iterable[str]) -> dict[str, Grant]:
        keys = list(keys)
        if not keys:
            return {}
        with reachable(self.address):
            values = self.client.hmget(REDIS_PREFIX + kind, keys)
        return {key: Grant.from_json(value, f"Redis {REDIS_PREFIX}{kind}[{key}]")
                for key, value in zip(keys, values) if value is not None}

    def update(self, kind: str, key: str, change: Callable[[Grant], Grant]) -> Grant:
        name = REDIS_PREFIX + kind
        made = []

        def transaction(pipe):
            value = pipe.hget(name, key)
            grant = change(Grant() if value is None else Grant.from_json(value, f"Redis {name}[{key}]"))
            pipe.multi()
            pipe.hset(name, key, grant.to_json())
            made[:] = [grant]

        with reachable(self.address):
            self.client.transaction(transaction, name)
        return made[0]

    def skipped(self) -> list[tuple[str, str]]:
        """``(where, reason)`` of the grants that cannot be read."""
        with reachable(self.address):
            return [(f"Redis {REDIS_PREFIX}{kind}[{field.decode('utf-8', 'replace')[:80]}]", DAMAGED)
                    for kind in KINDS for field, value in self.client.hgetall(REDIS_PREFIX + kind).items()
                    if not _readable(value)]


class Access:
    """Owners and sharing of every item; ``backend`` is a :class:`FileGrants` or a :class:`RedisGrants`."""

    def __init__(self, backend):
        self.backend = backend

    def skipped(self) -> list[tuple]:
        """What :mod:`.data_check` lists: the damaged grants."""
        return self.backend.skipped()

    def own(self, kind: str, key: str, user: str | None, *, existed: bool = False) -> None:
        """Make ``user`` an owner of the item (nothing without a user).

        ``existed``: the item is stored already. One stored with no record
        was made before sign-in and stays ownerless (seen by every signed-in
        user); call this before storing a new item, so that it has its record
        before anyone can see it.
        """
        _check(kind, key)
        if user is None:
            return
        record = self.backend.read(kind, [key]).get(key)
        if record is None and existed:
            return
        if record is not None and user in record.owners:   # the common case (a cached run asked again): no write
            return
        self.backend.update(kind, key, lambda g: g if user in g.owners else Grant((*g.owners, user), g.shared))

    def grant(self, kind: str, key: str) -> Grant:
        """The item's grant; an item with no record (made before sign-in) has the empty one."""
        _check(kind, key)
        return self.backend.read(kind, [key]).get(key, Grant())

    def grants(self, kind: str, keys: Iterable[str]) -> dict[str, Grant]:
        """The grants of ``keys`` that have a record (one read for them all with Redis)."""
        return self.backend.read(kind, [k for k in keys if isinstance(k, str) and KEY.fullmatch(k)])

    def sees(self, kind: str, key: str, user: str | None) -> bool:
        """Whether ``user`` sees the item: by its record, or any signed-in user when it has none."""
        if kind not in KINDS or not isinstance(key, str) or not KEY.fullmatch(key):
            return False
        record = self.backend.read(kind, [key]).get(key)
        return user is not None if record is None else record.visible_to(user)

    def visible(self, kind: str, keys: Iterable[str], user: str | None) -> set[str]:
        """Those of ``keys`` that ``user`` sees (:meth:`sees`), in one read."""
        keys = {k for k in keys if isinstance(k, str) and KEY.fullmatch(k)}
        records = self.backend.read(kind, keys)
        return {key for key in keys if (user is not None if key not in records else records[key].visible_to(user))}

    def share(self, kind: str, key: str, user: str | None, names: Iterable[str]) -> Grant:
        """Share the item with exactly ``names`` (:data:`EVERYONE` for every signed-in user); owners only.

        Raises :class:`NotAllowed` for a user who does not own the item, and
        ``ValueError`` naming a name that is not a user name.
        """
        _check(kind, key)
        shared = []
        for name in names:
            if name != EVERYONE and not USER_NAME.fullmatch(name):
                raise ValueError(f"{name[:80]!r} is not a user name (no spaces, commas or colons)")
            if name not in shared:
                shared.append(name)

        def change(grant: Grant) -> Grant:
            if user is None or user not in grant.owners:
                raise NotAllowed("only an owner of an item can share it")
            return Grant(grant.owners, tuple(n for n in shared if n not in grant.owners))

        return self.backend.update(kind, key, change)


def open_access(data_dir: str | os.PathLike, redis_url: str | None = None) -> Access:
    """The app's grants: in Redis with ``redis_url`` (where the workers see them), else in ``<data>/access``."""
    if redis_url:
        import redis  # needed only when scaling out

        client = redis.Redis.from_url(redis_url, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S)
        return Access(RedisGrants(client, redis_address(redis_url)))
    return Access(FileGrants(Path(data_dir) / "access"))
