"""Every CSV download is spreadsheet-safe: formula-like text is written as text (CSV injection)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from components.services.csv_export import csv_text, spreadsheet_safe
from components.services.downloads import csv_chunks


def hostile_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "job_id": pd.Series(["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "ok", "plain", None],
                            dtype="string"),
        "user": ["ok", "=cmd|'/C calc'!A0", "u", "u", "u", "u", "u", "u"],
        "value": [-1.5, 2, -3, 4, 5, 6, 7, 8],
    })


@pytest.mark.parametrize("write", [csv_text, lambda frame: "".join(csv_chunks(frame))], ids=["file", "streamed"])
def test_formula_like_text_is_prefixed_and_numbers_are_not(write):
    text = write(hostile_frame())
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert back["job_id"].tolist()[:5] == ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "'\tTAB"]
    assert back["user"].tolist()[1] == "'=cmd|'/C calc'!A0" and back["user"].tolist()[0] == "ok"
    assert back["value"].tolist() == [-1.5, 2, -3, 4, 5, 6, 7, 8]
    for line in text.splitlines()[1:]:
        assert not line.startswith(("=", "+", "-", "@")), line


def test_a_carriage_return_at_the_start_is_prefixed_too():
    assert "'\rCR" in csv_text(pd.DataFrame({"a": ["\rCR"]}))


def test_a_safe_frame_is_not_copied():
    frame = pd.DataFrame({"a": ["x", "y"], "b": [1, 2]})
    assert spreadsheet_safe(frame) is frame
