"""What the server refuses before any callback runs: oversize bodies, malformed callback requests, unknown hosts.

* **Bodies are bounded before they are read.** ``MAX_CONTENT_LENGTH`` is the
  upload limit as a base64 data URL (uploads travel inside a callback's JSON
  body, 4/3 of their size) plus a margin for the rest of the body: a larger
  request is answered 413 without being read.
* **Callback requests have Dash's shape or get a 400.** A body posted to
  ``/_dash-update-component`` must be a JSON object naming a registered
  callback's ``output``, with ``inputs`` (and ``state``) as lists of
  ``{id, property}`` items (or lists of them, for pattern-matching ids) and
  ``changedPropIds`` as a list of texts; an upload's ``contents`` and
  ``filename`` (what ``dcc.Upload`` sends) must be a text, a list of texts
  or null -- a browser sends nothing else, and every page that reads an
  upload can then take them as texts. Anything else is refused with one
  log line, never a traceback.
* **Only known hosts.** Served on a loopback address, the app answers only
  requests whose ``Host`` is a loopback name (a web page elsewhere cannot
  reach it through DNS rebinding); ``SCHEDSCOPE_TRUSTED_HOSTS`` (comma
  separated; ``.example.org`` also matches its subdomains) adds names, for
  a server reached through a reverse proxy or by its own name. On another
  bind address without that list, every host is accepted.
"""

from __future__ import annotations

import ipaddress
import logging
import os

from flask import Flask, jsonify, request

log = logging.getLogger(__name__)

CALLBACK_PATH = "/_dash-update-component"
#: The body of a callback request besides its uploads (ids, values of the other inputs and states).
BODY_MARGIN_BYTES = 8 * 2**20
TRUSTED_HOSTS_ENV = "SCHEDSCOPE_TRUSTED_HOSTS"
BIND_HOST_ENV = "SCHEDSCOPE_HOST"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
#: What dcc.Upload sends: a data URL and a file name (lists of them with ``multiple``).
UPLOAD_PROPERTIES = frozenset({"contents", "filename"})


def max_body_bytes(max_upload_bytes: int) -> int:
    """The largest request body: one upload as a base64 data URL plus :data:`BODY_MARGIN_BYTES`."""
    return (max_upload_bytes + 2) // 3 * 4 + BODY_MARGIN_BYTES


def trusted_hosts(bind_host: str | None, listed: str | None) -> list[str] | None:
    """Flask's ``TRUSTED_HOSTS`` for a server bound to ``bind_host`` with ``listed`` extra names (``None``: any)."""
    extra = [name.strip() for name in (listed or "").split(",") if name.strip()]
    if _is_loopback(bind_host or "127.0.0.1"):
        return [*LOOPBACK_NAMES, *extra]
    return extra or None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def callback_body_problem(body, callbacks) -> str | None:
    """What is wrong with a callback request's JSON ``body`` (``None`` when it has Dash's shape)."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    output = body.get("output")
    if not isinstance(output, str) or output not in callbacks:
        return "'output' names no callback of this app"
    if not isinstance(body.get("outputs"), (dict, list)):
        return "'outputs' is missing or not an object or list"
    for field, required in (("inputs", True), ("state", False)):
        items = body.get(field, [] if not required else None)
        if not isinstance(items, list) or not all(_is_dependency(item) for item in items):
            return f"'{field}' is not a list of {{id, property}} items"
    for field in ("inputs", "state"):
        for item in _flat(body.get(field, [])):
            if item["property"] in UPLOAD_PROPERTIES and not _is_text_value(item.get("value")):
                return f"an upload's '{item['property']}' is not a text"
    changed = body.get("changedPropIds", [])
    if not isinstance(changed, list) or not all(isinstance(item, str) for item in changed):
        return "'changedPropIds' is not a list of texts"
    return None


def _flat(items):
    """Every ``{id, property}`` item, those of pattern-matching inputs (lists) included."""
    for item in items:
        yield from (_flat(item) if isinstance(item, list) else [item])


def _is_text_value(value) -> bool:
    return value is None or isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(one, str) for one in value))


def _is_dependency(item) -> bool:
    if isinstance(item, list):   # a pattern-matching (ALL) input: one item per matching component
        return all(_is_dependency(one) for one in item)
    return (isinstance(item, dict) and isinstance(item.get("id"), (str, dict))
            and isinstance(item.get("property"), str))


def install(server: Flask, callbacks, max_upload_bytes: int) -> None:
    """Bound request bodies, check callback requests and hosts on ``server`` (``callbacks``: the app's callback map)."""
    server.config["MAX_CONTENT_LENGTH"] = max_body_bytes(max_upload_bytes)
    server.config["TRUSTED_HOSTS"] = trusted_hosts(os.environ.get(BIND_HOST_ENV), os.environ.get(TRUSTED_HOSTS_ENV))

    @server.before_request
    def _check_callback_body():
        if request.path != CALLBACK_PATH or request.method != "POST":
            return None
        problem = callback_body_problem(request.get_json(silent=True), callbacks)
        if problem is None:
            return None
        log.warning("refused a callback request from %s: %s", request.remote_addr, problem)
        return jsonify({"error": f"malformed callback request: {problem}"}), 400
