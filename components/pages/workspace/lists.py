"""What the Workspace page lists -- saved scenarios, finished runs, uploads, sweeps, unreadable files -- and a
scenario upload.

With a login on, an item made before sign-in (no owner; every signed-in user
sees it, see :mod:`components.services.access`) is marked so in its name.
"""

from __future__ import annotations

import base64
import binascii

from dash import html

from sched_engine import ScenarioError

from ...services.runs import runs_and_searches
from ...services.workspace import parse_scenario_upload, permalink

BEFORE_SIGN_IN = " (made before sign-in)"


def markdown_link(text: str, scenario_hash: str, href: str | None = None) -> str:
    return f"[{text.replace('[', '(').replace(']', ')')}]({href or permalink(scenario_hash)})"


def _marked(text: str, key: str, before: set[str]) -> str:
    return text + BEFORE_SIGN_IN if key in before else text


def scenario_rows(entries: list[dict], before: set[str] = frozenset()) -> list[dict]:
    return [{"name": markdown_link(_marked(e["name"], e["hash"], before), e["hash"]), "engine": e["engine"],
             "policy": e["policy"], "saved": e["saved"].replace("T", " ")[:16], "size (bytes)": e["size"]}
            for e in entries]


def run_rows(entries: list[dict], before: set[str] = frozenset()) -> list[dict]:
    """The runs, newest first; then one row per sizing search, its probes linked in it (never a row each)."""
    runs, searches = runs_and_searches(entries)
    rows = [{"run": markdown_link(_marked(e.get("name") or e["hash"][:12], e["hash"], before), e["hash"]),
             "engine": e["engine"], "policy": e["policy"], "seed": e["seed"], "jobs": e["jobs"],
             "wall (s)": round(e["wall_seconds"], 3), "finished": e["finished"].replace("T", " ")[:16]}
            for e in runs]
    for search in searches:
        probes = search["probes"]
        links = ", ".join(markdown_link(p["varied"], p["hash"]) for p in probes)
        rows.append({"run": f"Sizing search from {search['label']}, {len(probes)} probe(s): {links}",
                     "engine": search["engine"], "policy": search["policy"], "seed": search["seed"],
                     "jobs": probes[0]["jobs"], "wall (s)": round(sum(p["wall_seconds"] for p in probes), 3),
                     "finished": search["finished"].replace("T", " ")[:16]})
    return rows


def upload_rows(entries: list[dict], before: set[str] = frozenset()) -> list[dict]:
    return [{"file": _marked(e["label"], e["name"].partition(".")[0], before), "kind": e["kind"],
             "size (bytes)": e["size"], "uploaded": e["uploaded"].replace("T", " ")[:16],
             "stored as": e["name"][:16] + "…"} for e in entries]


def sweep_rows(entries: list[dict], before: set[str] = frozenset()) -> list[dict]:
    """Stored sweeps, each a link to the Sweeps page showing it (``/sweeps?sweep=<key>``)."""
    return [{"sweep": markdown_link(_marked(e["label"], e["hash"], before), e["hash"], f"/sweeps?sweep={e['hash']}"),
             "points": e["points"], "finished": e["finished"].replace("T", " ")[:16]} for e in entries]


def save_uploaded_scenario(contents: str, filename: str, store) -> dict:
    """Validate an uploaded scenario file and save it (named by its ``name`` field, else the file name)."""
    _, _, encoded = (contents or "").partition(",")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ScenarioError("", "the upload did not arrive as base64 data", source=filename) from None
    scenario = parse_scenario_upload(data, filename)
    name = scenario.get("name") or (filename or "uploaded scenario").rsplit(".", 1)[0]
    return store.save(scenario, name, source=filename)


def skipped_section(entries: list[dict]):
    """The data directory's unreadable files, one line each ("skipped: file, reason"); nothing when there are none."""
    if not entries:
        return []
    return html.Section([html.H3("Files skipped"),
                         html.P("These files in the data directory could not be read; the app goes on without them.",
                                className="hint"),
                         html.Ul([html.Li(f"skipped: {e['file']}, {e['reason']}") for e in entries])],
                        className="panel")
