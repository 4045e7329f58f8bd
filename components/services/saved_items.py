"""Named inputs kept in the workspace: cluster definitions and hierarchies.

A saved item is a small JSON document stored through the
:class:`~components.services.uploads.UploadStore` like any upload (content-addressed,
written atomically, listed on the Workspace page), under a kind of its own:

``clusters``
    ``{"clusters": [{name, machines, cpus_per_machine, speed, properties}]}``
    -- the batch engine's cluster list (``sched_engine.batch.model``).
``hierarchy``
    ``{"resources": [...], "tree": {...}}`` -- the fair-sharing model
    (organisation tree with its jobs, and the cluster capacity).
``organisation``
    ``{"name": "root", "children": [...]}`` -- a site's organisation tree
    (groups over the log's users, ``sched_engine.site.organisation``).

Pages validate an item with their engine's own normaliser before saving and
again after loading (a file may have been saved by an older version), so a
bad item is reported with its name and field and the page's draft is kept.
"""

from __future__ import annotations

import base64
import binascii
import json

from sched_engine import ScenarioError
from sched_engine.core.io import size_text

from .uploads import UploadError

CLUSTERS = "clusters"
HIERARCHY = "hierarchy"
ORGANISATION = "organisation"
NAME_LIMIT = 120


def saved_choices(uploads, kind: str) -> list[dict]:
    """Dropdown options for the saved items of ``kind``, newest first; values are stored names."""
    return [{"label": f"{entry['label']} (saved {entry['uploaded'][:16].replace('T', ' ')})", "value": entry["name"]}
            for entry in uploads.listing() if entry["kind"] == kind]


def clean_name(name: str | None, field: str) -> str:
    """The item's display name, trimmed; an empty name is a :class:`ScenarioError` on ``field``."""
    text = " ".join(str(name or "").split())[:NAME_LIMIT]
    if not text:
        raise ScenarioError(field, "give the item a name before saving it")
    return text


def save_item(uploads, kind: str, document: dict, name: str) -> str:
    """Store ``document`` as a saved item called ``name``; returns its stored name.

    The bytes are canonical JSON (sorted keys), so saving the same content
    twice keeps one file (the label of the latest save wins).
    """
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return uploads.save(data, kind, name).name


def load_item(uploads, kind: str, stored_name: str | None) -> tuple[dict, str]:
    """``(document, label)`` of a saved item; a missing or unreadable one is a :class:`ScenarioError`."""
    if not stored_name:
        raise ScenarioError(kind, "choose a saved item first")
    try:
        path = uploads.path_of(stored_name)
    except UploadError as exc:
        raise ScenarioError(kind, str(exc)) from None
    if not stored_name.endswith("." + kind):
        raise ScenarioError(kind, f"that item is not a saved {kind} definition")
    label = next((e["label"] for e in uploads.listing() if e["name"] == stored_name), stored_name[:12])
    return parse_item(path.read_bytes(), label), label


def data_url_bytes(contents: str, max_bytes: int, source: str) -> bytes:
    """The bytes of a ``dcc.Upload`` data URL, refused (:class:`ScenarioError`) above ``max_bytes``."""
    if not isinstance(contents, str):
        raise ScenarioError("", "the upload did not arrive as a file's contents", source=source)
    _, _, encoded = contents.partition(",")
    if len(encoded) * 3 // 4 > max_bytes:
        raise ScenarioError("", f"the file is larger than the upload limit ({size_text(max_bytes)})", source=source)
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ScenarioError("", "the upload did not arrive as base64 data", source=source) from None


def parse_item(data: bytes, source: str) -> dict:
    """A saved or uploaded item's JSON object; anything else is a :class:`ScenarioError` naming ``source``."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ScenarioError("", "not UTF-8 text", source=source) from None
    except json.JSONDecodeError as exc:
        raise ScenarioError("", f"invalid JSON at column {exc.colno}: {exc.msg}", source=source,
                            line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:
        raise ScenarioError("", f"unreadable JSON ({exc.__class__.__name__})", source=source) from None
    if not isinstance(document, dict):
        raise ScenarioError("", "must be a JSON object", source=source)
    return document
