"""``make run``'s server for tests: gunicorn with two workers over one data directory, on a free loopback port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.support.dash_client import DashClient
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
#: Each access-log line: the worker's process id, then the request line and status.
ACCESS_FORMAT = 'worker=%(p)s "%(r)s" %(s)s'
ACCESS_LINE = re.compile(r'worker=<(\d+)> "(\S+) (\S+) [^"]*" (\d+)')


class ProductionServer:
    """gunicorn with two workers over ``data``, as ``make run`` starts it, on a free loopback port."""

    def __init__(self, data: Path, log: Path, extra_env: dict | None = None):
        self.port, self.log_path = free_port(), log
        env = {k: v for k, v in os.environ.items()
               if k not in ("REDIS_URL", "SCHEDSCOPE_TRUSTED_HOSTS", "SCHEDSCOPE_USERS", "SCHEDSCOPE_USER_HEADER")}
        env.update({"SCHEDSCOPE_DATA": str(data), "SCHEDSCOPE_HOST": "127.0.0.1", "PYTHONPATH": str(ROOT)},
                   **(extra_env or {}))
        self._log = open(log, "ab")
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "--bind", f"127.0.0.1:{self.port}", "--workers", "2",
             "--threads", "4", "--timeout", "120", "--error-logfile", "-", "--access-logfile", "-",
             "--access-logformat", ACCESS_FORMAT, "app:create_server()"],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                DashClient(self.url, time.monotonic() + 10).request("/")
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"gunicorn did not start:\n{self.log()}") from None
                time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def requests(self) -> list[tuple[int, str, str, int]]:
        """``(worker pid, method, path, status)`` of every request answered so far."""
        return [(int(pid), method, path, int(status)) for pid, method, path, status in ACCESS_LINE.findall(self.log())]

    def memory_mb(self) -> float:
        processes = [psutil.Process(self.process.pid), *psutil.Process(self.process.pid).children(recursive=True)]
        return sum(p.memory_info().rss for p in processes) / 2**20

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        self._log.close()
