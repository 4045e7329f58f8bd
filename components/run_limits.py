"""Bounds on background runs: a run that needs more than its share of the server is stopped and says why.

At most ``SCHEDSCOPE_MAX_RUNS`` runs go at once per server process (see
:class:`components.jobs.JobManager`); one more is refused at once, with a
message on its page, rather than queued behind the others.

Each run of the embedded manager is a process forked from the web server;
:func:`limited` wraps a run's function so that, in that process, the kernel
counts its CPU time against ``SCHEDSCOPE_RUN_CPU_SECONDS`` (default
:data:`DEFAULT_CPU_SECONDS`). Past the limit the kernel sends ``SIGXCPU``;
the run raises :class:`RunLimitExceeded`, whose message the page shows on its
status line (see :func:`components.jobs.report_lost_job`). The web server
itself is never limited. (Runs on Celery workers are bounded by the workers'
own ``--time-limit``.)
"""

from __future__ import annotations

import functools
import os
import resource
import signal
CPU_ENV = "SCHEDSCOPE_RUN_CPU_SECONDS"
RUNS_ENV = "SCHEDSCOPE_MAX_RUNS"
#: Runs one server process keeps going at once, by default: room for a busy team (twenty people pressing
#: Run together is a tested load), while a script starting runs in a loop is stopped long before the
#: machine is.
DEFAULT_MAX_RUNS = 32
#: Start of the message of a run refused because the server is busy.
NOT_STARTED = "The run did not start:"
DEFAULT_CPU_SECONDS = 3600
#: Start of every message of a run stopped at its limit (the page recognises it).
STOPPED = "The run was stopped:"
#: Grace between the soft limit (SIGXCPU, a clean stop) and the hard one (SIGKILL).
HARD_LIMIT_GRACE_S = 30


class RunLimitExceeded(RuntimeError):
    """A run went past its bound; the message says which and how to raise it."""


def run_cpu_seconds(environ=None) -> int:
    """The CPU-seconds one run may use: ``SCHEDSCOPE_RUN_CPU_SECONDS`` (a positive whole number), else the default."""
    text = (environ if environ is not None else os.environ).get(CPU_ENV, "").strip()
    if not text:
        return DEFAULT_CPU_SECONDS
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{CPU_ENV} must be a whole number of seconds, got {text!r}") from None
    if value < 1:
        raise ValueError(f"{CPU_ENV} must be at least 1, got {value}")
    return value


def max_runs(environ=None) -> int:
    """Runs one server process keeps going at once: ``SCHEDSCOPE_MAX_RUNS``, else :data:`DEFAULT_MAX_RUNS`."""
    text = (environ if environ is not None else os.environ).get(RUNS_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_RUNS
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{RUNS_ENV} must be a whole number of at least 1, got {text!r}")
    return int(text)


def busy_message(limit: int) -> str:
    return (f"{NOT_STARTED} {limit} run(s) are already going on this server process, the most it keeps "
            f"going at once ({RUNS_ENV}). Press Run again when one has finished.")


def cpu_message(seconds: int) -> str:
    return (f"{STOPPED} it used more than {seconds:,} CPU-seconds, the most one run may use on this server "
            f"({CPU_ENV}). Choose fewer jobs or policies, or ask the operator to raise the limit.")


def limited(fn, cpu_seconds: int):
    """``fn`` run under a CPU-time bound of ``cpu_seconds`` in the calling process (a run's own process)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(usage.ru_utime + usage.ru_stime) + cpu_seconds
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        wanted_hard = soft + HARD_LIMIT_GRACE_S
        resource.setrlimit(resource.RLIMIT_CPU,
                           (soft, wanted_hard if hard == resource.RLIM_INFINITY else min(hard, wanted_hard)))

        def stop(signum, frame):
            raise RunLimitExceeded(cpu_message(cpu_seconds))

        signal.signal(signal.SIGXCPU, stop)
        return fn(*args, **kwargs)

    return run
