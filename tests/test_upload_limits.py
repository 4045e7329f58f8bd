"""Upload limits: size and gzip-decompressed size, configurable, and a refused upload writes nothing."""

from __future__ import annotations

import base64
import gzip

import pytest

from components.services.uploads import (
    DEFAULT_MAX_BYTES,
    UploadError,
    UploadStore,
    check_lines,
    max_line_bytes,
    max_upload_bytes,
)
from sched_engine.batch.traces import read_workload
from sched_engine.core.io import DEFAULT_MAX_DECOMPRESSED_BYTES, max_decompressed_bytes

SWF = b"; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n"


def data_url(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv("SCHEDSCOPE_MAX_UPLOAD_BYTES", raising=False)
    monkeypatch.delenv("SCHEDSCOPE_MAX_DECOMPRESSED_BYTES", raising=False)
    assert max_upload_bytes() == DEFAULT_MAX_BYTES
    assert max_decompressed_bytes() == DEFAULT_MAX_DECOMPRESSED_BYTES == 2 * 2**30
    monkeypatch.setenv("SCHEDSCOPE_MAX_UPLOAD_BYTES", "1000")
    monkeypatch.setenv("SCHEDSCOPE_MAX_DECOMPRESSED_BYTES", "5000")
    assert (max_upload_bytes(), max_decompressed_bytes()) == (1000, 5000)
    monkeypatch.setenv("SCHEDSCOPE_MAX_UPLOAD_BYTES", "lots")
    with pytest.raises(ValueError, match="SCHEDSCOPE_MAX_UPLOAD_BYTES must be a positive whole number"):
        max_upload_bytes()


def test_oversized_upload_is_refused_and_writes_nothing(tmp_path):
    store = UploadStore(tmp_path, max_bytes=100)
    for save in (lambda: store.save(b"x" * 101, "trace", "big.swf"),
                 lambda: store.save_data_url(data_url(b"x" * 200), "trace", "big.swf")):
        with pytest.raises(UploadError, match=r"larger than the upload limit \(100 bytes\)"):
            save()
    assert list(tmp_path.iterdir()) == []
    assert store.save(b"x" * 100, "trace", "ok.swf").read_bytes() == b"x" * 100


def test_gzip_bomb_upload_is_refused_and_writes_nothing(tmp_path):
    bomb = gzip.compress(b"\0" * (50 * 2**20))  # 50 MiB of zeros in ~50 KB
    assert len(bomb) < 100_000
    store = UploadStore(tmp_path, max_bytes=2**20, max_decompressed_bytes=2**20)
    with pytest.raises(UploadError, match=r"bomb\.swf\.gz: decompresses to more than 1 MiB"):
        store.save_data_url(data_url(bomb), "trace", "bomb.swf.gz")
    assert list(tmp_path.iterdir()) == []


def test_gzip_upload_within_the_limit_is_stored_and_readable(tmp_path):
    store = UploadStore(tmp_path, max_decompressed_bytes=len(SWF))
    path = store.save(gzip.compress(SWF), "trace", "small.swf.gz")
    assert len(read_workload(path, source="small.swf.gz").jobs) == 1


def test_gzip_upload_uses_the_environment_limit_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_MAX_DECOMPRESSED_BYTES", str(len(SWF) - 1))
    with pytest.raises(UploadError, match="SCHEDSCOPE_MAX_DECOMPRESSED_BYTES"):
        UploadStore(tmp_path).save(gzip.compress(SWF), "trace", "small.swf.gz")
    assert list(tmp_path.iterdir()) == []


def test_broken_gzip_upload_is_refused(tmp_path):
    data = gzip.compress(SWF)
    store = UploadStore(tmp_path)
    with pytest.raises(UploadError, match="cut.swf.gz: broken gzip data"):
        store.save(data[: len(data) // 2], "trace", "cut.swf.gz")
    assert list(tmp_path.iterdir()) == []


# --- bounded before parsing: a compressed upload expands to at most an upload's size, lines are bounded ---------

def test_a_gzip_upload_may_expand_only_to_the_upload_limit_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDSCOPE_MAX_DECOMPRESSED_BYTES", raising=False)
    store = UploadStore(tmp_path, max_bytes=2**20)
    expands = gzip.compress(SWF * (2 * 2**20 // len(SWF)))   # 2 MiB of trace lines in a few KB
    with pytest.raises(UploadError, match=r"big\.swf\.gz: decompresses to more than 1 MiB"):
        store.save_data_url(data_url(expands), "trace", "big.swf.gz")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("SCHEDSCOPE_MAX_DECOMPRESSED_BYTES", str(4 * 2**20))   # an operator may allow more
    assert store.save(expands, "trace", "big.swf.gz").exists()


def test_a_gzip_upload_is_measured_as_a_stream(tmp_path):
    """64 MiB of text behind 64 KB of gzip: the check holds a chunk at a time, never the whole text."""
    import tracemalloc

    expands = gzip.compress((b"1 0 0 10 1\n" * 1000) * (64 * 2**20 // 11_000), compresslevel=9)
    store = UploadStore(tmp_path, max_bytes=2**20, max_decompressed_bytes=2**27)
    tracemalloc.start()
    try:
        store.save(expands, "trace", "long.swf.gz")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_a_line_past_the_line_limit_is_refused_naming_file_and_line(tmp_path, compress):
    text = SWF + SWF[:-1] + b" " * 5000 + b"\n" + SWF
    data = gzip.compress(text) if compress else text
    store = UploadStore(tmp_path, max_line_bytes=4096)
    with pytest.raises(UploadError, match=r"wide\.swf: line 4 is longer than 4096 bytes, the limit "
                                          r"\(set SCHEDSCOPE_MAX_LINE_BYTES to raise it\)"):
        store.save(data, "trace", "wide.swf")
    assert list(tmp_path.iterdir()) == []
    assert UploadStore(tmp_path, max_line_bytes=8192).save(data, "trace", "wide.swf").exists()


def test_a_json_document_on_one_line_is_not_read_by_lines(tmp_path):
    document = b'  {"jobs": [' + b",".join([b'{"id": 1, "memory": 2048}'] * 1000) + b"]}"
    assert UploadStore(tmp_path, max_line_bytes=1024).save(document, "trace", "sls.json").exists()


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 64])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_lines_are_measured_across_chunks(chunk_size, ending):
    lines = [b"a" * 10, b"b" * 12, b"c" * 10]
    text = ending.join(lines) + ending
    chunks = [text[i:i + chunk_size] for i in range(0, len(text), chunk_size)]
    check_lines(iter(chunks), max_line=12 + len(ending) - 1, source="t")
    with pytest.raises(UploadError, match="t: line 2 is longer than 11 bytes"):
        check_lines(iter(chunks), max_line=11, source="t")


def test_the_line_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("SCHEDSCOPE_MAX_LINE_BYTES", raising=False)
    assert max_line_bytes() == 2**20
    monkeypatch.setenv("SCHEDSCOPE_MAX_LINE_BYTES", "100")
    assert max_line_bytes() == 100
