"""The Celery manager builds its tasks through Dash's public ``CeleryManager.make_job_fn`` (no private import).

What the app relies on, checked without Redis (nothing here connects): the
method's signature, the name Dash gives the task (which the
``AckWhenTaken`` annotation matches), and that the task is acknowledged when
a worker takes it while the sweep task keeps the app's acknowledge-late
default. If a Dash upgrade changes any of these, these tests say which.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from dash import CeleryManager

from components.scaleout.celery_app import DASH_TASK_PREFIX, SWEEP_TASK, celery_app
from components.services import jobs
from components.services.celery_jobs import CeleryJobManager

URL = "redis://127.0.0.1:1/15"   # never connected to


def test_dash_make_job_fn_keeps_the_signature_the_manager_overrides():
    assert list(inspect.signature(CeleryManager.make_job_fn).parameters) == ["self", "fn", "progress", "key"], \
        "dash.CeleryManager.make_job_fn changed: CeleryJobManager.make_job_fn must follow it"


def test_run_tasks_are_dash_tasks_acknowledged_when_taken_and_sweeps_are_not():
    app = celery_app(URL)
    manager = CeleryJobManager(app)

    def callback(value):
        return value

    task = manager.make_job_fn(callback, progress=False, key="schedscope-api-check")
    assert task.name == f"{DASH_TASK_PREFIX}schedscope-api-check", \
        f"Dash now names its background tasks {task.name!r}; update DASH_TASK_PREFIX"
    assert task.acks_late is False
    assert app.tasks[SWEEP_TASK].acks_late is True


def test_no_private_dash_import_is_left():
    source = Path(inspect.getsourcefile(jobs)).read_text()
    assert "_make_job_fn" not in source
    root = Path(inspect.getsourcefile(jobs)).parents[2]
    private = re.compile(r"(from|import)\s+dash\._|dash\._[a-z]")
    found = [str(path.relative_to(root)) for path in [root / "app.py", *(root / "components").rglob("*.py")]
             if private.search(path.read_text())]
    assert found == [], f"private Dash modules used in {found}"
