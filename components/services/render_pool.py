"""Chart renders that cannot starve each other: a few rendering processes, each render under a hard deadline.

* **At most** ``size`` **renders at once** per server process (a semaphore,
  ``SCHEDSCOPE_EXPORT_RENDERS``, default 2); a request that finds every
  slot taken waits for one at most ``deadline_s``, then is told the server
  is busy. No lock is held around a render: a large chart occupies one slot,
  and a small one still draws in another.
* **Each render runs in a process of its own**
  (:mod:`components.services.render_worker`), which keeps its browser open
  between renders: the first export of a slot starts Chromium, the next ones
  reuse it.
* **A hard deadline** (``SCHEDSCOPE_EXPORT_SECONDS``, default 60): a render
  not answered in time has its process and its browser killed, the slot is
  freed at once, and the request gets :class:`RenderTimeout`, whose text
  says what happened and what to do. The browser's files go with it (each
  process has a temporary directory of its own, removed when it is killed).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import psutil

from .render_worker import DRAWN, HEADER, IDLE_S
from .run_limits import whole_number_setting

RENDERS_ENV = "SCHEDSCOPE_EXPORT_RENDERS"
DEADLINE_ENV = "SCHEDSCOPE_EXPORT_SECONDS"
DEFAULT_RENDERS = 2
DEFAULT_DEADLINE_S = 60
#: An idle process this close to its own idle timeout is not given another render.
IDLE_MARGIN_S = 30.0
WORKER_COMMAND = (sys.executable, "-m", "components.services.render_worker")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RenderTimeout(RuntimeError):
    """A render passed its deadline and was stopped."""


class RenderBusy(RuntimeError):
    """Every render slot stayed taken for the whole wait."""


class RenderFailed(RuntimeError):
    """The rendering process answered with an error, or ended without answering."""


class RenderWorker:
    """One rendering process (and, once it has drawn, its browser), with a temporary directory of its own.

    The browser's profile and Kaleido's page live in that directory
    (``TMPDIR``): a process killed mid-render cannot clean up after itself, so
    :meth:`kill` removes the directory with it.
    """

    def __init__(self, command, env: dict):
        self.scratch = tempfile.mkdtemp(prefix="schedscope-render-")
        self.process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
                                        env={**env, "TMPDIR": self.scratch}, start_new_session=True)
        self.renders = 0
        self.idle_since = time.monotonic()

    def alive(self) -> bool:
        return self.process.poll() is None

    def render(self, request: bytes, deadline: float) -> bytes:
        """The image for ``request``; raises :class:`RenderTimeout` at ``deadline`` (``time.monotonic``)."""
        self._write(HEADER.pack(len(request)) + request, deadline)
        (length,) = HEADER.unpack(self._read(HEADER.size, deadline))
        answer = self._read(length, deadline)
        self.renders += 1
        if answer[:1] != DRAWN:
            raise RenderFailed(answer[1:].decode("utf-8", "replace"))
        return answer[1:]

    def _write(self, data: bytes, deadline: float) -> None:
        descriptor, view = self.process.stdin.fileno(), memoryview(data)
        while view:
            if not select.select([], [descriptor], [], max(0.0, deadline - time.monotonic()))[1]:
                raise RenderTimeout
            try:
                view = view[os.write(descriptor, view[:65536]):]
            except BrokenPipeError:
                raise RenderFailed("the rendering process ended") from None

    def _read(self, size: int, deadline: float) -> bytes:
        descriptor, chunks, got = self.process.stdout.fileno(), [], 0
        while got < size:
            if not select.select([descriptor], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise RenderTimeout
            chunk = os.read(descriptor, min(size - got, 2**20))
            if not chunk:
                raise RenderFailed("the rendering process ended without answering")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def kill(self) -> None:
        """End the process and everything it started (its browser), now."""
        try:
            family = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            family = []
        for process in [*family, self.process]:
            try:
                process.kill()
            except (psutil.Error, ProcessLookupError):
                continue
        self.process.wait()
        psutil.wait_procs(family, timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


class RenderPool:
    """Up to ``size`` rendering processes of this server process, each render bounded by ``deadline_s``."""

    def __init__(self, size: int, deadline_s: float, command=WORKER_COMMAND, env: dict | None = None):
        self.size, self.deadline_s = size, deadline_s
        self.command, self.env = tuple(command), env
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[RenderWorker] = []
        self._lock = threading.Lock()   # guards the idle list only, never a render
        atexit.register(self.close)

    def render(self, figure_json: str, opts: dict) -> bytes:
        """The image of the figure in ``figure_json``; raises RenderBusy, RenderTimeout or RenderFailed."""
        request = f'{{"figure": {figure_json}, "opts": {json.dumps(opts)}}}'.encode()
        if not self._slots.acquire(timeout=self.deadline_s):
            raise RenderBusy(f"{self.size} charts are being drawn already and none finished within "
                             f"{self.deadline_s:g} s; try again in a moment")
        try:
            return self._render_in_slot(request)
        finally:
            self._slots.release()

    def _render_in_slot(self, request: bytes) -> bytes:
        worker = self._take()
        try:
            image = worker.render(request, time.monotonic() + self.deadline_s)
        except RenderTimeout:
            worker.kill()
            raise RenderTimeout(f"the chart took longer than {self.deadline_s:g} s to draw and was stopped; "
                                "draw fewer points, or use the PNG or SVG buttons") from None
        except BaseException:
            worker.kill()
            raise
        worker.idle_since = time.monotonic()
        with self._lock:
            self._idle.append(worker)
        return image

    def _take(self) -> RenderWorker:
        """An idle process that will not end by its own idle timeout mid-request, else a new one."""
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive() and time.monotonic() - worker.idle_since < IDLE_S - IDLE_MARGIN_S:
                    return worker
                worker.kill()
        return self._start()

    def _start(self) -> RenderWorker:
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
        return RenderWorker(self.command, env)

    def workers(self) -> list[RenderWorker]:
        """The idle rendering processes (for the Workspace and tests)."""
        with self._lock:
            return list(self._idle)

    def close(self) -> None:
        """Kill every idle rendering process (those drawing are killed by their render's end)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_pool: RenderPool | None = None
_pool_lock = threading.Lock()


def shared_pool() -> RenderPool:
    """This server process's pool, sized from the environment on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = RenderPool(whole_number_setting(None, RENDERS_ENV, DEFAULT_RENDERS, "renders"),
                               whole_number_setting(None, DEADLINE_ENV, DEFAULT_DEADLINE_S, "seconds"))
        return _pool
