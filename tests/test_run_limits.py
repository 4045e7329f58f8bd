"""A background run is stopped at its CPU-time bound and says so; the web server is never limited."""

from __future__ import annotations

import multiprocessing
import os
import resource
import time

import psutil
import pytest

from components.services.run_limits import (
    CPU_ENV,
    DEFAULT_CPU_SECONDS,
    DEFAULT_MEMORY_MB,
    HARD_LIMIT_GRACE_S,
    MEMORY_ENV,
    STOPPED,
    WORKERS_ENV,
    RunLimitExceeded,
    limited,
    niced,
    run_cpu_seconds,
    run_memory_mb,
    run_niceness,
    run_workers,
)
from sched_engine.core.processes import default_workers, side_by_side


def _burn():
    total = 0
    while True:
        total += 1


def _child(queue):
    try:
        limited(_burn, 1)()
    except RunLimitExceeded as exc:
        queue.put(str(exc))


def test_a_run_past_its_cpu_seconds_stops_with_a_sentence():
    before = resource.getrlimit(resource.RLIMIT_CPU)
    context = multiprocessing.get_context("fork")   # as the embedded manager starts runs
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    message = queue.get(timeout=30)
    child.join(10)
    assert message.startswith(STOPPED) and "1 CPU-seconds" in message and CPU_ENV in message
    # The bound was set in the run's own process only.
    assert resource.getrlimit(resource.RLIMIT_CPU) == before


def _grow():
    """Take memory 20 MiB at a time (each page written, so it is resident) for up to 20 s."""
    held = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        held.append(bytearray(20 * 2**20))
        time.sleep(0.02)
    return len(held)


def _memory_child(queue, limit_mb):
    try:
        queue.put(("returned", limited(_grow, 600, limit_mb)()))
    except RunLimitExceeded as exc:
        queue.put(("stopped", str(exc)))


def test_a_run_past_its_memory_stops_and_says_by_how_much():
    limit_mb = psutil.Process().memory_info().rss // 2**20 + 100   # the forked run starts at about this size
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_memory_child, args=(queue, limit_mb))
    child.start()
    outcome, message = queue.get(timeout=60)
    child.join(10)
    assert outcome == "stopped"
    assert message.startswith(STOPPED) and MEMORY_ENV in message and f"{limit_mb:,} MiB one run may use" in message
    reached, over = (int(word.replace(",", "")) for word in (message.split()[7], message.split()[9]))
    assert reached > limit_mb and over == reached - limit_mb


def _side_by_side_child(queue, limit_mb):
    try:
        queue.put(("returned", limited(lambda: side_by_side(lambda _: _grow(), [1, 2], workers=2), 600, limit_mb)()))
    except RunLimitExceeded as exc:
        queue.put(("stopped", (str(exc), [p.pid for p in psutil.Process().children(recursive=True)])))


def test_runs_side_by_side_count_toward_their_runs_memory_and_are_stopped_with_it():
    # Each forked run grows by 20 MiB steps while the run's own process stays as it is: only the sum passes.
    limit_mb = psutil.Process().memory_info().rss // 2**20 + 150
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_side_by_side_child, args=(queue, limit_mb))
    child.start()
    outcome, (message, left) = queue.get(timeout=60)
    child.join(10)
    assert outcome == "stopped" and message.startswith(STOPPED) and MEMORY_ENV in message
    assert left == []   # the runs side by side were stopped with it


def _doubled(queue):
    queue.put(limited(lambda x: x * 2, 60)(21))


def test_a_run_within_its_bound_returns_its_result():
    # In a child process: a bound set here would stop this test process too.
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_doubled, args=(queue,))
    child.start()
    assert queue.get(timeout=30) == 42
    child.join(10)


@pytest.mark.parametrize("text, expected", [("", DEFAULT_CPU_SECONDS), ("120", 120), (" 5 ", 5)])
def test_the_bound_comes_from_the_environment(text, expected):
    assert run_cpu_seconds({CPU_ENV: text}) == expected


@pytest.mark.parametrize("text, expected", [("", DEFAULT_MEMORY_MB), ("512", 512)])
def test_the_memory_bound_comes_from_the_environment(text, expected):
    assert run_memory_mb({MEMORY_ENV: text}) == expected


@pytest.mark.parametrize("text, expected", [("", default_workers()), ("1", 1), ("3", 3)])
def test_the_processes_of_one_run_press_come_from_the_environment(text, expected):
    assert run_workers({WORKERS_ENV: text}) == expected


@pytest.mark.parametrize("text", ["0", "-3", "ten", "1.5"])
def test_a_bad_bound_is_refused_with_its_name(text):
    with pytest.raises(ValueError, match=CPU_ENV):
        run_cpu_seconds({CPU_ENV: text})
    with pytest.raises(ValueError, match=MEMORY_ENV):
        run_memory_mb({MEMORY_ENV: text})
    with pytest.raises(ValueError, match=WORKERS_ENV):
        run_workers({WORKERS_ENV: text})



def _two_bounded_runs_in_one_process(queue):
    """As a Celery pool process runs jobs: one after another, in one process, without a hard limit."""
    before = resource.getrlimit(resource.RLIMIT_CPU)
    for _ in range(2):
        try:
            limited(_burn, 1, hard=False)()
        except RunLimitExceeded as exc:
            queue.put(str(exc))
    queue.put(limited(lambda: "fits", 1, hard=False)())
    queue.put(resource.getrlimit(resource.RLIMIT_CPU) == before)


def test_a_process_that_runs_job_after_job_bounds_each_and_gets_its_limits_back():
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_two_bounded_runs_in_one_process, args=(queue,))
    child.start()
    answers = [queue.get(timeout=30) for _ in range(4)]
    child.join(10)
    assert [a.startswith(STOPPED) for a in answers[:2]] == [True, True]
    assert answers[2:] == ["fits", True]


def test_celery_runs_are_bounded_too(monkeypatch):
    from components.scaleout.celery_app import celery_app
    from components.services.celery_jobs import CeleryJobManager

    monkeypatch.setenv(CPU_ENV, "120")
    task = CeleryJobManager(celery_app("redis://127.0.0.1:1/15")).make_job_fn(_burn, progress=False,
                                                                              key="bounds-check")
    assert task.time_limit == 2 * 120 + HARD_LIMIT_GRACE_S   # the worker's backstop; the CPU bound itself is limited()'s


def _priority(queue, increment):
    niced(lambda: queue.put(os.nice(0)), increment)()


def test_a_run_has_a_lower_cpu_priority_than_the_server():
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_priority, args=(queue, 10))
    child.start()
    assert queue.get(timeout=30) == min(19, os.nice(0) + 10)
    child.join(10)
    assert run_niceness({}) == 10 and run_niceness({"SCHEDSCOPE_RUN_NICENESS": "0"}) == 0
    with pytest.raises(ValueError, match="SCHEDSCOPE_RUN_NICENESS must be 0 to 19"):
        run_niceness({"SCHEDSCOPE_RUN_NICENESS": "25"})
