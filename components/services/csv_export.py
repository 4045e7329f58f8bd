"""The one CSV writer of every download: text cells a spreadsheet would run as formulas are kept as text.

A cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
is read by Excel, LibreOffice and Google Sheets as a formula (CSV
injection): a job name or user taken from an uploaded trace could then
compute, or link out, when an operator opens the export. Such text cells
get a leading apostrophe, which spreadsheets show as text. Numbers are
written as they are (``-3`` in a numeric column stays a number).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from dash import dcc

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that starts like a formula prefixed by ``'`` (a copy when one does)."""
    safe = frame
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):   # a run's reasons: fix the categories, not each row
            codes = values.cat.codes.to_numpy()
            names = values.cat.categories[np.unique(codes[codes >= 0])]   # those in use: a slice's, not the run's
            if pd.api.types.is_string_dtype(names) and names.str.startswith(FORMULA_STARTS).any():
                if safe is frame:
                    safe = frame.copy()
                safe[column] = values.astype(str).where(values.notna(), None).map(
                    lambda cell: "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell)
            continue
        if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
            continue
        try:
            risky = values.str.startswith(FORMULA_STARTS, na=False).astype(bool)   # non-text cells: False
        except AttributeError:   # an object column holding no text at all
            continue
        if risky.any():
            if safe is frame:
                safe = frame.copy()
            safe[column] = values.where(~risky, "'" + values.astype(str))
    return safe


def csv_text(frame: pd.DataFrame, header: bool = True) -> str:
    """The CSV of ``frame`` (no index), spreadsheet-safe."""
    return spreadsheet_safe(frame).to_csv(index=False, header=header)


def send_csv(frame: pd.DataFrame, filename: str) -> dict:
    """A ``dcc.Download`` payload of ``frame`` as a spreadsheet-safe CSV file."""
    return dcc.send_string(csv_text(frame), filename)
