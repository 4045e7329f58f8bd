"""Helpers for the worker processes the engine starts itself (sweep points, sizing probes)."""

from __future__ import annotations

import os
import threading
import time


def exit_with_parent(parent: int) -> None:
    """In a pool worker (its ``initializer``): exit when the process that started the pool, ``parent``, is
    gone (killed, cancelled), so no worker outlives the run that needed it. Checked once a second."""
    def watch():
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
