"""Bounds on background runs: a run that needs more than its share of the server is stopped and says why.

Each run of the embedded manager is a process forked from the web server;
:func:`limited` wraps a run's function so that, in that process,

* the kernel counts its CPU time against ``SCHEDSCOPE_RUN_CPU_SECONDS``
  (default :data:`DEFAULT_CPU_SECONDS`); past it the kernel sends
  ``SIGXCPU``;
* a watchdog thread reads the resident memory of the process and of
  the processes it forked (the page's runs side by side) every
  :data:`MEMORY_CHECK_S` seconds against ``SCHEDSCOPE_RUN_MEMORY_MB``
  (default :data:`DEFAULT_MEMORY_MB`); past it the thread signals the run
  (``SIGUSR2``). Resident memory, not address space: numpy and Arrow reserve
  far more address space than they use, so an address-space limit would
  stop runs that fit.

Either way the run raises :class:`RunLimitExceeded`, whose message (which
limit, and for memory by how much it was over) the page shows on its status
line (see :func:`components.services.jobs.report_lost_job`). The web server itself is
never limited. Runs on Celery workers get the same two bounds in the worker's
pool process, put back after each run (the process runs the next one), and
the Celery task's hard time limit as the backstop (see
:class:`~components.services.celery_jobs.CeleryJobManager`).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import resource
import signal
import threading

import psutil

from sched_engine.core.processes import default_workers

log = logging.getLogger(__name__)

CPU_ENV = "SCHEDSCOPE_RUN_CPU_SECONDS"
DEFAULT_CPU_SECONDS = 3600
MEMORY_ENV = "SCHEDSCOPE_RUN_MEMORY_MB"
DEFAULT_MEMORY_MB = 8192
#: How often a run's resident memory is read.
MEMORY_CHECK_S = 0.2
#: Start of every message of a run stopped at its limit (the page recognises it).
STOPPED = "The run was stopped:"
NICE_ENV = "SCHEDSCOPE_RUN_NICENESS"
#: A run's CPU priority below the web server's (nice steps): with every core busy running, pages are still
#: answered first (the kernel gives a nice-0 thread about nine times the CPU share of a nice-10 one).
DEFAULT_NICENESS = 10
#: Grace between the soft limit (SIGXCPU, a clean stop) and the hard one (SIGKILL).
HARD_LIMIT_GRACE_S = 30


class RunLimitExceeded(RuntimeError):
    """A run went past its bound; the message says which and how to raise it."""


def whole_number_setting(environ, name: str, default: int, unit: str, minimum: int = 1,
                         minimum_text: str | None = None) -> int:
    """The whole number set in environment variable ``name`` (``default`` when unset or blank).

    Raises ``ValueError`` naming the variable for text that is not a whole
    number, or a number below ``minimum`` (described by ``minimum_text``,
    default "at least <minimum>").
    """
    text = (environ if environ is not None else os.environ).get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number of {unit}, got {text!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be {minimum_text or f'at least {minimum}'}, got {value}")
    return value


def run_cpu_seconds(environ=None) -> int:
    """The CPU-seconds one run may use: ``SCHEDSCOPE_RUN_CPU_SECONDS`` (a positive whole number), else the default."""
    return whole_number_setting(environ, CPU_ENV, DEFAULT_CPU_SECONDS, "seconds")


def run_memory_mb(environ=None) -> int:
    """The resident memory (MiB) one run may use: ``SCHEDSCOPE_RUN_MEMORY_MB``, else the default."""
    return whole_number_setting(environ, MEMORY_ENV, DEFAULT_MEMORY_MB, "MiB")


def cpu_message(seconds: int) -> str:
    return (f"{STOPPED} it used more than {seconds:,} CPU-seconds, the most one run may use on this server "
            f"({CPU_ENV}). Choose fewer jobs or policies, or ask the operator to raise the limit.")


def memory_message(limit_mb: int, reached_mb: int) -> str:
    return (f"{STOPPED} its memory reached {reached_mb:,} MiB, {reached_mb - limit_mb:,} MiB over the "
            f"{limit_mb:,} MiB one run may use on this server ({MEMORY_ENV}). Choose fewer jobs or policies, "
            f"or ask the operator to raise the limit.")


def resident_bytes(process: psutil.Process) -> int:
    """Resident memory of ``process`` and of the processes it started (a page's runs side by side,
    :func:`components.widgets.run_panel.run_many`), which are one run's. Alone, its resident set; with
    children, the sum of each one's proportional share (PSS: a page shared after the fork counts once)."""
    children = process.children(recursive=True)
    if not children:
        return process.memory_info().rss
    total = 0
    for member in (process, *children):
        try:
            total += member.memory_full_info().pss
        except psutil.Error:   # ended since it was listed
            pass
    return total


class _MemoryWatch:
    """A daemon thread that signals the process (``SIGUSR2``) once the resident memory of it and its children
    passes ``limit_mb``."""

    def __init__(self, limit_mb: int):
        self.limit_mb = limit_mb
        self.reached_mb = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="run-memory-watch", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        process = psutil.Process()
        while not self._done.wait(MEMORY_CHECK_S):
            resident_mb = resident_bytes(process) // 2**20
            if resident_mb > self.limit_mb:
                self.reached_mb = resident_mb
                os.kill(os.getpid(), signal.SIGUSR2)   # handled in the run's (main) thread
                return


WORKERS_ENV = "SCHEDSCOPE_RUN_WORKERS"


def run_workers(environ=None) -> int:
    """How many processes one Run press may simulate its scenarios on side by side: ``SCHEDSCOPE_RUN_WORKERS``
    (a positive whole number; 1: one after another), else the CPUs this process may use, at most 4."""
    return whole_number_setting(environ, WORKERS_ENV, default_workers(), "processes")


def run_niceness(environ=None) -> int:
    """How much lower a run's CPU priority is than the web server's: ``SCHEDSCOPE_RUN_NICENESS`` (0..19), else 10."""
    value = whole_number_setting(environ, NICE_ENV, DEFAULT_NICENESS, "steps", minimum=0, minimum_text="0 to 19")
    if value > 19:
        raise ValueError(f"{NICE_ENV} must be 0 to 19, got {value}")
    return value


def niced(fn, increment: int):
    """``fn`` run at a CPU priority ``increment`` steps below the calling process's (``os.nice``), for a process
    that ends with its run: an unprivileged process cannot raise its priority again."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if increment:
            os.nice(increment)
        return fn(*args, **kwargs)

    return run


def _at_most(value: int, cap: int) -> int:
    """``value`` capped at ``cap``, either of them possibly ``RLIM_INFINITY``."""
    if cap == resource.RLIM_INFINITY:
        return value
    return cap if value == resource.RLIM_INFINITY else min(value, cap)


def limited(fn, cpu_seconds: int, memory_mb: int = DEFAULT_MEMORY_MB, *, hard: bool = True):
    """``fn`` run under a CPU-time bound of ``cpu_seconds`` and a resident-memory bound of ``memory_mb`` MiB,
    in the calling process (a run's own process, whose main thread calls it).

    ``hard``: also lower the process's hard CPU limit (the kernel kills it
    :data:`HARD_LIMIT_GRACE_S` after the soft one), for a process that ends
    with its run (the embedded manager's). A process that runs one job after
    another (a Celery worker's pool process) passes ``hard=False``: a hard
    limit cannot be raised again, so the next job could not get its share;
    there the worker's task time limit is the backstop. Either way the soft
    limit and the signal handlers are put back when ``fn`` returns. Called
    outside a main thread (where no signal can be handled) ``fn`` runs
    unbounded, and a warning says so.
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            log.warning("run bounds need the process's main thread; this run is not bounded")
            return fn(*args, **kwargs)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        # Whole seconds (RLIMIT_CPU's unit), rounded up: a run gets at least its bound, never less because the
        # process's earlier runs left a fraction of a second.
        soft = math.ceil(usage.ru_utime + usage.ru_stime) + cpu_seconds
        before = resource.getrlimit(resource.RLIMIT_CPU)
        limit_hard = before[1]
        if hard:
            wanted = soft + HARD_LIMIT_GRACE_S
            limit_hard = wanted if limit_hard == resource.RLIM_INFINITY else min(limit_hard, wanted)
        resource.setrlimit(resource.RLIMIT_CPU, (_at_most(soft, limit_hard), limit_hard))

        def cpu_stop(signum, frame):
            raise RunLimitExceeded(cpu_message(cpu_seconds))

        watch = _MemoryWatch(memory_mb)

        def memory_stop(signum, frame):
            raise RunLimitExceeded(memory_message(memory_mb, watch.reached_mb))

        handlers = signal.signal(signal.SIGXCPU, cpu_stop), signal.signal(signal.SIGUSR2, memory_stop)
        try:
            with watch:   # the handler is in place before the watch can signal
                return fn(*args, **kwargs)
        finally:
            resource.setrlimit(resource.RLIMIT_CPU, (_at_most(before[0], limit_hard), limit_hard))
            signal.signal(signal.SIGXCPU, handlers[0])
            signal.signal(signal.SIGUSR2, handlers[1])

    return run
