"""One reader for every engine's input files: gzip recognised by its magic bytes, bounded by one limit."""

from __future__ import annotations

import gzip

import pytest

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.core.io import MAX_DECOMPRESSED_ENV, FileError, read_text, text_number

CSV = b"job_id,arrival_s,tasks,memory_mb,duration_s\na,0,2,1000,10\nb,5,1,500,4\n"


def _elastic(path) -> dict:
    return {"engine": "elastic", "policy": "yarn",
            "model": {"nodes": [{"count": 2, "cores": 4, "memory_mb": 4000}],
                      "trace": {"kind": "file", "path": str(path), "format": "csv"}}}


def test_an_elasticity_trace_may_be_gzipped(tmp_path):
    plain, packed = tmp_path / "t.csv", tmp_path / "t.csv.gz"
    plain.write_bytes(CSV)
    packed.write_bytes(gzip.compress(CSV))
    assert normalize_scenario(_elastic(packed)).model["trace"]["label"] == "t.csv.gz"
    assert normalize_scenario(_elastic(plain)).model["trace"]["kind"] == "file"


def test_an_elasticity_trace_is_held_to_the_decompression_limit(tmp_path, monkeypatch):
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(CSV + b"c,9,1,100,1\n" * 200_000))
    monkeypatch.setenv(MAX_DECOMPRESSED_ENV, str(2**20))
    with pytest.raises(ScenarioError, match=r"bomb\.csv\.gz: decompresses to more than 1 MiB"):
        normalize_scenario(_elastic(bomb))


def test_read_text_names_the_file_not_its_directory(tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"ok\n\xe9\n")
    with pytest.raises(FileError) as caught:
        read_text(tmp_path / "latin.txt")
    assert (caught.value.source, caught.value.line) == ("latin.txt", 2)
    assert str(tmp_path) not in str(caught.value)


def test_numbers_in_text_files_are_checked_with_their_place():
    assert text_number("2.5", 3, "speed", "m.machines") == 2.5
    with pytest.raises(FileError, match="m.machines, line 3, machines: '1e300' is too large"):
        text_number("1e300", 3, "machines", "m.machines", whole=True)
