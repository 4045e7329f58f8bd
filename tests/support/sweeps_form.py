"""The Sweeps page's form as the browser sends it, for tests that call its callbacks directly."""

from __future__ import annotations

from components.pages import sweeps as page


def calibrate_form(**changes) -> tuple[list[dict], list]:
    """Every kind's pattern-matched field ids and start values, ``changes`` applied to the calibrate fields."""
    ids, values = [], []
    for kind in page.form.FORM:
        start = page.form.form_values(kind)
        for param in page.form.FORM[kind]:
            ids.append({"type": page.ids.PARAM, "kind": kind, "name": param.name})
            values.append(changes.get(param.name, start[param.name]) if kind == "calibrate" else start[param.name])
    return ids, values
