"""Server-side chart export: the route renders a posted figure with the machine's Chromium, or says why not."""

import os
from types import SimpleNamespace

import pytest

from app import create_app
from components.services import image_export, render_pool

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
    monkeypatch.setattr(image_export, "shared_pool", lambda: SimpleNamespace(render=lambda *a: drawn.append(a) or b""))
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


# --- exports that cannot starve each other ---------------------------------------------------------------------

def test_a_chart_with_too_many_points_is_refused_before_rendering(client, monkeypatch):
    drawn = []
    monkeypatch.setattr(image_export, "shared_pool", lambda: SimpleNamespace(render=lambda *a: drawn.append(a)))
    many = {"data": [{"type": "scattergl", "y": [0] * (image_export.MAX_POINTS + 1)}]}
    response = client.post("/export/figure.pdf", json={"figure": many})
    text = response.get_data(as_text=True)
    assert response.status_code == 413 and "1,000,001 data points" in text and "at most 1,000,000" in text
    assert drawn == []


def test_a_histogram_with_too_many_bins_is_refused_before_rendering(client, monkeypatch):
    """The issue's 80 KB histogram2dcontour with 4,000 bins a side: 16 million cells."""
    drawn = []
    monkeypatch.setattr(image_export, "shared_pool", lambda: SimpleNamespace(render=lambda *a: drawn.append(a)))
    contour = {"data": [{"type": "histogram2dcontour", "x": list(range(2000)), "y": list(range(2000)),
                         "nbinsx": 4000, "nbinsy": 4000}]}
    response = client.post("/export/figure.png", json={"figure": contour})
    text = response.get_data(as_text=True)
    assert response.status_code == 413 and "figure.data[0] asks for 16,000,000 bins" in text, text
    assert drawn == []


def test_the_apps_own_heaviest_charts_are_within_the_limits():
    from components.figures import fairshare, gantt, network

    assert fairshare.LINE_POINTS <= image_export.MAX_POINTS and gantt.GANTT_MAX_BARS <= image_export.MAX_POINTS
    assert fairshare.HEATMAP_CELLS <= image_export.MAX_POINTS and network.HEATMAP_MAX_CELLS <= image_export.MAX_POINTS
    assert gantt.DENSITY_ROWS * gantt.DENSITY_COLUMNS <= image_export.MAX_POINTS


@pytest.mark.parametrize("error, text", [
    (render_pool.RenderTimeout("the chart took longer than 60 s to draw and was stopped"), "was stopped"),
    (render_pool.RenderBusy("2 charts are being drawn already"), "being drawn already"),
    (render_pool.RenderFailed("TypeError: x"), "could not draw the chart"),
])
def test_a_stopped_busy_or_failed_render_is_a_503_that_says_so(client, monkeypatch, error, text):
    def fail(*args):
        raise error
    monkeypatch.setattr(image_export, "shared_pool", lambda: SimpleNamespace(render=fail))
    response = client.post("/export/figure.pdf", json={"figure": FIGURE})
    assert response.status_code == 503 and text in response.get_data(as_text=True)


# A stand-in rendering process speaking the real framing: "slow" figures start a child (as Kaleido starts its
# browser) and never answer; others are drawn as b"image:<format>" at once.
FAKE_WORKER = """
import json, os, subprocess, sys, tempfile
from components.services.render_worker import DRAWN, read_frame, write_frame
answers = sys.stdout.buffer
while (message := read_frame(sys.stdin.buffer)) is not None:
    request = json.loads(message)
    if request["figure"].get("slow"):
        tempfile.mkdtemp(prefix="browser-profile-")
        subprocess.Popen(["sleep", "600"])
        subprocess.run(["sleep", "600"])
    write_frame(answers, DRAWN + b"image:" + request["opts"]["format"].encode())
"""


@pytest.fixture
def fake_pool():
    import sys

    pools = []

    def make(size=2, deadline_s=1.5):
        pool = render_pool.RenderPool(size, deadline_s, command=(sys.executable, "-c", FAKE_WORKER))
        pools.append(pool)
        return pool
    yield make
    for pool in pools:
        pool.close()


def test_a_render_past_its_deadline_is_killed_with_its_children_and_frees_its_slot(fake_pool):
    import time

    import psutil

    pool = fake_pool(size=1, deadline_s=1.0)
    assert pool.render('{"data": []}', {"format": "png"}) == b"image:png"
    worker = pool.workers()[0]
    assert os.path.isdir(worker.scratch)
    started = time.monotonic()
    with pytest.raises(render_pool.RenderTimeout, match="longer than 1 s to draw and was stopped"):
        pool.render('{"slow": true}', {"format": "pdf"})
    assert time.monotonic() - started < 5
    assert not psutil.pid_exists(worker.process.pid) or psutil.Process(worker.process.pid).status() == "zombie"
    sleepers = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "600"]]
    assert sleepers == [], "the render's children must be killed with it"
    assert not os.path.exists(worker.scratch), "its temporary files (the browser's profile) must go too"
    assert pool.render('{"data": []}', {"format": "svg"}) == b"image:svg"   # the one slot is free again


def test_a_small_export_is_not_held_up_by_a_slow_one(fake_pool):
    import threading
    import time

    pool = fake_pool(size=2, deadline_s=6)
    outcome = []

    def slow():
        try:
            pool.render('{"slow": true}', {"format": "pdf"})
        except render_pool.RenderTimeout as exc:
            outcome.append(exc)
    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    assert pool.render('{"data": []}', {"format": "png"}) == b"image:png"
    assert time.monotonic() - started < 4, "a small export waited behind a slow one"
    thread.join(timeout=30)
    assert len(outcome) == 1


def test_renders_reuse_one_browser(tmp_path):
    """Two exports through the real rendering process: the second is drawn by the same process and browser."""
    import time

    pool = render_pool.RenderPool(1, 60)
    try:
        first_started = time.monotonic()
        assert pool.render(__import__("json").dumps(FIGURE), {"format": "svg", "width": 300, "height": 200,
                                                              "scale": 1}).startswith(b"<svg")
        first = time.monotonic() - first_started
        (worker,) = pool.workers()
        second_started = time.monotonic()
        assert pool.render(__import__("json").dumps(FIGURE), {"format": "png", "width": 300, "height": 200,
                                                              "scale": 1}).startswith(b"\x89PNG")
        second = time.monotonic() - second_started
        assert pool.workers() == [worker] and worker.renders == 2
        assert second < first, (first, second)
    finally:
        pool.close()
