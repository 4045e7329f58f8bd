"""Optional scale-out on Celery + Redis.

When the environment variable ``REDIS_URL`` is set (``redis://host:port/db``),
:func:`celery_app` returns a Celery application whose broker and result
backend are that Redis; otherwise it returns ``None`` and everything runs on
this machine. Only JSON crosses the wire (``task_serializer``,
``result_serializer`` and ``accept_content`` are JSON): a worker never
unpickles anything a client sent.

Tasks registered here:

``schedscope.sweep_point`` (:data:`SWEEP_TASK`)
    one point of a parameter sweep, ``sched_engine.sweeps.run_point(point)``:
    a JSON dict in, a JSON dict out (sent by :mod:`components.scaleout.sweep_executor`).
"""

from __future__ import annotations

import os
from functools import lru_cache

REDIS_ENV = "REDIS_URL"
SWEEP_TASK = "schedscope.sweep_point"
#: How Dash names the tasks of background callbacks (``CeleryManager.make_job_fn``: ``background_callback_<key>``).
DASH_TASK_PREFIX = "background_callback_"


class AckWhenTaken:
    """A Celery task annotation: the background callbacks' tasks are acknowledged when a worker takes them.

    The app's default is to acknowledge a task after it finishes, so that a
    sweep point whose worker died is handed to another worker. A page's run
    lost with its worker is reported on the page instead
    (:mod:`components.services.jobs`) and must not run again later. Celery's
    ``task_annotations`` set the option on Dash's tasks as Dash creates them,
    through Dash's public ``make_job_fn``.
    """

    def annotate(self, task):
        return {"acks_late": False} if task.name.startswith(DASH_TASK_PREFIX) else None


def redis_url() -> str | None:
    """``REDIS_URL`` from the environment, or ``None`` when unset or blank."""
    return os.environ.get(REDIS_ENV, "").strip() or None


def celery_app(url: str | None = None):
    """The Celery app for ``url`` (default :func:`redis_url`), or ``None`` without Redis."""
    url = url or redis_url()
    return _celery_for(url) if url else None


@lru_cache(maxsize=4)
def _celery_for(url: str):
    from celery import Celery  # imported only when scaling out

    app = Celery("schedscope", broker=url, backend=url)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        broker_connection_retry_on_startup=True,
        worker_prefetch_multiplier=1,   # simulations are long: one at a time per worker process
        task_acks_late=True,            # a task whose worker dies is handed to another worker...
        task_annotations=[AckWhenTaken()],   # ...except a page's run (see AckWhenTaken)
        result_expires=24 * 3600,
        redis_socket_connect_timeout=5,   # an unreachable Redis is reported, not waited for
    )

    @app.task(name=SWEEP_TASK)
    def sweep_point(point: dict) -> dict:
        from sched_engine.sweeps import run_point

        return run_point(point)

    return app
