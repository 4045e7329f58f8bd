"""Application lists as people write them: table rows and uploaded CSV or JSON files, read into model applications.

A row is one container group; rows sharing a name are one application's
groups, the application's own fields (arrival, pattern, volume, weight)
taken from its first row. Every reader reports errors as
:class:`ScenarioError` naming the row or line and the column at fault.
"""

from __future__ import annotations

import csv
import io
import json

from ..core.errors import ScenarioError

APP_COLUMNS = ("name", "arrival", "pattern", "volume", "weight", "count", "cpu", "ram", "downlink", "uplink")
APP_TEXT_COLUMNS = ("name", "pattern")


def number_cell(value, where: str, column: str):
    """A number typed into a table or read from CSV; blanks are ``None`` (the model's default applies)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        raise ScenarioError(f"{where}, {column}", f"must be a number, got {value!r}") from None


def is_blank(row: dict, columns) -> bool:
    return not any(str(row.get(c) if row.get(c) is not None else "").strip() for c in columns)


def apps_from_rows(rows: list[tuple[int, dict]], where: str) -> tuple[list[dict], dict]:
    """Applications from numbered rows (rows sharing a name are one application's container groups).

    Returns ``(applications, origin)`` where ``origin[(app, group)]`` is the
    row or line number a container group came from; ``where`` is the
    prefix of error locations ("applications row" or "line").
    """
    apps, origin, index = [], {}, {}
    for number, row in rows:
        if is_blank(row, APP_COLUMNS):
            continue
        name = str(row.get("name") or "").strip()
        numbers = {c: number_cell(row.get(c), f"{where} {number}", c) for c in APP_COLUMNS if c not in APP_TEXT_COLUMNS}
        group = {k: numbers[k] for k in ("count", "cpu", "ram", "downlink", "uplink") if numbers[k] is not None}
        if name not in index:
            index[name] = len(apps)
            app = {"name": name, "pattern": str(row.get("pattern") or "").strip() or "all-to-all", "containers": []}
            app.update({k: numbers[k] for k in ("arrival", "volume", "weight") if numbers[k] is not None})
            apps.append(app)
        app_index = index[name]
        origin[(app_index, len(apps[app_index]["containers"]))] = number
        apps[app_index]["containers"].append(group)
    return apps, origin


def read_app_list(data: bytes, label: str) -> tuple[list[dict], dict]:
    """An uploaded application list: JSON (a list of applications, or ``{"applications": [...]}``) or CSV.

    CSV has a header row with the application table's columns, one row per
    container group. Returns ``(applications, origin)`` as
    :func:`apps_from_rows`, line numbers for CSV (an empty origin for JSON,
    whose errors name the field path). Raises :class:`ScenarioError`.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScenarioError("", "not a UTF-8 text file", source=label) from None
    if text.lstrip()[:1] in ("[", "{"):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError("", f"not valid JSON ({exc.msg})", source=label, line=exc.lineno) from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise ScenarioError("", f"not valid JSON ({exc})", source=label) from None
        apps = loaded.get("applications") if isinstance(loaded, dict) else loaded
        if not isinstance(apps, list) or not apps:
            raise ScenarioError("applications", "expected a non-empty list of applications", source=label)
        return apps, {}
    reader = csv.DictReader(io.StringIO(text))
    try:
        fieldnames = reader.fieldnames or ()
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:  # a line the csv module cannot split
        raise ScenarioError("", f"not readable as CSV ({exc})", source=label, line=max(reader.line_num, 1)) from None
    unknown = sorted(set(fieldnames) - set(APP_COLUMNS))
    if not fieldnames or "name" not in fieldnames or unknown:
        raise ScenarioError("header", f"columns must be among {', '.join(APP_COLUMNS)} and include name"
                            + (f"; unknown: {', '.join(unknown)}" if unknown else ""), source=label, line=1)
    try:
        apps, origin = apps_from_rows(rows, "line")
    except ScenarioError as exc:
        line, _, column = exc.field.partition(", ")
        raise ScenarioError(column, exc.message, source=label, line=int(line.split()[-1])) from None
    if not apps:
        raise ScenarioError("", "the file lists no applications", source=label)
    return apps, origin
