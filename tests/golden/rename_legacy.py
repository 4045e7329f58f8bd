"""Move the golden files to the current result vocabulary, once (``sched_engine/core/records.py``).

    .venv/bin/python tests/golden/rename_legacy.py

Rewrites, in every ``*.jobs.csv``, the ``status`` field through
:func:`records.new_status` and, in every ``*.timeline.csv``, the ``metric``
field through :func:`records.new_timeline_metric`; every other byte of the
files stays as it was (the rows are read and written as text, not as
numbers). Running it again changes nothing.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from sched_engine.core import records  # noqa: E402


def _rewrite(path: Path, change) -> bool:
    text = path.read_text()
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in body:
        writer.writerow(change(dict(zip(header, row)), row, header))
    if out.getvalue() == text:
        return False
    path.write_text(out.getvalue())
    return True


def _jobs_row(fields: dict, row: list, header: list) -> list:
    start = fields.get("start_time", "")
    started = start != "" and not math.isnan(float(start))
    row = list(row)
    row[header.index("status")] = records.new_status(fields["status"], started)
    return row


def _timeline_row(fields: dict, row: list, header: list) -> list:
    row = list(row)
    row[header.index("metric")] = records.new_timeline_metric(fields["metric"])
    return row


def main() -> None:
    for path in sorted(HERE.glob("*.jobs.csv")):
        if _rewrite(path, _jobs_row):
            sys.stdout.write(f"renamed in {path.name}\n")
    for path in sorted(HERE.glob("*.timeline.csv")):
        if _rewrite(path, _timeline_row):
            sys.stdout.write(f"renamed in {path.name}\n")


if __name__ == "__main__":
    main()
