"""Servers as real processes: a free loopback port, ``redis-server``, and the app (``python app.py``)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
import redis

from .dash_client import DashClient

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 90.0

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def redis_server(directory: Path, timeout: float = 20.0):
    """Start ``redis-server`` on a free loopback port in ``directory``; yields its URL, stops it on exit."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed; `make test` installs it (Debian: apt-get install redis-server)")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = directory / "redis.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(directory)], stdout=out, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}:\n{log.read_text()[-2000:]}")
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


class AppProcess:
    """``python app.py`` in its own process group, serving ``data`` on a free loopback port."""

    def __init__(self, data: Path, log: Path, extra_env: dict | None = None):
        self.data, self.log_path, self.port = data, log, free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SCHEDSCOPE_HOST")}
        env.update({"SCHEDSCOPE_DATA": str(data), "SCHEDSCOPE_PORT": str(self.port), "PYTHONUNBUFFERED": "1",
                    "PYTHONPATH": str(ROOT)}, **(extra_env or {}))
        self._log = open(log, "ab")
        self.process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"
        self._wait_until_serving()

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                DashClient(self.url, time.monotonic() + 10).request("/")
                return
            except OSError:
                time.sleep(0.1)
        self.kill()
        raise TimeoutError(f"the server did not answer within {START_TIMEOUT_S:.0f} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        return self.log_path.read_bytes()[-3000:].decode("utf-8", "replace")

    def group_members(self) -> list[int]:
        """Live processes of the server's process group (the server and its job processes)."""
        members = []
        for process in psutil.process_iter(["pid", "status"]):
            try:
                if os.getpgid(process.pid) == self.process.pid and process.status() != psutil.STATUS_ZOMBIE:
                    members.append(process.pid)
            except (ProcessLookupError, psutil.Error):
                continue
        return members

    def kill(self) -> None:
        """SIGKILL the whole process group (server and job processes) and reap the server."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while self.group_members() and time.monotonic() < deadline:
            time.sleep(0.05)
        self._log.close()
