"""At most N runs at once per client: one more is refused at once, with a sentence on the page.

**The client.** A browser gets a random cookie (:data:`CLIENT_COOKIE`) with
its first page, so all its tabs count together; a client without cookies
(a script) is counted per page load, by the page's ``endId`` that every
callback request carries.

**The count** is taken when a run is asked for, from the job store every
server process shares (the jobs' database, or Redis with Celery): the
client's list of jobs, each still counted while the manager says it is
running (its process alive, or its Celery task queued or running). Nothing
is counted in process memory and no lock is held while a job's process is
forked: the list is read and a place reserved in one short transaction,
the job started outside it, and the place then given the job's id (a place
whose start failed is given back; one whose server died mid-start lapses
after :data:`RESERVATION_S`).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from contextlib import contextmanager

from flask import has_request_context, request

from .run_limits import whole_number_setting

CAP_ENV = "SCHEDSCOPE_MAX_RUNS_PER_CLIENT"
DEFAULT_CAP = 4
CLIENT_COOKIE = "schedscope_client"
RESERVATION_S = 60
REFUSED = ("Not started: this browser already has {count} runs going, the most allowed at once "
           f"({CAP_ENV}). Wait for one to finish, or cancel one, then press Run again.")


class RunRefused(RuntimeError):
    """A run refused because its client has as many going as allowed; the message says so."""


def max_runs_per_client(environ=None) -> int:
    """``SCHEDSCOPE_MAX_RUNS_PER_CLIENT`` (default :data:`DEFAULT_CAP`); 0 turns the cap off."""
    return whole_number_setting(environ, CAP_ENV, DEFAULT_CAP, "runs", minimum=0, minimum_text="0 (no cap) or more")


def client_id() -> str | None:
    """The current request's client: its cookie, else its page load; None outside a request."""
    if not has_request_context():
        return None
    cookie = request.cookies.get(CLIENT_COOKIE)
    raw = f"cookie:{cookie}" if cookie else f"page:{request.args.get('endId', '')}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def install_client_cookie(server) -> None:
    """Give every browser that has none a random client cookie with its page."""
    @server.after_request
    def _client_cookie(response):
        if request.method == "GET" and response.mimetype == "text/html" and CLIENT_COOKIE not in request.cookies:
            response.set_cookie(CLIENT_COOKIE, secrets.token_urlsafe(18), httponly=True, samesite="Lax")
        return response


class ClientCap:
    """Manager mix-in: refuse a client's run beyond :attr:`cap` running ones (0: no cap).

    Subclasses keep each client's list where every server process sees it:
    :meth:`_cap_lock` (a short exclusive section), :meth:`_cap_load`, :meth:`_cap_save`.
    """

    cap = 0

    @contextmanager
    def _cap_lock(self, client: str):
        raise NotImplementedError
        yield

    def _cap_load(self, client: str) -> list[dict]:
        raise NotImplementedError

    def _cap_save(self, client: str, entries: list[dict]) -> None:
        raise NotImplementedError

    def call_job_fn(self, key, job_fn, args, context):
        client = client_id() if self.cap else None
        if client is None:
            return super().call_job_fn(key, job_fn, args, context)
        token = secrets.token_hex(8)
        self._reserve(client, token)
        job = None
        try:
            job = super().call_job_fn(key, job_fn, args, context)
        finally:
            self._settle(client, token, job)
        return job

    def _live(self, entries: list[dict]) -> list[dict]:
        now = time.time()
        return [e for e in entries
                if (e.get("job") is None and now - e.get("at", 0) < RESERVATION_S)
                or (e.get("job") is not None and self.job_running(e["job"]))]

    def _reserve(self, client: str, token: str) -> None:
        with self._cap_lock(client):
            entries = self._live(self._cap_load(client))
            if len(entries) >= self.cap:
                raise RunRefused(REFUSED.format(count=len(entries)))
            self._cap_save(client, entries + [{"token": token, "job": None, "at": time.time()}])

    def _settle(self, client: str, token: str, job) -> None:
        with self._cap_lock(client):
            entries = [e for e in self._cap_load(client) if e.get("token") != token]
            if job is not None:
                entries.append({"token": token, "job": str(job), "at": time.time()})
            self._cap_save(client, entries)
