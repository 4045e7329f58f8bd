"""The Gallery's background computation: once per server, by whichever process holds the data directory's lock."""

from __future__ import annotations

import os
import subprocess
import sys

from components.pages.gallery import warm
from components.services.runs import ResultCache

HOLD = ("import fcntl, os, sys; d = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); fcntl.flock(d, fcntl.LOCK_EX); "
        "print('held', flush=True); sys.stdin.read()")


class Threads:
    """Stands in for ``threading.Thread`` in :mod:`warm`: records what would run, runs nothing."""

    def __init__(self):
        self.started = []

    def __call__(self, target, args, **_):
        threads = self

        class Thread:
            def start(self):
                threads.started.append(args)
        return Thread()


def test_a_process_asked_while_another_computes_leaves_it_and_takes_over_once_it_ended(tmp_path, monkeypatch):
    threads = Threads()
    monkeypatch.setattr(warm.threading, "Thread", threads)
    results = ResultCache(tmp_path / "results")
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / warm.LOCK_NAME)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        assert warm.start(results, tmp_path) is False and threads.started == []
        assert warm.start(results, tmp_path) is False   # asked again meanwhile: still the other's
    finally:
        other.stdin.close()
        other.wait(30)
    # The other process ended (its lock with it): asked again, this one computes, and only once.
    assert warm.start(results, tmp_path) is True and len(threads.started) == 1
    assert warm.start(results, tmp_path) is False and len(threads.started) == 1
    # While this one computes, a second process asking is refused the lock.
    asker = subprocess.run([sys.executable, "-c", "import fcntl, os, sys; d = os.open(sys.argv[1], os.O_RDWR); "
                            "fcntl.flock(d, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(tmp_path / warm.LOCK_NAME)],
                           capture_output=True, text=True)
    assert asker.returncode != 0 and "BlockingIOError" in asker.stderr
    os.close(threads.started[0][1])   # what the computing thread does when it ends
