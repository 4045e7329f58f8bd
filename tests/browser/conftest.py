"""Browser tests' shared set-up: the Gallery's background computation stays off unless a test is about it, and a
failed test leaves the Python stacks of its processes behind.

Opening the Gallery with its cards missing from the cache computes them all in the web process (about a
minute of CPU, :mod:`components.pages.gallery.warm`); the page tests that only pass through the Gallery
(every page's title, no sideways scroll) would pay for it. ``tests/browser/test_gallery_page.py`` keeps it on.
"""

import faulthandler
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from components.pages.gallery import warm

#: Where a failed browser test's stacks go (ignored by git, as the screenshots beside it).
STACKS = Path(__file__).resolve().parents[2] / "out" / "stacks"


@pytest.fixture(autouse=True)
def _gallery_background_off_elsewhere(request, monkeypatch):
    if request.node.path.name != "test_gallery_page.py":
        monkeypatch.setenv(warm.BACKGROUND_ENV, "0")


# A browser test that waits out its timeout has mostly waited on a run that never reported. To see where it
# stopped, every Python process the worker forked (runs are forked from the app's server threads, in this
# process) inherits a handler that writes its threads' stacks on SIGUSR1 (faulthandler: C-level, safe in a
# deadlocked process), into one file per worker; a failed test then signals them and writes the worker's own.
_STACK_FILE = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        _dump_stacks(item.name)


def _dump_stacks(test: str) -> None:
    if _STACK_FILE is None:
        return
    _STACK_FILE.write(f"\n===== {time.strftime('%H:%M:%S')} {test} failed: worker {os.getpid()} =====\n")
    _STACK_FILE.flush()
    faulthandler.dump_traceback(file=_STACK_FILE, all_threads=True)
    worker = psutil.Process()
    for child in worker.children(recursive=True):
        try:
            if child.cmdline() == worker.cmdline():   # forked, not a program started (whose SIGUSR1 would end it)
                _STACK_FILE.write(f"--- forked process {child.pid} ({child.status()}):\n")
                _STACK_FILE.flush()
                os.kill(child.pid, signal.SIGUSR1)
                time.sleep(0.5)
        except (psutil.Error, OSError):
            continue


@pytest.fixture(autouse=True, scope="session")
def _stacks_on_request():
    global _STACK_FILE
    if _STACK_FILE is not None:
        return
    STACKS.mkdir(parents=True, exist_ok=True)
    _STACK_FILE = open(STACKS / f"stacks-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.txt", "w")
    faulthandler.register(signal.SIGUSR1, file=_STACK_FILE, all_threads=True)
