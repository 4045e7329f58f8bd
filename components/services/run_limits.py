"""Bounds on background runs: a run that needs more than its share of the server is stopped and says why.

Each run of the embedded manager is a process forked from the web server;
:func:`limited` wraps a run's function so that, in that process, the kernel
counts its CPU time against ``SCHEDSCOPE_RUN_CPU_SECONDS`` (default
:data:`DEFAULT_CPU_SECONDS`). Past the limit the kernel sends ``SIGXCPU``;
the run raises :class:`RunLimitExceeded`, whose message the page shows on its
status line (see :func:`components.services.jobs.report_lost_job`). The web server
itself is never limited. (Runs on Celery workers are bounded by the workers'
own ``--time-limit``.)
"""

from __future__ import annotations

import functools
import os
import resource
import signal

CPU_ENV = "SCHEDSCOPE_RUN_CPU_SECONDS"
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
