"""Stopping a finished run's process: never held up by a process another server process forked (a zombie until
that process reaps it), and a process of our own is killed and reaped (components/services/jobs.py)."""

import os
import subprocess
import sys
import time

import psutil
import pytest

from components.services.jobs import StopWithoutWaiting

# A parent that forks one child, printing its pid, and reaps it only 3 s later (as another gunicorn worker reaps
# the runs it forked when it next looks); the child exits at once or sleeps, as asked.
_PARENT = """
import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(float(sys.argv[1]))
    os._exit(0)
print(pid, flush=True)
time.sleep(3)
os.kill(pid, 9)
os.waitpid(pid, 0)
time.sleep(60)
"""


class Manager(StopWithoutWaiting):
    STOP_WAIT_S = 30.0   # a stop that waited for the process to be gone would see it reaped: no zombie left


@pytest.fixture
def foreign_child():
    """``start(seconds)``: the pid of a process another process forked and will not reap."""
    parents = []

    def start(seconds: float) -> int:
        parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(seconds)], stdout=subprocess.PIPE, text=True)
        parents.append(parent)
        return int(parent.stdout.readline())

    yield start
    for parent in parents:
        parent.kill()
        parent.wait()


def _zombie(pid: int) -> bool:
    return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_an_ended_process_of_another_parent_is_left_to_it(foreign_child):
    pid = foreign_child(0)
    while not _zombie(pid):
        time.sleep(0.01)
    Manager().terminate_job(str(pid))
    assert _zombie(pid)   # returned without waiting for its parent to reap it


def test_a_running_process_of_another_parent_is_killed_and_left_to_it(foreign_child):
    pid = foreign_child(60)
    Manager().terminate_job(pid)
    assert _zombie(pid)   # killed (it would sleep a minute), and not waited for until it is gone


def test_a_running_process_of_our_own_is_killed_and_reaped():
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    Manager().terminate_job(pid)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)   # already reaped
    assert not psutil.pid_exists(pid)


def test_no_job_or_a_process_already_gone_is_nothing_to_stop():
    Manager().terminate_job(None)
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    Manager().terminate_job(process.pid)
