"""Server-side chart export: the route renders a posted figure with the machine's Chromium, or says why not."""

import pytest

from app import create_app
from components.services import image_export

pytestmark = pytest.mark.browser   # renders with Debian's chromium, like the browser tests
FIGURE = {"data": [{"type": "scatter", "x": [0, 1, 2], "y": [3, 1, 2], "name": "EASY"}],
          "layout": {"title": {"text": "Queue length"}}}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    return create_app(tmp_path_factory.mktemp("data")).server.test_client()


@pytest.mark.parametrize("fmt, magic", [("pdf", b"%PDF"), ("svg", b"<svg"), ("png", b"\x89PNG")])
def test_a_posted_figure_comes_back_as_an_image(client, fmt, magic):
    response = client.post(f"/export/figure.{fmt}", json={"figure": FIGURE, "filename": "queue length/../x",
                                                          "width": 600, "height": 400})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.data.startswith(magic)
    assert response.mimetype == image_export.FORMATS[fmt]
    assert response.headers["Content-Disposition"] == f'attachment; filename="queue-length-..-x.{fmt}"'


@pytest.mark.parametrize("body, status, text", [
    (None, 400, "Expected a JSON body"),
    ({"figure": [1, 2]}, 400, "Expected a JSON body"),
    ({"figure": {"data": [{"type": "no-such-trace"}]}}, 400, "no-such-trace"),
    ({"figure": {"data": "nope"}}, 400, "list of traces"),
    ({"figure": {"data": [5]}}, 400, "list of traces"),
    ({"figure": {"layout": "x"}}, 400, "layout object"),
])
def test_a_body_that_is_not_a_figure_is_refused(client, body, status, text):
    response = client.post("/export/figure.pdf", json=body) if body is not None else \
        client.post("/export/figure.pdf", data=b"not json", content_type="application/json")
    assert response.status_code == status and text in response.get_data(as_text=True)


def test_unknown_formats_and_oversized_bodies_are_refused(client, monkeypatch):
    assert client.post("/export/figure.exe", json={"figure": FIGURE}).status_code == 404
    monkeypatch.setattr(image_export, "MAX_FIGURE_BYTES", 100)
    response = client.post("/export/figure.pdf", json={"figure": FIGURE, "pad": "x" * 200})
    assert response.status_code == 413


def test_without_chromium_the_route_says_so(client, monkeypatch):
    monkeypatch.setattr(image_export, "browser_path", lambda: None)
    response = client.post("/export/figure.pdf", json={"figure": FIGURE})
    assert response.status_code == 503 and "needs Chromium" in response.get_data(as_text=True)


@pytest.mark.parametrize("name, expected", [("Queue length", "Queue-length"), ("../../etc/passwd", "etc-passwd"),
                                            ("", "chart"), (None, "chart"), ("é" * 5, "chart")])
def test_download_names_are_plain(name, expected):
    assert image_export.safe_filename(name) == expected


PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def with_image(source, **image):
    return {"data": FIGURE["data"], "layout": {**FIGURE["layout"], "images": [
        {"source": source, "xref": "paper", "yref": "paper", "x": 0, "y": 1, "sizex": 0.2, "sizey": 0.2, **image}]}}


@pytest.fixture
def listener():
    """A loopback HTTP server that records every request it gets (there must be none)."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen = []

    class Record(BaseHTTPRequestHandler):
        def do_GET(self):   # noqa: N802 -- the standard library's name
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()


def test_a_chart_may_embed_raster_images_only(client):
    response = client.post("/export/figure.svg", json={"figure": with_image(PIXEL)})
    assert response.status_code == 200 and b"<svg" in response.data


def test_references_outside_the_chart_are_refused_before_chromium_sees_them(client, listener, tmp_path, monkeypatch):
    address, seen = listener
    canary = tmp_path / "canary.png"
    canary.write_bytes(bytes.fromhex("89504e470d0a1a0a") + b"CANARY-CONTENT")
    svg = "data:image/svg+xml;base64," + __import__("base64").b64encode(
        f'<svg xmlns="http://www.w3.org/2000/svg"><image href="{address}/svg"/></svg>'.encode()).decode()
    drawn = []
    monkeypatch.setattr(image_export.kaleido, "calc_fig_sync", lambda *a, **k: drawn.append(a) or b"")
    bodies = {
        "layout.images[0].source": with_image(f"file://{canary}"),
        "layout.images[0].source ": with_image(f"{address}/image.png"),
        "layout.images[0].source  ": with_image("canary.png"),
        "layout.images[0].source   ": with_image(svg),
        "layout.template.layout.images[0].source": {"data": FIGURE["data"], "layout": {"template": {"layout": {
            "images": [{"source": f"//127.0.0.1/{canary}"}]}}}},
        "data[0].source": {"data": [{"type": "image", "source": f"{address}/trace.png"}]},
        "data[0].geojson": {"data": [{"type": "choropleth", "geojson": f"{address}/shapes.json"}]},
        "data[0]": {"data": [{"type": "scattermap", "lat": [0], "lon": [0]}]},
        "layout.title.text": {"data": FIGURE["data"], "layout": {"title": {"text": f"<img src='file://{canary}'>"}}},
    }
    for field, figure in bodies.items():
        response = client.post("/export/figure.svg", json={"figure": figure})
        text = response.get_data(as_text=True)
        assert response.status_code == 400 and f"figure.{field.strip()}" in text, (field, text)
        assert b"CANARY" not in response.data
    assert drawn == [] and seen == []


def test_the_apps_own_charts_pass_the_check():
    import json

    import pandas as pd

    from components.figures import batch as batch_figures

    figure = batch_figures.size_histogram(pd.DataFrame({"procs": [1, 2, 8, 64]}))
    image_export.check_self_contained(json.loads(figure.to_json()))   # the template holds map trace defaults
