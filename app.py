"""schedscope web app: assembles the shell, the pages and the services.

    make run             # gunicorn, "app:create_server()", on SCHEDSCOPE_HOST:SCHEDSCOPE_PORT (127.0.0.1:8050)
    python app.py        # Flask's development server on the same address (make dev)

With ``REDIS_URL`` set, background callbacks run on Celery workers started with
``celery -A app:celery_app worker`` (``make worker``) and results live in that
Redis; without it everything runs on this machine.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from dash import Dash

from components import shell
from components.pages import (
    Services,
    batch,
    compare,
    elastic,
    fairshare,
    gallery,
    home,
    network,
    scenario,
    site,
    sweeps,
    workspace,
)
from components.pages.sweeps.store import SweepStore
from components.scaleout import celery_app as scaleout
from components.services import downloads, image_export, login, prepared, request_guard, scoped
from components.services.access import open_access
from components.services.celery_jobs import CeleryJobManager
from components.services.data_check import open_job_store, skipped_files
from components.services.jobs import JobManager, report_lost_job
from components.services.prepared import PreparedFiles
from components.services.progress import settle_lazy_set_ups
from components.services.run_cap import install_client_cookie, max_runs_per_client
from components.services.runs import ResultCache, ResultStoreUnreachable
from components.services.secret_key import server_secret
from components.services.uploads import UploadStore, max_upload_bytes
from components.services.warm import freeze_for_forks, warm_code_digests, warm_compiled_kernels, warm_imports
from components.services.workspace import SAMPLE_TRACES, ScenarioStore

#: Every page, in the navigation's order: the one list the shell's routes and the callbacks come from.
PAGES = [
    scenario.PAGE,   # first: its permalinks (/?scenario=<hash>) take any path
    home.PAGE,
    fairshare.PAGE,
    batch.PAGE,
    network.PAGE,
    elastic.PAGE,
    site.PAGE,
    compare.PAGE,
    gallery.PAGE,
    workspace.PAGE,
    sweeps.PAGE,
]


def create_app(data_dir: str | os.PathLike | None = None) -> Dash:
    """Build the Dash app; ``data_dir`` holds uploads, saved scenarios and, without ``REDIS_URL``, results and jobs."""
    data = Path(data_dir or os.environ.get("SCHEDSCOPE_DATA", "data")).resolve()
    data.mkdir(parents=True, exist_ok=True)
    url = scaleout.redis_url()
    if url:
        manager = CeleryJobManager(scaleout.celery_app(url), expire=600)
    else:
        manager = JobManager(open_job_store(data / "callbacks"), expire=600)
    manager.cap = max_runs_per_client()
    app = Dash(
        __name__,
        title="schedscope",
        background_callback_manager=manager,
        on_error=report_lost_job,
        suppress_callback_exceptions=True,
    )
    app.server.secret_key = server_secret(data)   # signs background-callback handles: one key per data directory
    login.install(app.server)                      # a login only with SCHEDSCOPE_USERS or SCHEDSCOPE_USER_HEADER
    results = ResultCache(data / "results", redis_url=url)
    uploads = UploadStore(data / "uploads", max_bytes=max_upload_bytes())
    scenarios = ScenarioStore(data / "scenarios", input_roots=(data / "uploads", SAMPLE_TRACES))
    stores = [scenarios, results, uploads]
    if login.enabled(app.server):   # each user sees their own runs, uploads and scenarios, and those shared
        stores.append(open_access(data, url))
    services = Services(results=results, uploads=uploads, scenarios=scenarios,
                        sweeps=SweepStore(data / "sweeps"), skipped=lambda: skipped_files(data, *stores),
                        prepared=PreparedFiles(data / "prepared"), data=data)
    if login.enabled(app.server):
        services = scoped.user_services(services, stores[-1], data / "uploads")
    app.layout = shell.layout(PAGES)
    shell.register_callbacks(app, PAGES)
    image_export.register(app.server)
    install_client_cookie(app.server)
    downloads.register(app.server, services.results)
    prepared.register(app.server, services.prepared)
    for page in PAGES:
        if page.register:
            page.register(app, services)
    request_guard.install(app.server, app.callback_map, uploads.max_bytes)
    _report_unreadable(data, *stores)
    settle_lazy_set_ups()
    warm_imports()
    warm_code_digests()
    _set_up_before_serving(app)
    return app


def _report_unreadable(data: Path, *stores) -> None:
    """Log each unreadable file of the data directory once, as the server starts (the Workspace page lists them)."""
    try:
        skipped_files(data, *stores)
    except ResultStoreUnreachable as exc:   # Redis down: its pages say so; the server starts all the same
        logging.getLogger(__name__).warning("at start: %s", exc)


def _set_up_before_serving(app: Dash) -> None:
    """Register the page's scripts now, in one thread, instead of on the first request.

    Dash registers the component scripts it may serve while building its
    index page, on the first request, and marks that set-up done as it
    starts it: a fresh gunicorn worker's concurrent first requests (its
    threads) could find no script registered yet and answer 500 for
    ``/_dash-component-suites/...``. Building the index page once here, in a
    request context that is not a request (Flask stays open to set-up),
    registers them.
    """
    trusted = app.server.config.get("TRUSTED_HOSTS") or ["localhost"]
    with app.server.test_request_context("/", headers={"Host": trusted[0].lstrip(".")}):
        app.index()


def create_server():
    """The Flask server of a new app (its data directory from ``SCHEDSCOPE_DATA``): gunicorn's entry point.

    Every gunicorn worker builds its own app over the same data directory;
    results, uploads and the background jobs' store are files there (or in
    Redis), so any worker can answer any request.
    """
    server = (dash_app or create_app()).server
    warm_compiled_kernels()
    freeze_for_forks()
    return server


# With REDIS_URL set, importing this module builds the app: that registers every
# background callback as a Celery task, under the names the web server sends, so
# `celery -A app:celery_app worker` (make worker) can run them.
celery_app = scaleout.celery_app()
dash_app = create_app() if celery_app is not None else None


if __name__ == "__main__":
    (dash_app or create_app()).run(
        host=os.environ.get("SCHEDSCOPE_HOST", "127.0.0.1"),
        port=int(os.environ.get("SCHEDSCOPE_PORT", "8050")),
        debug=False,
    )
