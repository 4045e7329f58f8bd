"""Server-side chart export: the route renders a posted figure with the machine's Chromium, or says why not."""

import pytest

from app import create_app
from components import image_export

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
