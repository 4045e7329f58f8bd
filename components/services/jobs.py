"""Background-callback managers: Dash's two, made to tell a lost job from a running or a cancelled one.

:class:`JobManager` (the embedded default) runs each job in a child process
of the web server and keeps job state in a diskcache directory;
:class:`~components.services.celery_jobs.CeleryJobManager` (with ``REDIS_URL``) sends each job to a Celery
worker on any machine and keeps job state in Redis.

**Lost jobs.** A job whose process ends without leaving a result -- killed,
out of memory, its worker stopped or its machine gone -- is not running and
has no result. Dash 4.4.1 answers the page's next poll with "no update": the
Run button comes back, but the page keeps its old status line and a
half-filled progress bar, as if the run had never been asked for. Worse, a Celery task whose whole worker died
stays ``PENDING`` in the result backend for ever, so Dash keeps polling: a
spinner that never ends. Both managers answer such a poll with a
background-callback error carrying :data:`JOB_LOST`; the app's error handler
:func:`report_lost_job` shows it on the page's status line, and the Run
button is released as for any finished run. A job stopped on purpose
(Cancel, or replaced by a newer run) is recorded when it is stopped, so its
end is not mistaken for a loss.

Whether a job is still running is asked before its result is read: a job
that ends after that question has already written its result, so "not
running and no result" cannot be a job that finished in between.

**Celery liveness.** While a task runs, a thread in the worker refreshes a
heartbeat key (``schedscope:job:<task id>:alive``, expiring after
:attr:`CeleryJobManager.HEARTBEAT_TTL` seconds, refreshed every
:attr:`~CeleryJobManager.HEARTBEAT_SECONDS`); a second key records that the
task started (and when). A task that started and whose heartbeat expired is lost,
whatever state the backend still shows. A task not yet started is queued,
waiting for a worker, and keeps the page waiting: every poll then writes
:data:`WAITING` (how long it has waited, from the ``:queued`` time the web
server wrote when it sent the task) on the page's status line, and once a
worker takes it, :data:`TAKEN` once. The background-callback tasks are
acknowledged when a worker takes them (not after they finish): a job lost
with its worker has been reported on the page already and is not run again
later by another worker (:class:`components.scaleout.celery_app.AckWhenTaken`,
a Celery task annotation, so that Dash's public ``make_job_fn`` builds the task).

**Redis unreachable** (Celery). Starting a run asks Redis first (one quick
``PING``: the broker's own connection retries would hold the request for
twenty seconds); that and every later Redis error of the manager become
:class:`~components.services.runs.ResultStoreUnreachable`, which
:func:`report_lost_job` shows on the page's status line instead of a 500.

**The psutil race** (embedded manager). Dash asks whether a job process is
still running with ``psutil.pid_exists`` and then ``psutil.Process(pid)``; a
job that exits between the two raises ``NoSuchProcess``. That happens after
the job's result was already read (and removed) from the cache, so the
request would fail with a 500 and the page would wait for a result that is
gone. A process that no longer exists is simply not running, which is what
the overrides answer.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
from dash import DiskcacheManager, callback_context, html, no_update
from dash.exceptions import BackgroundCallbackError

from .login import JOB_USER, current_user
from .run_cap import ClientCap, RunRefused
from .run_limits import STOPPED, limited, niced, run_cpu_seconds, run_memory_mb, run_niceness, run_workers
from .runs import ResultStoreFull, ResultStoreUnreachable
from .storage import atomic_write

log = logging.getLogger(__name__)

JOB_LOST = "The run stopped before finishing (its worker process ended). Press Run to retry."
STOPPED_SECONDS = 600   # how long a deliberate stop is remembered
CLIENT_LIST_SECONDS = 24 * 3600   # how long a client's list of runs is kept after its last run started
CLIENTS_CLEANED_EVERY_S = 600     # how often a server process looks for client lists older than that
CLIENTS_LOCK = ".lock"            # the one lock of every client's list (embedded manager)
#: The status line of a Celery run that no worker has taken yet (updated at every poll), and once taken.
WAITING = "Waiting for a worker: queued {seconds} s ago, no worker has taken the run yet."
TAKEN = "A worker took the run after {seconds} s in the queue; running."


def lost_job_result() -> dict:
    """What the managers answer for a lost job: Dash's own shape for an error raised inside a job."""
    return {"background_callback_error": {"msg": JOB_LOST, "tb": ""}}


def report_lost_job(error: Exception):
    """The app's callback error handler: a failure the user can act on becomes the page's failed state, with its
    own sentence; other errors are raised.

    The sentences: a lost job (:data:`JOB_LOST`), a run stopped at its bound
    (:mod:`.run_limits`), a run refused by the client's cap (:mod:`.run_cap`), and an unreachable result store
    (:class:`~components.services.runs.ResultStoreUnreachable`: Redis down,
    found while starting a run, polling it or reading results; the server
    goes on serving pages).

    The failed state is written to the callback's status line: its output
    with property ``children`` (every run callback has one message ``Div``
    among its outputs; of several, the one named a status or message); its
    other outputs keep their values.
    """
    text = str(error) if isinstance(error, BackgroundCallbackError) else ""
    unreachable = _unreachable_store(error)
    if JOB_LOST in text:
        message = html.Span(JOB_LOST, className="error")
    elif STOPPED in text:   # a run stopped at its bound (components.services.run_limits): its own sentence
        sentence = text[text.index(STOPPED):].splitlines()[0]
        message = html.Span(sentence, className="error")
    elif isinstance(error, RunRefused):   # the client's cap of runs at once (components.services.run_cap)
        message = html.Span(str(error), className="error")
    elif isinstance(unreachable, ResultStoreFull):   # the store answers, its disk does not take the result
        log.warning("callback failed: %s", unreachable)
        message = html.Span(f"Not saved: {unreachable}. Free space in the data directory (or make it writable) "
                            "and run again.", className="error")
    elif unreachable is not None:
        log.warning("callback failed: %s", unreachable)
        message = html.Span(f"Cannot run or show results: {unreachable}. Try again once it is back.",
                            className="error")
    else:
        raise error
    status = status_outputs(callback_context.outputs_list)

    def value(spec):
        if isinstance(spec, list):
            return [value(s) for s in spec]
        return message if spec in status else no_update

    return value(callback_context.outputs_list)


def _unreachable_store(error: BaseException | None) -> ResultStoreUnreachable | None:
    """The :class:`ResultStoreUnreachable` that caused ``error`` (itself, or along its chain), else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ResultStoreUnreachable):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


STATUS_WORDS = ("status", "message", "msg")


def status_outputs(outputs_list) -> list[dict]:
    """A callback's status line among its outputs: the ``children`` outputs, or of several those named
    a status or message."""
    flat = [spec for group in (outputs_list if isinstance(outputs_list, list) else [outputs_list])
            for spec in (group if isinstance(group, list) else [group])]
    children = [spec for spec in flat if spec["property"].split("@")[0] == "children"]
    if len(children) > 1:
        named = [spec for spec in children if any(word in stringify_id(spec["id"]).lower() for word in STATUS_WORDS)]
        children = named or children[:1]
    return children


def stringify_id(component_id) -> str:
    """A component id as Dash keys side updates: the id itself, or a pattern-matching id as sorted JSON."""
    if isinstance(component_id, dict):
        return json.dumps(component_id, sort_keys=True, separators=(",", ":"))
    return str(component_id)


class LostJobs:
    """Manager mix-in: report a job that ended without a result unless it was stopped on purpose.

    Subclasses store the "stopped on purpose" marks where all web processes
    see them: :meth:`_mark_stopped`, :meth:`_pop_stopped`. Nothing is written
    for a job that finishes normally: Dash stops every job whose result it
    has just read, and that stop is not recorded.
    """

    _reading = threading.local()   # set while Dash's get_result runs in this thread

    def _mark_stopped(self, job: str) -> None:
        raise NotImplementedError

    def _pop_stopped(self, job: str) -> bool:
        raise NotImplementedError

    def terminate_job(self, job):
        if job is not None and not getattr(self._reading, "active", False):
            self._mark_stopped(str(job))
        super().terminate_job(job)

    def get_result(self, key, job):
        running = self.job_running(job) if job else True
        self._reading.active = True
        try:
            result = super().get_result(key, job)
        finally:
            self._reading.active = False
        if result is not self.UNDEFINED or running or self._pop_stopped(str(job)):
            return result
        return lost_job_result()


class CarryUser:
    """Manager mix-in: a background run runs as the user who started it.

    The signed-in user of the request that starts the job is written into the
    job's callback context (``custom_data``, which Dash hands to the job
    process or the Celery task with the rest of the context, as JSON), where
    :func:`~components.services.login.current_user` finds it: the run's
    result is owned by that user, and it may use only the uploads that user
    sees. Without a login nothing is added.
    """

    def call_job_fn(self, key, job_fn, args, context):
        user = current_user()
        if user is not None:
            context["custom_data"] = {**(context.get("custom_data") or {}), JOB_USER: user}
        return super().call_job_fn(key, job_fn, args, context)


class StopWithoutWaiting:
    """Manager mix-in: stop a job's process without holding the jobs' store, and without waiting out a process
    that has already ended.

    Dash stops every job whose result a poll has just read, inside a
    transaction of the jobs' store, killing it and waiting up to a second for
    it to go. A job forked by another server process stays a zombie until
    that process reaps it, so the wait ran its whole second: every
    finished run held the store for up to a second, and 50 concurrent
    sessions queued behind one another for it (``bench/load.py``: the
    first poll after a run took 1.03 s, half the time). Here a process that
    has ended is only reaped if it is this process's child; one still running
    is killed, and waited for only until it has ended (reaped if ours). Two
    pollers stopping one job at once both kill it: harmless.
    """

    STOP_WAIT_S = 1.0

    def terminate_job(self, job):
        if job is None:
            return
        pid = int(job)
        try:
            process = psutil.Process(pid)
            for child in process.children(recursive=True):
                try:
                    child.kill()
                except psutil.NoSuchProcess:
                    pass
            if process.status() != psutil.STATUS_ZOMBIE:
                process.kill()
            ours = process.ppid() == os.getpid()
        except psutil.NoSuchProcess:
            return
        deadline = time.monotonic() + self.STOP_WAIT_S
        while True:
            if ours:
                try:
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        return   # reaped
                except ChildProcessError:
                    return   # reaped elsewhere (multiprocess's own clean-up)
            else:
                try:
                    if process.status() == psutil.STATUS_ZOMBIE:
                        return   # ended; its own server process reaps it
                except psutil.NoSuchProcess:
                    return
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)


class JobManager(CarryUser, ClientCap, LostJobs, StopWithoutWaiting, DiskcacheManager):
    """The embedded manager: job processes on this machine, job state in a diskcache directory.

    Every job runs under the CPU-time and memory bounds of :mod:`.run_limits`
    (read when the app is built), at a CPU priority below the web server's
    (``SCHEDSCOPE_RUN_NICENESS``, default 10), so that pages stay quick while runs use every core.
    """

    def make_job_fn(self, fn, progress, key=None):
        run_workers()   # read by each run (run_plan.run_many); a bad value is refused here, when the app is built
        bounded = limited(fn, run_cpu_seconds(), run_memory_mb())
        return super().make_job_fn(niced(bounded, run_niceness()), progress, key)

    def _mark_stopped(self, job):
        self.handle.set(f"schedscope-stopped-{job}", True, expire=STOPPED_SECONDS)

    # A client's list of runs is a small JSON file beside the jobs' store, never a row of it: the request
    # that starts a run would otherwise open its own SQLite connection, and SQLite's process-wide mutex,
    # taken when that thread's connection is freed as the thread ends, may be held by it at the instant
    # another thread forks a job -- the job then waits for it for ever.
    _cap_threads = threading.Lock()
    _cap_cleaned = float("-inf")   # when this manager last removed stale client lists (time.monotonic)

    def _cap_directory(self) -> Path:
        return Path(self.handle.directory).with_name("run-clients")

    def _cap_path(self, client) -> Path:
        return self._cap_directory() / f"{client}.json"

    @contextmanager
    def _cap_lock(self, client):
        directory = self._cap_directory()
        directory.mkdir(parents=True, exist_ok=True)
        # One lock for every client's list: a thread lock within this process, a POSIX record lock between
        # processes. Neither is inherited by a forked job (record locks are per process), and a fork never
        # happens inside this section, which is short (a list read and written).
        with self._cap_threads:
            descriptor = os.open(directory / CLIENTS_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.lockf(descriptor, fcntl.LOCK_EX)
                self._remove_stale_clients(directory)
                yield
            finally:
                os.close(descriptor)   # closing releases the record lock

    def _remove_stale_clients(self, directory: Path) -> None:
        """At most every :data:`CLIENTS_CLEANED_EVERY_S`: remove the lists not written for
        :data:`CLIENT_LIST_SECONDS` that hold no running job (and files left by earlier versions, per-client
        locks, as old). Called under the lock of every list."""
        now = time.monotonic()
        if now - self._cap_cleaned < CLIENTS_CLEANED_EVERY_S:
            return
        self._cap_cleaned = now
        cutoff = time.time() - CLIENT_LIST_SECONDS
        for path in directory.iterdir():
            try:
                if path.name == CLIENTS_LOCK or path.stat().st_mtime >= cutoff:
                    continue
                if path.suffix == ".json" and self._live(self._cap_load(path.stem)):
                    continue
                path.unlink()
            except FileNotFoundError:
                continue

    def _cap_load(self, client):
        try:
            entries = json.loads(self._cap_path(client).read_text())
        except (OSError, ValueError):
            return []
        return entries if isinstance(entries, list) else []

    def _cap_save(self, client, entries):
        atomic_write(self._cap_path(client), json.dumps(entries).encode())

    def _pop_stopped(self, job):
        # Process ids are reused: a mark is taken when it is read.
        return self.handle.pop(f"schedscope-stopped-{job}", default=False)

    def job_running(self, job):
        try:
            return super().job_running(job)
        except psutil.NoSuchProcess:
            return False

    def terminate_job(self, job):
        try:
            super().terminate_job(job)
        except psutil.NoSuchProcess:
            pass   # already gone: nothing to stop
