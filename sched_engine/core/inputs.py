"""Input files as content references, resolved on whichever machine runs the scenario.

A model names each file it reads (a workload, a ``.machines`` file, a
failure trace, an elasticity trace) by a *reference*:

``upload:<sha256>``
    a file known by its content: an upload of the web app (stored as
    ``<sha256>.<kind>`` in its uploads directory) or a file named on the
    command line. The scenario, its hash, its messages and its downloads
    hold no path; each machine finds the file in its own directories.
``sample:<name>``
    a file shipped in ``sample_traces/``.
any other text
    a path on this machine (absolute, else relative to the working
    directory, else to the project), as the library has always taken them.
    Normalising maps a path into an uploads directory to its ``upload:``
    reference and a path into ``sample_traces/`` to its ``sample:`` one, so
    scenarios stored with such paths by earlier versions open and hash as before.

:class:`InputFiles` resolves references. The process has one
(:data:`PROCESS_INPUTS`: the web app adds its uploads directory to it,
in every process that serves or runs scenarios); ``normalize_scenario`` and
``run_scenario`` may be given another (the command line's, holding the files
it was given), which :func:`using` makes current while an engine normalises
or runs. Engines call :func:`current`.

Invariant: :meth:`InputFiles.name` and every message here name a file by its
reference or its file name, never by a directory of this machine.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .errors import ScenarioError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = PROJECT_ROOT / "sample_traces"
UPLOAD = "upload:"
SAMPLE = "sample:"
SHA256 = re.compile(r"[0-9a-f]{64}")
#: How content-addressed stores name their files: ``<sha256>.<kind>``.
STORED_FILE = re.compile(r"(?P<sha>[0-9a-f]{64})\.[a-z]+")
#: The directory name of the web app's uploads (``<data dir>/uploads``), recognised in stored paths.
UPLOADS_DIR_NAME = "uploads"


def upload_reference(sha256: str) -> str:
    return f"{UPLOAD}{sha256}"


def is_reference(text: str) -> bool:
    """Whether ``text`` is an ``upload:`` or ``sample:`` reference (rather than a path)."""
    return text.startswith((UPLOAD, SAMPLE))


def stored_reference(text: str) -> str | None:
    """The reference a path of an earlier version stands for, judged from the path and the shipped samples.

    ``<anything>/uploads/<sha256>.<kind>`` -> ``upload:<sha256>``;
    ``<anything>/sample_traces/<name>`` -> ``sample:<name>``; else ``None``.
    """
    if not isinstance(text, str) or is_reference(text) or "/" not in text.replace("\\", "/"):
        return None
    path = Path(text.replace("\\", "/"))
    match = STORED_FILE.fullmatch(path.name)
    if match and path.parent.name == UPLOADS_DIR_NAME:
        return upload_reference(match["sha"])
    if path.parent.name == SAMPLE_DIR.name and path.name and (SAMPLE_DIR / path.name).is_file():
        return f"{SAMPLE}{path.name}"
    return None


def with_references(data: Any) -> Any:
    """``data`` with every ``path`` / ``*_path`` value that :func:`stored_reference` recognises replaced.

    For scenarios stored before files were named by content: they open
    showing references, never the directories of the machine that ran them.
    """
    if isinstance(data, Mapping):
        out = {}
        for key, value in data.items():
            if isinstance(key, str) and (key == "path" or key.endswith("_path")) and isinstance(value, str):
                out[key] = stored_reference(value) or value
            else:
                out[key] = with_references(value)
        return out
    if isinstance(data, list):
        return [with_references(value) for value in data]
    return data


@lru_cache(maxsize=256)
def _sha256_of(path: str, size: int, modified_ns: int) -> str:
    del size, modified_ns   # part of the cache key: a changed file is hashed again
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, computed once per version of the file (size and modification time)."""
    stat = path.stat()
    return _sha256_of(str(path), stat.st_size, stat.st_mtime_ns)


class InputFiles:
    """Where this machine finds the files references name.

    ``directories``: content-addressed directories (files ``<sha256>.<kind>``),
    e.g. the web app's uploads; single files (those named on the command
    line) join through :meth:`add_file`.
    """

    def __init__(self, directories: Iterable[str | os.PathLike] = ()):
        self._directories: list[Path] = []
        self._files: dict[str, Path] = {}   # sha256 -> a local file with that content
        for directory in directories:
            self.add_directory(directory)

    def add_directory(self, directory: str | os.PathLike) -> None:
        """Look for ``upload:`` files in ``directory`` too (the same directory twice is kept once)."""
        directory = Path(directory).resolve()
        if directory not in self._directories:
            self._directories.append(directory)

    def add_file(self, path: str | os.PathLike) -> str:
        """Hash a local file and return its ``upload:`` reference; this resolver then finds it."""
        path = Path(path).expanduser().resolve()
        sha = self._hash(path, "", path.name)
        self._files[sha] = path
        return upload_reference(sha)

    # --- from what a model says to a reference --------------------------------------------------------

    def reference(self, text: Any, field: str) -> str:
        """The canonical reference for what a model names (see the module docstring)."""
        if not isinstance(text, str) or not text.strip():
            raise ScenarioError(field, "name a file")
        if "\x00" in text:
            raise ScenarioError(field, f"not a usable file name: {text!r:.80}")
        if text.startswith(UPLOAD):
            if not SHA256.fullmatch(text[len(UPLOAD):]):
                raise ScenarioError(field, f"{text!r:.80} is not an upload reference (upload:<sha256>)")
            return text
        if text.startswith(SAMPLE):
            name = text[len(SAMPLE):]
            if "/" in name or "\\" in name or not (SAMPLE_DIR / name).is_file():
                known = ", ".join(sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_file()))
                raise ScenarioError(field, f"no sample called {name!r:.80} (samples: {known})")
            return text
        stored = stored_reference(text)
        if stored is not None and stored.startswith(UPLOAD):
            found = self._local(text)
            if found.is_file():
                self._files.setdefault(stored[len(UPLOAD):], found)
            return stored
        local = self._local(text)
        try:
            where = local.resolve().parent   # symbolic links followed: a link out of the samples stays a path
        except (OSError, RuntimeError):
            return text
        if where == SAMPLE_DIR.resolve() and local.is_file():
            return f"{SAMPLE}{local.name}"
        match = STORED_FILE.fullmatch(local.name)
        if match and where in self._directories:
            return upload_reference(match["sha"])
        return text

    # --- from a reference to a file -------------------------------------------------------------------

    def path(self, reference: str, field: str) -> Path:
        """The local file a reference names; a :class:`ScenarioError` naming ``field`` if there is none."""
        if reference.startswith(UPLOAD):
            sha = reference[len(UPLOAD):]
            if not SHA256.fullmatch(sha):   # never a pattern or a path: only 64 hex digits are looked up
                raise ScenarioError(field, f"{reference!r:.80} is not an upload reference (upload:<sha256>)")
            known = self._files.get(sha)
            if known is not None and known.is_file():
                return known
            for directory in self._directories:
                for candidate in sorted(directory.glob(f"{sha}.*")):
                    if STORED_FILE.fullmatch(candidate.name) and candidate.is_file():
                        return candidate
            raise ScenarioError(field, f"the uploaded file {self.name(reference)} is not stored here "
                                       "(any more); upload it again")
        if reference.startswith(SAMPLE):
            name = reference[len(SAMPLE):]
            if "/" in name or "\\" in name or name in ("", ".", ".."):   # a name in sample_traces/, never a path
                raise ScenarioError(field, f"{reference!r:.80} is not a sample reference (sample:<file name>)")
            return SAMPLE_DIR / name
        return self._local(reference)

    def locate(self, reference: str) -> Path:
        """Where the file a reference names is, or would be, on this machine; never raises.

        An upload not stored here is placed in the first uploads directory
        (where it would be stored), so a check of where files may lie judges
        it as an upload.
        """
        try:
            return self.path(reference, "")
        except ScenarioError:
            sha = reference[len(UPLOAD):]
            if SHA256.fullmatch(sha) and self._directories:
                return self._directories[0] / sha
            return Path(reference)

    def sha256(self, reference: str, field: str, label: str) -> str:
        """The content hash of the file a reference names (an upload's is its name: not read again)."""
        if reference.startswith(UPLOAD):
            self.path(reference, field)   # it must be here to run
            return reference[len(UPLOAD):]
        return self._hash(self.path(reference, field), field, label)

    def name(self, reference: str) -> str:
        """What to call the file in a message: the sample's or file's name, else ``upload <sha256 prefix>``."""
        if reference.startswith(UPLOAD):
            known = self._files.get(reference[len(UPLOAD):])
            return known.name if known is not None else f"upload {reference[len(UPLOAD):][:12]}"
        if reference.startswith(SAMPLE):
            return reference[len(SAMPLE):]
        return Path(reference).name or reference

    @staticmethod
    def _local(text: str) -> Path:
        """A path: absolute, else relative to the working directory, else to the project."""
        candidate = Path(text)
        if candidate.is_absolute() or candidate.exists():
            return candidate
        return PROJECT_ROOT / candidate

    @staticmethod
    def _hash(path: Path, field: str, label: str) -> str:
        try:
            return file_sha256(path)
        except OSError as exc:
            raise ScenarioError(field, f"cannot read {label} ({exc.strerror})") from None
        except ValueError:   # a NUL byte in the name: no such file can exist
            raise ScenarioError(field, f"not a usable file name: {label!r:.80}") from None


def named_by_content(data: Any, files: InputFiles, *, parent: str = "") -> Any:
    """``data`` with every ``path`` / ``*_path`` naming a local file replaced by its ``upload:`` reference.

    The files are added to ``files`` (which then resolves the references);
    a ``trace`` without a ``label`` is labelled with its file's name. For the
    command line: what it writes and hashes holds no path of this machine.
    References, and paths to no file (left for the engine to report), are
    kept as they are.
    """
    if isinstance(data, list):
        return [named_by_content(value, files, parent=parent) for value in data]
    if not isinstance(data, Mapping):
        return data
    out = {}
    for key, value in data.items():
        if isinstance(key, str) and (key == "path" or key.endswith("_path")) and isinstance(value, str) \
                and value and not is_reference(value) and "\x00" not in value and InputFiles._local(value).is_file():
            out[key] = files.add_file(InputFiles._local(value))
            if key == "path" and parent == "trace" and not data.get("label"):
                out["label"] = Path(value).name
        else:
            out[key] = named_by_content(value, files, parent=str(key))
    return out


#: This process's resolver: the web app adds its uploads directory (``components/services/uploads.py``).
PROCESS_INPUTS = InputFiles()
_CURRENT: contextvars.ContextVar[InputFiles | None] = contextvars.ContextVar("schedscope_inputs", default=None)


def current() -> InputFiles:
    """The resolver of the scenario being normalised or run (:data:`PROCESS_INPUTS` unless one was given)."""
    return _CURRENT.get() or PROCESS_INPUTS


@contextmanager
def using(inputs: InputFiles | None) -> Iterator[InputFiles]:
    """Make ``inputs`` current for the ``with`` block (``None``: keep the current one)."""
    if inputs is None:
        yield current()
        return
    token = _CURRENT.set(inputs)
    try:
        yield inputs
    finally:
        _CURRENT.reset(token)
