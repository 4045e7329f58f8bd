"""The app's stores as the signed-in user sees them: their own items and those shared with them.

With a login on, the app hands every page these views instead of the stores
themselves (``app.create_app``), so no page can list, open, run or download
what its user may not see. Each view asks :func:`~components.services.login.current_user`
at every call (the request's user, or in a background run the user who
started it) and the :class:`~components.services.access.Access` grants:

:class:`UserResults`
    lists the runs the user sees; ``get``/``has`` of any other hash answer
    as for a hash never run (a permalink or a download then answers 404, so
    nobody learns that it exists); ``run`` refuses a scenario that names an
    upload the user does not see, then makes the user an owner of the run
    (also when it came from the cache: they asked for it).
:class:`UserUploads`
    lists the user's uploads; ``path_of``/``reference_of`` of any other
    stored name is refused as an unknown one; a file saved makes its user an
    owner.
:class:`UserScenarios`
    lists and opens the user's saved scenarios; saving one checks its
    uploads as a run does and makes the user an owner.
:class:`UserSweeps`
    lists and opens the user's sweeps; running one makes the user an owner
    (also when its table came from the store). A sweep opens only when the
    user also sees every upload its spec names (a calibrate sweep of an
    uploaded log); any other answers as a sweep never run. The Sweeps page
    offers, and accepts, only the user's uploads to run one on.
:class:`UserPrepared`
    keeps each prepared download (a report, a sweep's CSV) for the user who
    prepared it: its address answers 404 to anyone else.

A new item's owner is written before the item is stored, so there is no
moment when it has no record and would pass for one made before sign-in
(seen by every signed-in user, :mod:`.access`); an item stored already with
no record stays that way.

What the views do not define they pass to the store (``skipped``, ``key``,
``max_bytes``...).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.batch.model import resolve_path
from sched_engine.core.inputs import STORED_FILE, UPLOAD, stored_reference

from .access import RUN, SCENARIO, SWEEP, Access, AccessRecordsFull
from .access import UPLOAD as UPLOAD_KIND
from .login import current_user
from .uploads import UploadError
from .workspace import input_paths

NOT_YOURS = "no upload of yours has this content ({name}); upload the file yourself and use it from the page"


class _View:
    def __init__(self, store, access: Access, user: Callable[[], str | None] = current_user):
        self._store, self._access, self._user = store, access, user

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def upload_sha(value: str, uploads_dir: Path) -> str | None:
    """The sha256 of the stored upload a scenario's file entry names (a reference or a path into the uploads), else None."""
    if value.startswith(UPLOAD):
        return value[len(UPLOAD):]
    reference = stored_reference(value)
    if reference and reference.startswith(UPLOAD):
        return reference[len(UPLOAD):]
    try:
        resolved = resolve_path(value).resolve()   # as the engines resolve it, symbolic links followed
    except (OSError, ValueError, RuntimeError):
        return None
    if resolved.is_relative_to(uploads_dir.resolve()):
        match = STORED_FILE.fullmatch(resolved.name)
        return match["sha"] if match else "?"   # a file of the uploads that no upload is: nobody's
    return None


def check_uploads(scenario: Mapping[str, Any], access: Access, user: str | None, uploads_dir: Path,
                  source: str | None = None) -> None:
    """Raise :class:`ScenarioError` on the first file entry naming an upload that ``user`` does not see."""
    for field, value in input_paths(scenario):
        if not isinstance(value, str):
            continue
        sha = upload_sha(value, uploads_dir)
        if sha is not None and not access.sees(UPLOAD_KIND, sha, user):
            raise ScenarioError(field, NOT_YOURS.format(name=f"{UPLOAD}{sha[:12]}…"), source=source)


class UserResults(_View):
    """The :class:`~components.services.runs.ResultCache` as the current user sees it."""

    def __init__(self, store, access: Access, uploads_dir: Path, user=current_user):
        super().__init__(store, access, user)
        self._uploads_dir = Path(uploads_dir)

    def _sees(self, scenario_hash: str) -> bool:
        return self._access.sees(RUN, scenario_hash, self._user())

    def has(self, scenario_hash: str) -> bool:
        return self._sees(scenario_hash) and self._store.has(scenario_hash)

    def get(self, scenario_hash: str):
        return self._store.get(scenario_hash) if self._sees(scenario_hash) else None

    def listing(self) -> list[dict]:
        entries = self._store.listing()
        seen = self._access.visible(RUN, [e["hash"] for e in entries], self._user())
        return [e for e in entries if e["hash"] in seen]

    def _own(self, scenario_hash: str, user: str | None) -> None:
        self._access.own(RUN, scenario_hash, user, existed=self._store.has(scenario_hash))

    def put(self, result) -> None:
        self._own(result.scenario_hash, self._user())
        self._store.put(result)

    def run(self, scenario: Mapping[str, Any], progress=None):
        user = self._user()
        check_uploads(scenario, self._access, user, self._uploads_dir)
        self._own(normalize_scenario(scenario).content_hash(), user)
        return self._store.run(scenario, progress=progress)


class UserUploads(_View):
    """The :class:`~components.services.uploads.UploadStore` as the current user sees it."""

    def _sees(self, name: str) -> bool:
        match = STORED_FILE.fullmatch(name) if isinstance(name, str) else None
        return bool(match) and self._access.sees(UPLOAD_KIND, match["sha"], self._user())

    def listing(self) -> list[dict]:
        entries = self._store.listing()
        seen = self._access.visible(UPLOAD_KIND, {e["name"].partition(".")[0] for e in entries}, self._user())
        return [e for e in entries if e["name"].partition(".")[0] in seen]

    def path_of(self, name: str) -> Path:
        if not self._sees(name):
            raise UploadError("not the name of a stored upload")
        return self._store.path_of(name)

    def reference_of(self, name: str) -> str:
        self.path_of(name)
        return self._store.reference_of(name)

    def save(self, data: bytes, kind: str, label: str | None = None, meta: dict | None = None) -> Path:
        target = self._store.target(data, kind)
        try:
            self._access.own(UPLOAD_KIND, target.name.partition(".")[0], self._user(), existed=target.is_file())
        except AccessRecordsFull as exc:   # said as any refused upload is, naming the file
            raise UploadError(f"{label or 'the file'} was not saved: {exc.message}") from None
        return self._store.save(data, kind, label, meta)

    def save_data_url(self, contents: str, kind: str, label: str | None = None, meta: dict | None = None) -> Path:
        return self.save(self._store.data_of(contents), kind, label, meta)


class UserScenarios(_View):
    """The :class:`~components.services.workspace.ScenarioStore` as the current user sees it."""

    def __init__(self, store, access: Access, uploads_dir: Path, user=current_user):
        super().__init__(store, access, user)
        self._uploads_dir = Path(uploads_dir)

    def get(self, scenario_hash: str) -> dict | None:
        if not self._access.sees(SCENARIO, scenario_hash, self._user()):
            return None
        return self._store.get(scenario_hash)

    def listing(self) -> list[dict]:
        entries = self._store.listing()
        seen = self._access.visible(SCENARIO, [e["hash"] for e in entries], self._user())
        return [e for e in entries if e["hash"] in seen]

    def save(self, scenario: Mapping[str, Any], name: str, *, source: str | None = None) -> dict:
        user = self._user()
        check_uploads(scenario, self._access, user, self._uploads_dir, source)
        key = self._store.key_of(scenario, name, source=source)
        self._access.own(SCENARIO, key, user, existed=self._store.get(key) is not None)
        return self._store.save(scenario, name, source=source)


class UserSweeps(_View):
    """The Sweeps page's :class:`~components.pages.sweeps.store.SweepStore` as the current user sees it."""

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def get(self, key: str) -> dict | None:
        user = self._user()
        if not self._access.sees(SWEEP, key, user):
            return None
        record = self._store.get(key)
        if record is None:
            return None
        named = [value[len(UPLOAD):] for value in record["spec"].values()
                 if isinstance(value, str) and value.startswith(UPLOAD)]
        return record if all(self._access.sees(UPLOAD_KIND, sha, user) for sha in named) else None

    def listing(self) -> list[dict]:
        entries = self._store.listing()
        seen = self._access.visible(SWEEP, [e["hash"] for e in entries], self._user())
        return [e for e in entries if e["hash"] in seen]

    def put(self, key: str, run) -> None:
        self._access.own(SWEEP, key, self._user(), existed=self._store.has(key))
        self._store.put(key, run)

    def run(self, spec, progress):
        key = self._store.key_of(spec)
        self._access.own(SWEEP, key, self._user(), existed=self._store.has(key))
        return self._store.run(spec, progress)


class UserPrepared(_View):
    """The :class:`~components.services.prepared.PreparedFiles` of the current user alone."""

    def put(self, text: str, name: str) -> str:
        return self._store.put(text, name, owner=self._user())

    def path(self, token: str):
        return self._store.path(token, owner=self._user())


def user_services(services, access: Access, uploads_dir: Path):
    """``services`` with every store seen through the current user, and ``access`` set."""
    return replace(services, results=UserResults(services.results, access, uploads_dir),
                   uploads=UserUploads(services.uploads, access),
                   scenarios=UserScenarios(services.scenarios, access, uploads_dir),
                   sweeps=services.sweeps and UserSweeps(services.sweeps, access),
                   prepared=services.prepared and UserPrepared(services.prepared, access), access=access)
