"""Background runs on Celery workers: the manager and the heartbeat that tells a lost task from a running one.

The behaviour (lost jobs, liveness, waiting for a worker, Redis unreachable)
is described in :mod:`components.services.jobs`, which holds what both
managers share.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import threading
import time
from contextlib import contextmanager

from dash import CeleryManager, callback_context, html

from .jobs import (
    CLIENT_LIST_SECONDS,
    STOPPED_SECONDS,
    TAKEN,
    WAITING,
    CarryUser,
    LostJobs,
    status_outputs,
    stringify_id,
)
from .run_cap import ClientCap
from .run_limits import HARD_LIMIT_GRACE_S, limited, run_cpu_seconds, run_memory_mb
from .runs import ResultStoreUnreachable, reachable, redis_address

log = logging.getLogger(__name__)


class Heartbeat:
    """Keeps ``<prefix>:alive`` fresh in Redis while a job runs (``with Heartbeat(...):``)."""

    def __init__(self, client, prefix: str, period: float, ttl: int, started_ttl: int):
        self.client, self.prefix = client, prefix
        self.period, self.ttl, self.started_ttl = period, ttl, started_ttl
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="schedscope-heartbeat", daemon=True)

    def __enter__(self):
        pipe = self.client.pipeline()
        pipe.set(f"{self.prefix}:alive", 1, ex=self.ttl)
        pipe.set(f"{self.prefix}:started", time.time(), ex=self.started_ttl)   # when: the end of its wait
        pipe.execute()
        self._thread.start()
        return self

    def _beat(self):
        while not self._stop.wait(self.period):
            try:
                self.client.set(f"{self.prefix}:alive", 1, ex=self.ttl)
            except Exception:  # noqa: BLE001 -- a missed beat is retried; the key outlives several
                continue

    def __exit__(self, *exc):
        # The alive key is left to expire: the job's result is written just
        # after this, and until then the job must still count as running.
        self._stop.set()
        self._thread.join()


class CeleryJobManager(CarryUser, ClientCap, LostJobs, CeleryManager):
    """Jobs on Celery workers (any machine), job state and heartbeats in the Celery result backend (Redis).

    Works with the JSON-only Celery app of :mod:`components.scaleout.celery_app`:
    a job's message is (result key, progress key, the callback's arguments,
    the callback context), all JSON from the browser's request, and Dash
    itself writes progress and results as JSON text. Nothing is pickled.
    """

    HEARTBEAT_SECONDS = 2.0
    HEARTBEAT_TTL = 10
    STARTED_TTL = 24 * 3600

    _side = threading.local()   # this request's side update of the status line (see get_updated_props)

    @property
    def _client(self):
        return self.handle.backend.client

    @staticmethod
    def _prefix(job) -> str:
        return f"schedscope:job:{job}"

    @contextmanager
    def _reachable(self):
        """Redis's and the broker's connection errors become :class:`ResultStoreUnreachable` naming the store."""
        from kombu.exceptions import OperationalError

        address = redis_address(self.handle.conf.broker_url)
        try:
            with reachable(address):
                yield
        except OperationalError as exc:
            raise ResultStoreUnreachable(address) from exc

    def call_job_fn(self, key, job_fn, args, context):
        with self._reachable():
            # A quick question first: the broker's own connection retries would keep the page waiting ~20 s.
            self._client.ping()
            job = super().call_job_fn(key, job_fn, args, context)
            self._client.set(f"{self._prefix(job)}:queued", time.time(), ex=self.STARTED_TTL)
        return job

    @contextmanager
    def _cap_lock(self, client):
        with self._client.lock(f"schedscope:client:{client}:lock", timeout=10, blocking_timeout=10):
            yield

    def _cap_load(self, client):
        raw = self._client.get(f"schedscope:client:{client}:runs")
        try:
            entries = json.loads(raw) if raw else []
        except ValueError:
            entries = []
        return entries if isinstance(entries, list) else []

    def _cap_save(self, client, entries):
        self._client.set(f"schedscope:client:{client}:runs", json.dumps(entries), ex=CLIENT_LIST_SECONDS)

    def get_progress(self, key):
        with self._reachable():
            return super().get_progress(key)

    def terminate_job(self, job):
        with self._reachable():
            super().terminate_job(job)

    def get_result(self, key, job):
        self._side.update = None
        with self._reachable():
            result = super().get_result(key, job)
            if result is self.UNDEFINED and job:
                self._side.update = self._queue_update(str(job))
        return result

    def get_updated_props(self, key):
        ours, self._side.update = getattr(self._side, "update", None), None
        with self._reachable():
            theirs = super().get_updated_props(key)
        return {**(ours or {}), **theirs}

    def _queue_update(self, job: str) -> dict | None:
        """The status line of a job still waiting for a worker (how long), or just taken by one after a wait.

        The web server writes ``:queued`` (when it sent the task), the worker
        ``:started`` (when it took it); ``:told`` marks that the page was told
        it waits, so that it is told once when the wait is over.
        """
        prefix = self._prefix(job)
        queued, started = self._client.mget(f"{prefix}:queued", f"{prefix}:started")
        if queued is None:
            return None
        if started is None:
            self._client.set(f"{prefix}:told", 1, ex=self.STARTED_TTL)
            waited = max(0, round(time.time() - float(queued)))
            text, kind = WAITING.format(seconds=waited), "hint"
        elif self._client.delete(f"{prefix}:told"):
            waited = max(0, round(float(started) - float(queued)))
            text, kind = TAKEN.format(seconds=waited), "ok"
        else:
            return None
        message = html.Span(text, className=kind)
        return {stringify_id(spec["id"]): {"children": message} for spec in status_outputs(callback_context.outputs_list)}

    def _mark_stopped(self, job):
        self._client.set(f"{self._prefix(job)}:stopped", 1, ex=STOPPED_SECONDS)

    def _pop_stopped(self, job):
        return bool(self._client.delete(f"{self._prefix(job)}:stopped"))

    def job_running(self, job):
        with self._reachable():
            if not super().job_running(job):
                return False   # finished, failed (a worker process lost mid-task included) or revoked
            pipe = self._client.pipeline()
            pipe.exists(f"{self._prefix(job)}:started")
            pipe.exists(f"{self._prefix(job)}:alive")
            started, alive = pipe.execute()
        return not started or bool(alive)

    def make_job_fn(self, fn, progress, key=None):
        # Dash's own task, around our heartbeat and the run's bounds; acknowledged when taken
        # (celery_app.AckWhenTaken). The bounds are read where the task is built: in the worker, from its
        # environment. The task's hard time limit (wall seconds, read by the worker from the task) is the
        # backstop of the CPU bound, which a pool process cannot make hard (run_limits.limited): twice the
        # CPU bound, so that a run sharing its core with another is not killed within its CPU-seconds.
        cpu_seconds = run_cpu_seconds()
        task = super().make_job_fn(self._with_heartbeat(limited(fn, cpu_seconds, run_memory_mb(), hard=False)),
                                   progress, key)
        task.time_limit = 2 * cpu_seconds + HARD_LIMIT_GRACE_S
        return task

    def _with_heartbeat(self, fn):
        if inspect.iscoroutinefunction(fn):
            return fn   # no async callbacks here; such a job is judged by its task state alone
        manager = self

        @functools.wraps(fn)
        def job(*args, **kwargs):
            from celery import current_task

            beat = Heartbeat(manager._client, manager._prefix(current_task.request.id), manager.HEARTBEAT_SECONDS,
                             manager.HEARTBEAT_TTL, manager.STARTED_TTL)
            with beat:
                return fn(*args, **kwargs)

        return job
