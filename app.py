"""schedscope web app: assembles the shell, the pages and the services.

    python app.py        # serves on SCHEDSCOPE_HOST:SCHEDSCOPE_PORT (127.0.0.1:8050)
"""

from __future__ import annotations

import os
from pathlib import Path

import diskcache
from dash import Dash

from components import (
    batch_page, compare_page, elastic_page, fairshare_page, gallery_page, network_page, scenario_page, shell,
    workspace_page,
)
from components import image_export, sweep_page
from components.jobs import JobManager
from components.runs import ResultCache
from components.uploads import UploadStore, max_upload_bytes
from components.workspace import ScenarioStore


def create_app(data_dir: str | os.PathLike | None = None) -> Dash:
    """Build the Dash app; ``data_dir`` holds the result cache, uploads and job state."""
    data = Path(data_dir or os.environ.get("SCHEDSCOPE_DATA", "data")).resolve()
    data.mkdir(parents=True, exist_ok=True)
    manager = JobManager(diskcache.Cache(str(data / "callbacks")), expire=600)
    app = Dash(
        __name__,
        title="schedscope",
        background_callback_manager=manager,
        suppress_callback_exceptions=True,
    )
    results = ResultCache(data / "results")
    uploads = UploadStore(data / "uploads", max_bytes=max_upload_bytes())
    scenarios = ScenarioStore(data / "scenarios")
    app.layout = shell.layout()
    shell.register_callbacks(app)
    image_export.register(app.server)
    fairshare_page.register_callbacks(app, results, uploads)
    batch_page.register_callbacks(app, results, uploads)
    network_page.register_callbacks(app, results, uploads)
    elastic_page.register_callbacks(app, results, uploads)
    compare_page.register_callbacks(app, results)
    gallery_page.register_callbacks(app, results)
    workspace_page.register_callbacks(app, results, uploads, scenarios)
    scenario_page.register_callbacks(app, results, scenarios)
    sweep_page.register_callbacks(app, sweep_page.SweepStore(data / "sweeps"))
    return app


if __name__ == "__main__":
    create_app().run(
        host=os.environ.get("SCHEDSCOPE_HOST", "127.0.0.1"),
        port=int(os.environ.get("SCHEDSCOPE_PORT", "8050")),
        debug=False,
    )
