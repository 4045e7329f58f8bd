"""Files too large for a callback response: prepared by a callback, fetched by the browser over plain HTTP.

A self-contained HTML report inlines plotly.js (about 4.6 MB) and a sweep's
CSV grows with its points, both over the 3 MB bound on a callback response.
The export callback writes the file here and answers only its address, a
few bytes; :func:`link` is a hidden anchor that the browser clicks as soon
as its address changes (``assets/prepared_download.js``), so the user sees
an ordinary download. ``GET /prepared/<token>/<name>`` answers the file as
an attachment.

The token is the SHA-256 of the content and 16 random bytes, so an address
cannot be guessed from what it holds. With a login on, a file is kept
under its owner's directory (named by a hash of the user name) and answered
only to that user (:class:`~components.services.scoped.UserPrepared`): an
address passed to someone else answers 404. Files older than :data:`KEEP_S`
are removed whenever another one is put; a file is never read back into a
callback.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
from pathlib import Path

from dash import ClientsideFunction, Input, Output, html
from flask import Response, abort

from .image_export import safe_filename
from .uploads import DISK_TROUBLE

ROUTE = "/prepared/<token>/<name>"
KEEP_S = 3600.0
TOKEN = re.compile(r"[0-9a-f]{64}")
MIME = {".html": "text/html", ".csv": "text/csv", ".json": "application/json"}
#: What :meth:`PreparedFiles.put` answers, followed by why, instead of an address when the disk refuses the file.
NOT_SAVED = "not-saved:"


class PreparedFiles:
    """Prepared files in ``directory`` (the data directory's ``prepared/``), each kept :data:`KEEP_S` seconds."""

    def __init__(self, directory: str | os.PathLike, keep_s: float = KEEP_S):
        self.directory = Path(directory)
        self.keep_s = keep_s

    def _folder(self, owner: str | None) -> Path:
        """Where ``owner``'s files live: the directory itself without a login, else a folder per user."""
        if owner is None:
            return self.directory
        return self.directory / f"user-{hashlib.sha256(owner.encode('utf-8')).hexdigest()[:32]}"

    def put(self, text: str, name: str, owner: str | None = None) -> str:
        """Store ``text`` as a download named ``name`` (for ``owner`` alone, with a login); returns its address.

        When the disk refuses the file the answer is :data:`NOT_SAVED` and why instead, which the page's
        link (:func:`link`) shows rather than fetches.
        """
        folder = self._folder(owner)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno not in DISK_TROUBLE:
                raise
        self._prune()
        data = text.encode("utf-8")
        token = hashlib.sha256(data + secrets.token_bytes(16)).hexdigest()
        scratch = folder / f".{token}.tmp"
        try:
            scratch.write_bytes(data)
            scratch.replace(folder / token)   # whole or absent: a reader never sees half a file
        except OSError as exc:   # a full, over-quota or read-only disk: the page says so (NOT_SAVED), never a 500
            scratch.unlink(missing_ok=True)
            if exc.errno not in DISK_TROUBLE:
                raise
            store = f"{self.directory.parent.name}/{self.directory.name}"
            return (f"{NOT_SAVED}The prepared-download store ({store}) {DISK_TROUBLE[exc.errno]}: {safe_filename(name)} "
                    "was not saved. Free space in the data directory (or make it writable) and export it again.")
        return f"/prepared/{token}/{safe_filename(name)}"

    def path(self, token: str, owner: str | None = None) -> Path | None:
        """The stored file of ``token`` prepared for ``owner``, or None (unknown, someone else's, expired)."""
        if not TOKEN.fullmatch(token or ""):
            return None
        path = self._folder(owner) / token
        return path if path.is_file() else None

    def _prune(self) -> None:
        cutoff = time.time() - self.keep_s
        for path in [*self.directory.iterdir(), *self.directory.glob("user-*/*")]:
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:   # removed by another worker meanwhile
                continue


def register(server, prepared: PreparedFiles) -> None:
    """Add the route that answers prepared files to the Flask ``server``."""

    @server.get(ROUTE, endpoint="schedscope_prepared")
    def _prepared(token: str, name: str):
        path = prepared.path(token)
        if path is None:
            abort(404, "no prepared file at this address (files are kept an hour: export it again)")
        name = safe_filename(name)
        return Response(path.read_bytes(), mimetype=MIME.get(Path(name).suffix, "application/octet-stream"),
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})


def link(component_id: str) -> html.Span:
    """The hidden anchor a page's export callback points at a prepared file (see :func:`register_link`), and the
    message shown instead when the file could not be saved (:data:`NOT_SAVED`).

    A page puts it in the row of the button that prepares the file: in that row (a flex row) it takes the
    rest of the line and wraps its own text, so why a file was not saved reads beside the button pressed.
    """
    return html.Span([html.A(id=component_id, href="", download="", hidden=True, className="prepared-download"),
                      html.Span(id=message_id(component_id), className="message error")],
                     className="prepared-link", style={"flex": "1 1 16rem", "minWidth": 0})


def message_id(component_id: str) -> str:
    return f"{component_id}-message"


def register_link(app, component_id: str) -> None:
    """Click ``component_id`` in the browser whenever an export callback gives it a new address."""
    app.clientside_callback(ClientsideFunction("schedscope", "downloadPrepared"),
                            Output(component_id, "title"), Output(message_id(component_id), "children"),
                            Input(component_id, "href"), prevent_initial_call=True)
