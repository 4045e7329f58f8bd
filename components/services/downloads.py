"""Result frames as CSV files over plain HTTP, streamed from the result store.

``GET /download/<scenario hash>/<frame>.csv?name=<file name>`` answers the
``jobs``, ``timeline`` or ``summary`` frame of a stored run, or one of the
engine's own frames it holds (:data:`EXTRA_FRAMES`: the batch engine's
``pending``, why each job waited), as an attachment.
A 450,000-job frame is tens of megabytes of CSV: it goes to the browser as a
file download, written in chunks, never inside a callback response (which
stays small whatever the run's size). Unknown hashes or frames answer 404;
the file name is reduced to safe characters.
"""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pandas as pd
from flask import Response, abort, request

from sched_engine.core.result import FRAMES

from .csv_export import csv_text
from .image_export import safe_filename
from .result_store import is_scenario_hash

ROUTE = "/download/<scenario_hash>/<frame>.csv"
#: The engines' own frames (beyond the three) a link may ask for; a run without one answers 404.
EXTRA_FRAMES = ("pending",)
CHUNK_ROWS = 50_000


def download_href(scenario_hash: str, frame: str, name: str) -> str:
    """The link that downloads one frame of a stored run as ``name``."""
    return f"/download/{scenario_hash}/{frame}.csv?name={quote(safe_filename(name))}"


def csv_chunks(frame):
    """The CSV text of ``frame`` (header first), ``CHUNK_ROWS`` rows at a time.

    A categorical column (a run's reasons name jobs through the run's job ids) has its names turned into an
    array once, and each chunk takes its own from it: converting the categories per chunk would cost a
    whole log's names every 50,000 rows.
    """
    yield csv_text(frame.iloc[:0])
    names = {column: np.append(frame[column].cat.categories.to_numpy(object), None)   # the last: missing
             for column in frame.columns if isinstance(frame[column].dtype, pd.CategoricalDtype)}
    for start in range(0, len(frame), CHUNK_ROWS):
        chunk = frame.iloc[start:start + CHUNK_ROWS]
        if names:
            chunk = chunk.assign(**{column: values[chunk[column].cat.codes.to_numpy()]
                                    for column, values in names.items()})
        yield csv_text(chunk, header=False)


def register(server, results) -> None:
    """Add the download route to the Flask ``server``; ``results`` is the app's ResultCache."""

    @server.get(ROUTE)
    def _download(scenario_hash: str, frame: str):
        if frame not in FRAMES + EXTRA_FRAMES or not is_scenario_hash(scenario_hash):
            abort(404)
        result = results.get(scenario_hash)
        if result is None:
            abort(404, "no stored result with this hash (it may have been evicted: run it again)")
        frames = result.frames()
        if frame not in frames:
            abort(404, f"this run has no {frame} frame")
        name = safe_filename(request.args.get("name") or f"{scenario_hash[:12]}-{frame}.csv")
        if not name.endswith(".csv"):
            name += ".csv"
        return Response(csv_chunks(frames[frame]), mimetype="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})
