"""A built Dash app served on a loopback port in this process, for tests that talk HTTP to it."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import psutil
from werkzeug.serving import WSGIRequestHandler, make_server


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


@contextmanager
def served_app(app):
    """A built Dash ``app`` on a loopback port, in this process; yields ``(base url, job processes())``.

    Its job processes (forks of this process) still alive at the end are killed.
    """
    me = psutil.Process()
    earlier = {child.pid for child in me.children()}
    server = make_server("127.0.0.1", 0, app.server, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def job_processes() -> list[psutil.Process]:
        """This server's job processes (forks of this process) still alive."""
        alive = []
        for child in me.children():
            try:
                if (child.pid not in earlier and child.cmdline() == me.cmdline()
                        and child.status() != psutil.STATUS_ZOMBIE):
                    alive.append(child)
            except psutil.Error:
                continue
        return alive
    try:
        yield f"http://127.0.0.1:{server.server_port}", job_processes
    finally:
        server.shutdown()
        thread.join(timeout=10)
        for child in job_processes():
            child.kill()
