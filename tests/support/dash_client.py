"""A Dash client over plain HTTP: one browser session without a browser (urllib).

It loads a page as the renderer does (HTML, layout, callback list), fires
callbacks with the request bodies the renderer sends, and polls background
callbacks with their signed handles until their outputs arrive. Every
request is bounded in time, and a session by its deadline.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

DEADLINE_S = 240.0
REQUEST_TIMEOUT_S = 30.0

CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)


class CallbackFailed(AssertionError):
    """A callback request answered with an error status or an unexpected body."""


def split_output(output: str) -> list[dict]:
    """The outputs of a callback's ``output`` string, as the renderer sends them."""
    parts = output[2:-2].split("...") if output.startswith("..") else [output]
    outputs = []
    for part in parts:
        component, _, prop = part.rpartition(".")
        outputs.append({"id": json.loads(component) if component.startswith("{") else component, "property": prop})
    return outputs


class DashClient:
    """One browser session against a Dash app, over HTTP (urllib, no browser)."""

    def __init__(self, base_url: str, deadline: float | None = None, headers: dict | None = None):
        """``headers`` go with every request (e.g. the user a reverse proxy signed in)."""
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.deadline = deadline if deadline is not None else time.monotonic() + DEADLINE_S
        self.end_id: str | None = None
        self.dependencies: list[dict] = []
        self.layout: dict | None = None

    def _timeout(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the session's deadline passed")
        return min(REQUEST_TIMEOUT_S, left)

    def request(self, path: str, body: dict | None = None, args: list[tuple[str, str]] | None = None):
        """``(status, body bytes)`` of a GET (no body) or a JSON POST; raises CallbackFailed on 4xx/5xx."""
        url = self.base_url + path + ("?" + urllib.parse.urlencode(args) if args else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                         headers={**self.headers, **({"Content-Type": "application/json"} if data else {})})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout()) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:2000].decode("utf-8", "replace")
            raise CallbackFailed(f"{exc.code} from {path}: {detail}") from None

    def open_page(self, path: str) -> None:
        """Load a page as the renderer does: HTML (its signed ``end_id``), layout, callback list."""
        status, html = self.request(path)
        assert status == 200, f"GET {path} answered {status}"
        config = json.loads(CONFIG.search(html.decode()).group(1))
        self.end_id = config["end_id"]
        self.layout = json.loads(self.request("/_dash-layout")[1])
        self.dependencies = json.loads(self.request("/_dash-dependencies")[1])

    def callback(self, component_id: str, prop: str) -> dict:
        """The server callback that has ``component_id.prop`` among its inputs (clientside ones run in the browser)."""
        found = [d for d in self.dependencies
                 if {"id": component_id, "property": prop} in d["inputs"] and not d.get("clientside_function")]
        if len(found) != 1:
            raise LookupError(f"{len(found)} callbacks take {component_id}.{prop} as an input")
        return found[0]

    def payload(self, dependency: dict, values: dict, changed: tuple[str, str] | None) -> dict:
        """The request body: every input and state with its value from ``values`` (``(id, prop)``), else None."""
        def filled(items):
            return [{**item, "value": values.get((item["id"], item["property"]))} for item in items]
        outputs = split_output(dependency["output"])
        return {"output": dependency["output"],
                "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
                "inputs": filled(dependency["inputs"]), "state": filled(dependency["state"]),
                "changedPropIds": [f"{changed[0]}.{changed[1]}"] if changed else []}

    def call(self, dependency: dict, values: dict, changed: tuple[str, str] | None = None) -> dict:
        """Fire a callback; returns ``{component id: {prop: value}}`` ({} when nothing was updated)."""
        if dependency.get("background"):
            return self.run_background(dependency, values, changed)
        status, body = self.request("/_dash-update-component", self.payload(dependency, values, changed),
                                    [("endId", self.end_id)])
        return {} if status == 204 else json.loads(body)["response"]

    def run_background(self, dependency: dict, values: dict, changed: tuple[str, str] | None = None,
                       on_progress=None, on_job=None) -> dict:
        """Fire a background callback and poll it as the renderer does until its outputs arrive."""
        payload = self.payload(dependency, values, changed)
        status, body = self.request("/_dash-update-component", payload, [("endId", self.end_id)])
        handles = json.loads(body)
        if status != 200 or "cacheKey" not in handles or "job" not in handles:
            raise CallbackFailed(f"a background callback did not start: {status} {body[:300]!r}")
        if on_job is not None:
            on_job(handles)
        # Polls carry the signed handles; the renderer blanks the input and state values.
        blank = {**payload, "inputs": [{**i, "value": None} for i in payload["inputs"]],
                 "state": [{**s, "value": None} for s in payload["state"]]}
        args = [("endId", self.end_id), ("cacheKey", handles["cacheKey"]), ("job", handles["job"])]
        interval = (dependency["background"].get("interval") or 1000) / 1000
        while True:
            time.sleep(min(interval, max(0.0, self.deadline - time.monotonic())))
            status, body = self.request("/_dash-update-component", blank, args)
            if status == 204:   # the job ended without updating anything (cancelled or lost)
                return {}
            data = json.loads(body)
            if data.get("progress") and on_progress is not None:
                on_progress(data["progress"])
            if "response" in data:
                return data["response"]


def load_scenario(seed: int, max_jobs: int = 300) -> dict:
    """A small batch scenario: EASY on the first ``max_jobs`` jobs of the HPC2N excerpt, synthetic failures."""
    return {"name": f"load seed {seed}", "engine": "batch", "policy": "easy", "seed": seed,
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": max_jobs},
                      "machines_path": "sample_traces/hpc2n-excerpt.machines",
                      "failures": {"kind": "synthetic", "afc": 0.002}, "requirements": False,
                      "estimates": "perfect"}}


def find_component(tree, component_id: str):
    """The component with ``component_id`` in a serialised layout, else None."""
    if isinstance(tree, dict):
        if tree.get("props", {}).get("id") == component_id:
            return tree
        children = tree.get("props", {}).get("children")
        return find_component(children, component_id) if children is not None else None
    if isinstance(tree, list):
        for child in tree:
            found = find_component(child, component_id)
            if found is not None:
                return found
    return None
