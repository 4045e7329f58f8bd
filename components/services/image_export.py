"""Server-side chart export: a figure as shown in the browser, rendered to PDF, SVG or PNG on the server.

The browser posts the chart's figure JSON (``data`` and ``layout``) to
``/export/figure.<format>``; the server rebuilds it with
``plotly.io.from_json`` (plain JSON, validated by Plotly -- nothing is
evaluated) and renders it with Kaleido, which drives the machine's own
headless Chromium (Debian's ``chromium``; no download, works offline). PDF is
the reason to go through the server: the browser's own export (Plotly's PNG
camera, our SVG button) cannot produce it.

Errors are answered as plain text with a status the page can show: 400 for
a body that is not a figure, 413 above :data:`MAX_FIGURE_BYTES` or for a
chart too complex to draw (:func:`check_complexity`: more than
:data:`MAX_POINTS` data points or :data:`MAX_BINS` histogram bins, counted
before any rendering), 503 when no Chromium is available, when the render
passed its deadline, or when every render slot stayed busy.

Renders never wait behind one another's lock: each runs in a rendering
process of :mod:`components.services.render_pool` (a few at once, each
killed at a hard deadline, each keeping its browser between renders).

The server draws only what the chart holds (:func:`check_self_contained`):
images only as ``data:`` URIs of raster formats, no other address anywhere
in the figure (``file:``, ``http(s)``, relative paths, map tiles), checked
before Chromium sees the figure -- otherwise anyone who can post to the
port could read the server's files or make it fetch addresses it can reach.
As a second wall, the rendering Chromium gets an unreachable proxy (no
request leaves for another host) and no MathJax (which would come from a
CDN): see :mod:`components.services.render_worker`.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import plotly.io as pio
from flask import Response, request

from .render_pool import RenderBusy, RenderFailed, RenderTimeout, shared_pool

FORMATS = {"pdf": "application/pdf", "svg": "image/svg+xml", "png": "image/png"}
MAX_FIGURE_BYTES = 20 * 2**20
ROUTE = "/export/figure.<fmt>"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: The most data points a chart drawn on the server may hold (over all traces, shapes and annotations).
MAX_POINTS = 1_000_000
#: The most bins a histogram (or 2-D histogram, contour: the product over its axes) may ask for.
MAX_BINS = 250_000
#: Attributes of a trace that set its bin counts.
BIN_COUNTS = ("nbinsx", "nbinsy", "ncontours")


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


class TooComplex(ValueError):
    """A chart with more points or bins than the server draws."""


def check_complexity(figure: dict) -> None:
    """Raise :class:`TooComplex` naming the count and its limit when ``figure`` is too heavy to draw.

    A trace's points are its longest data array (a 2-D array counts its
    cells); each shape and annotation is one point. A trace's bins are the
    product of its bin counts (``nbinsx`` x ``nbinsy``, ``ncontours``).
    """
    traces = [t for t in figure.get("data") or [] if isinstance(t, dict)]
    layout = figure.get("layout") if isinstance(figure.get("layout"), dict) else {}
    points = sum(_longest_array(trace) for trace in traces)
    points += sum(len(layout.get(key) or []) for key in ("shapes", "annotations") if isinstance(layout.get(key), list))
    if points > MAX_POINTS:
        raise TooComplex(f"the chart holds {points:,} data points; the server draws at most {MAX_POINTS:,}")
    for index, trace in enumerate(traces):
        bins = 1
        for key in BIN_COUNTS:
            count = trace.get(key)
            if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 1:
                bins *= count
        if bins > MAX_BINS:
            raise TooComplex(f"figure.data[{index}] asks for {bins:,.0f} bins; the server draws at most {MAX_BINS:,}")


def _longest_array(value) -> int:
    """The element count of the largest array in ``value`` (nested lists counted whole)."""
    if isinstance(value, dict):
        return max((_longest_array(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return sum(_longest_array(v) if isinstance(v, list) else 1 for v in value)
    return 0


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
    check_complexity(posted)   # before Plotly validates it: that alone takes long on a huge figure
    # Attributes this Plotly version does not know are dropped (the browser may add some); whole
    # traces are not: an unknown trace type is an error, not a silently emptier chart.
    pio.from_json(json.dumps({"data": [{"type": t.get("type", "scatter")} for t in traces]}), skip_invalid=False)
    figure = pio.from_json(figure_json, skip_invalid=True)
    path = browser_path()
    if path:
        os.environ.setdefault("BROWSER_PATH", path)
    layout = figure.layout
    return shared_pool().render(figure.to_json(), {
        "format": fmt, "width": width or layout.width or pio.defaults.default_width,
        "height": height or layout.height or pio.defaults.default_height, "scale": 1})


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
        except TooComplex as exc:
            return Response(f"The chart is too complex to draw on the server: {exc}. Narrow the time window or "
                            "use the PNG or SVG buttons.", status=413, mimetype="text/plain")
        except ValueError as exc:
            return Response(f"Not a chart this server can draw: {str(exc)[:300]}", status=400, mimetype="text/plain")
        except (RenderTimeout, RenderBusy) as exc:
            return Response(f"The server did not draw the chart: {exc}.", status=503, mimetype="text/plain")
        except RenderFailed as exc:
            return Response(f"The server could not draw the chart ({str(exc)[:200]}); "
                            "use the PNG or SVG buttons instead.", status=503, mimetype="text/plain")
        except Exception as exc:  # noqa: BLE001 -- the external browser process failed; say so, keep serving
            return Response(f"The server could not draw the chart ({exc.__class__.__name__}); "
                            "use the PNG or SVG buttons instead.", status=503, mimetype="text/plain")
        name = safe_filename(body.get("filename"))
        return Response(image, mimetype=FORMATS[fmt],
                        headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'})
