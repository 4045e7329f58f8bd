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


# --- every export goes through the one writer ------------------------------------------------------------------

FORMULA_NAMES = ["=1+2", "+3+4", "-5+6", "@SUM(1+1)"]


def hostile_names_result(tmp_path):
    """A fair-sharing run whose users are named like formulas, as an uploaded scenario may name them."""
    from components.services.runs import ResultCache
    from sched_engine.fairshare.presets import fig4_model

    model = fig4_model()
    leaves = [leaf for group in model["tree"]["children"] for leaf in group["children"]]
    for leaf, name in zip(leaves, FORMULA_NAMES):
        leaf["name"] = name
    results = ResultCache(tmp_path / "results")
    result, _ = results.run({"engine": "fairshare", "policy": "drf", "name": "=HYPERLINK(1)", "model": model})
    return results, result


def assert_no_formula_cells(text: str) -> None:
    import csv

    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)   # only a number may start so (a negative one)
    assert any(cell.startswith("'") for row in rows for cell in row), "the names must be in the export"


@pytest.mark.parametrize("frame", ["jobs", "timeline"])
def test_the_download_route_writes_formula_names_as_text(tmp_path, frame):
    from flask import Flask

    from components.services import downloads

    results, result = hostile_names_result(tmp_path)
    server = Flask(__name__)
    downloads.register(server, results)
    response = server.test_client().get(f"/download/{result.scenario_hash}/{frame}.csv")
    assert response.status_code == 200
    assert_no_formula_cells(response.get_data(as_text=True))


def test_the_pages_exports_write_formula_names_as_text(tmp_path):
    from components.pages.elastic.charts import export_frame

    _, result = hostile_names_result(tmp_path)
    for frame in ("jobs", "timeline"):
        assert_no_formula_cells(csv_text(result.frames()[frame]))   # fair sharing, network, batch matrix, compare
        stacked = export_frame([({"policy": "=evil()"}, result)], frame)   # memory elasticity's stacked export
        assert_no_formula_cells(csv_text(stacked))


def test_no_module_writes_csv_but_the_shared_writer():
    """Every CSV the app sends is written by csv_export (a page calling ``to_csv`` itself would bypass it)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "components"
    writers = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "csv_export.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("to_csv", "send_data_frame", "writer", "DictWriter"):
                writers.append(f"{path.relative_to(root)}:{node.lineno} {node.attr}")
    assert writers == []


def test_categorical_text_is_made_safe_too():
    """A run's reasons name jobs through categorical columns: a job id that starts like a formula is prefixed."""
    frame = pd.DataFrame({"job_id": pd.Categorical(["=1+2", "7", None]), "from_time": [0.0, 1.0, 2.0],
                          "reason": pd.Categorical(["resources", "reservation", "resources"])})
    assert csv_text(frame).splitlines() == ["job_id,from_time,reason", "'=1+2,0.0,resources", "7,1.0,reservation",
                                            ",2.0,resources"]


def test_chunks_of_categorical_columns_read_as_their_text_columns(monkeypatch):
    """The reasons' categorical job names download as the same bytes as text columns, chunk by chunk."""
    import components.services.downloads as downloads

    monkeypatch.setattr(downloads, "CHUNK_ROWS", 2)
    names = pd.CategoricalDtype(pd.Index(["10", "11", "=12", ""]))
    frame = pd.DataFrame({"job_id": pd.Categorical.from_codes([0, 1, 2, 0, 1], dtype=names),
                          "from_time": [0.0, 1.0, 2.0, 3.0, 4.0],
                          "blocking_job": pd.Categorical.from_codes([3, 0, -1, 3, 2], dtype=names)})
    text = frame.astype({"job_id": "string", "blocking_job": "string"})
    assert "".join(csv_chunks(frame)) == "".join(csv_chunks(text))
    assert "".join(csv_chunks(frame)).splitlines()[3] == "'=12,2.0,"
