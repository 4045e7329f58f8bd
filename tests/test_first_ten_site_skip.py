"""The Site page's 'skip malformed lines': offered for bad rows, read as the box says, kept with the upload."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from dash.exceptions import PreventUpdate

from components.pages.site import callbacks, run
from components.services.uploads import UploadStore

GOOD = (Path(__file__).parent / "data" / "batch" / "cons_vs_easy.swf").read_text()
TRUNCATED = GOOD + "5 40 -1 10 2\n"   # a last line cut short
HW = {"rows": [{"name": "c", "machines": 4, "cpus_per_machine": 1}]}


def _data_url(text: bytes | str) -> str:
    data = text.encode() if isinstance(text, str) else text
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


@pytest.fixture
def uploads(tmp_path):
    return UploadStore(tmp_path / "uploads")


def test_a_truncated_line_is_refused_with_the_skip_hint_and_ticking_reads_it_again(uploads):
    options, value, message, cut, refused = callbacks.upload_site(uploads, _data_url(TRUNCATED), "mine.swf")
    said = str(message.children)
    assert refused is True and "Tick 'skip malformed lines' to load the rest" in said
    assert "The previous trace stays." in said and said.count("mine.swf") == 1
    # Ticked after the refusal: the same upload read again, skipping its bad line.
    options, value, message, cut, refused = callbacks.upload_site(
        uploads, _data_url(TRUNCATED), "mine.swf", skip=["skip"], rejected=True, ticked=True)
    assert refused is False and value.startswith("upload:") and cut is None
    assert "4 jobs" in str(message) and "1 malformed line(s) skipped (first: line 11)" in str(message)
    # The run reads it the same way: the skipping is kept with the upload.
    model = run.site_model(uploads, value, None, "none", [], None, HW, 2048)
    assert model["trace"]["skip_malformed"] is True
    # The box changed with nothing refused is for the next upload: nothing happens now.
    with pytest.raises(PreventUpdate):
        callbacks.upload_site(uploads, _data_url(TRUNCATED), "mine.swf", skip=[], rejected=False, ticked=True)


def test_a_ticked_box_reads_the_next_upload_leniently_and_a_binary_file_gets_no_hint(uploads):
    loaded = callbacks.upload_site(uploads, _data_url(TRUNCATED), "next.swf", skip=["skip"])
    assert loaded[4] is False and "skipped" in str(loaded[2])
    binary = callbacks.upload_site(uploads, _data_url(bytes(range(256)) * 4), "image.png")
    assert binary[4] is True and "Tick" not in str(binary[2].children)
    good = callbacks.upload_site(uploads, _data_url(GOOD), "good.swf")
    assert "skip_malformed" not in run.site_model(uploads, good[1], None, "none", [], None, HW, 2048)["trace"]
