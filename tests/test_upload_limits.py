"""Upload limits: size and gzip-decompressed size, configurable, and a refused upload writes nothing."""

from __future__ import annotations

import base64
import gzip

import pytest

from components.services.uploads import DEFAULT_MAX_BYTES, UploadError, UploadStore, max_upload_bytes
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
