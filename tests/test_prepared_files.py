"""Exports too large for a callback response are prepared files fetched over HTTP (components/services/prepared.py)."""

from __future__ import annotations

import os
import time

from flask import Flask

from components.services.prepared import PreparedFiles, register


def _client(tmp_path):
    server = Flask("prepared-test")
    prepared = PreparedFiles(tmp_path / "prepared")
    register(server, prepared)
    return prepared, server.test_client()


def test_a_prepared_file_is_served_as_an_attachment_under_an_unguessable_address(tmp_path):
    prepared, client = _client(tmp_path)
    text = "<html>" + "x" * (4 * 2**20) + "</html>"   # a report inlining plotly.js: over the 3 MB response bound
    href = prepared.put(text, "batch report.html")
    assert len(href) < 200 and href.endswith("/batch-report.html")
    answer = client.get(href)
    assert answer.status_code == 200 and answer.data.decode() == text
    assert answer.headers["Content-Disposition"] == 'attachment; filename="batch-report.html"'
    assert answer.mimetype == "text/html"
    # The same content prepared twice has two addresses: the token is not a function of the content alone.
    assert prepared.put(text, "batch report.html") != href


def test_unknown_malformed_and_expired_addresses_answer_404(tmp_path):
    prepared, client = _client(tmp_path)
    assert client.get(f"/prepared/{'ab' * 32}/x.csv").status_code == 404
    assert client.get("/prepared/..%2F..%2Fetc%2Fpasswd/x.csv").status_code == 404
    assert prepared.path("../secret_key") is None
    old = prepared.put("a,b\n1,2\n", "old.csv")
    token = old.split("/")[2]
    hour_ago = time.time() - prepared.keep_s - 1
    os.utime(prepared.directory / token, (hour_ago, hour_ago))
    fresh = prepared.put("c\n3\n", "fresh.csv")   # putting a file removes the expired ones
    assert client.get(old).status_code == 404
    assert client.get(fresh).data == b"c\n3\n"
