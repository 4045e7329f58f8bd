"""Server-side chart export: a figure as shown in the browser, rendered to PDF, SVG or PNG on the server.

The browser posts the chart's figure JSON (``data`` and ``layout``) to
``/export/figure.<format>``; the server rebuilds it with
``plotly.io.from_json`` (plain JSON, validated by Plotly -- nothing is
evaluated) and renders it with Kaleido, which drives the machine's own
headless Chromium (Debian's ``chromium``; no download, works offline). PDF is
the reason to go through the server: the browser's own export (Plotly's PNG
camera, our SVG button) cannot produce it.

Errors are answered as plain text with a status the page can show: 400 for
a body that is not a figure, 413 above :data:`MAX_FIGURE_BYTES`, 503 when no
Chromium is available to render.

The server draws only what the chart holds (:func:`check_self_contained`):
images only as ``data:`` URIs of raster formats, no other address anywhere
in the figure (``file:``, ``http(s)``, relative paths, map tiles), checked
before Chromium sees the figure -- otherwise anyone who can post to the
port could read the server's files or make it fetch addresses it can reach.
As a second wall, the rendering Chromium gets an unreachable proxy (no
request leaves for another host) and no MathJax (which would come from a
CDN).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading

import kaleido
import plotly.io as pio
from flask import Response, request

FORMATS = {"pdf": "application/pdf", "svg": "image/svg+xml", "png": "image/png"}
MAX_FIGURE_BYTES = 20 * 2**20
ROUTE = "/export/figure.<fmt>"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Kaleido keeps one browser process; renders are serialised through it.
_RENDER_LOCK = threading.Lock()


def browser_path() -> str | None:
    """The Chromium Kaleido should drive: ``BROWSER_PATH`` if set, else the first one on ``PATH``."""
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def safe_filename(name: str | None) -> str:
    """A download name made of letters, digits, dots, dashes and underscores (``chart`` when nothing is left)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name or "")).strip("-.")[:60]
    return text or "chart"


#: Raster images a figure may embed (an SVG image could itself reference files or addresses).
EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z")
#: Attributes that name something to load: images (``layout.images[].source``, the ``image`` trace's
#: ``source``) and GeoJSON (``geojson``, also in map layers).
LOADED_ATTRIBUTES = frozenset({"source", "geojson"})
#: Trace types drawn over map tiles fetched from the network.
TILED_TRACES = frozenset({"scattermapbox", "choroplethmapbox", "densitymapbox", "scattermap", "choroplethmap",
                          "densitymap"})
#: A URL of any scheme, or a protocol-relative one (``//host/x``).
ADDRESS = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://|\A//|\A\s*file:")
#: Where Kaleido's Chromium sends web requests: a closed port (discard), so none reaches any host.
UNREACHABLE_PROXY = "127.0.0.1:9"


def check_self_contained(figure: dict) -> None:
    """Raise ``ValueError`` naming the field when the figure refers to anything outside itself."""
    for index, trace in enumerate(figure.get("data") or []):
        if isinstance(trace, dict) and trace.get("type") in TILED_TRACES:
            raise ValueError(f"figure.data[{index}]: map traces ({trace['type']}) load tiles from the network")
    _check_values(figure, "figure")


def _check_values(figure, path: str) -> None:
    """Every string in the figure: no address or file; loaded attributes only embedded raster images."""
    if isinstance(figure, dict):
        for key, value in figure.items():
            where = f"{path}.{key}"
            if key in LOADED_ATTRIBUTES and value is not None and not isinstance(value, (dict, list)):
                if not (isinstance(value, str) and EMBEDDED_IMAGE.match(value)):
                    raise ValueError(f"{where}: images may only be embedded PNG, JPEG, GIF or WebP data "
                                     "(data:image/...;base64), not a file, an address or an SVG")
            _check_values(value, where)
    elif isinstance(figure, list):
        for index, value in enumerate(figure):
            _check_values(value, f"{path}[{index}]")
    elif isinstance(figure, str) and ADDRESS.search(figure) and not EMBEDDED_IMAGE.match(figure):
        raise ValueError(f"{path}: the chart may not refer to an address or a file ({figure[:60]!r})")


def render(figure_json: str, fmt: str, *, width: int | None = None, height: int | None = None) -> bytes:
    """Render a figure's JSON text to ``fmt`` bytes; raises ``ValueError`` for a body that is not a figure."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    posted = json.loads(figure_json)
    traces, layout = posted.get("data", []), posted.get("layout", {})
    if not isinstance(traces, list) or not all(isinstance(t, dict) for t in traces) or not isinstance(layout, dict):
        raise ValueError("a figure has a list of traces (data) and a layout object")
    check_self_contained(posted)
    # Attributes this Plotly version does not know are dropped (the browser may add some); whole
    # traces are not: an unknown trace type is an error, not a silently emptier chart.
    pio.from_json(json.dumps({"data": [{"type": t.get("type", "scatter")} for t in traces]}), skip_invalid=False)
    figure = pio.from_json(figure_json, skip_invalid=True)
    path = browser_path()
    if path:
        os.environ.setdefault("BROWSER_PATH", path)
    layout = figure.layout
    with _RENDER_LOCK:
        return kaleido.calc_fig_sync(
            figure.to_dict(),
            opts={"format": fmt, "width": width or layout.width or pio.defaults.default_width,
                  "height": height or layout.height or pio.defaults.default_height, "scale": 1},
            kopts={"mathjax": False, "proxy_server": UNREACHABLE_PROXY},
        )


def _size(value) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if 50 <= number <= 5000 else None


def register(server) -> None:
    """Add the export route to the app's Flask server."""

    @server.post(ROUTE)
    def export_figure(fmt: str):
        if fmt not in FORMATS:
            return Response(f"Unknown format {fmt!r}: use pdf, svg or png.", status=404, mimetype="text/plain")
        if (request.content_length or 0) > MAX_FIGURE_BYTES:
            return Response("The chart is too large to export on the server.", status=413, mimetype="text/plain")
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("figure"), dict):
            return Response("Expected a JSON body with the chart's figure.", status=400, mimetype="text/plain")
        if browser_path() is None:
            return Response("Server-side export needs Chromium on the server (Debian package chromium); "
                            "use the PNG or SVG buttons instead.", status=503, mimetype="text/plain")
        try:
            image = render(json.dumps(body["figure"]), fmt, width=_size(body.get("width")),
                           height=_size(body.get("height")))
        except ValueError as exc:
            return Response(f"Not a chart this server can draw: {str(exc)[:300]}", status=400, mimetype="text/plain")
        except Exception as exc:  # noqa: BLE001 -- the external browser process failed; say so, keep serving
            return Response(f"The server could not draw the chart ({exc.__class__.__name__}); "
                            "use the PNG or SVG buttons instead.", status=503, mimetype="text/plain")
        name = safe_filename(body.get("filename"))
        return Response(image, mimetype=FORMATS[fmt],
                        headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'})
