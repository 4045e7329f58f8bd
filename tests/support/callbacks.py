"""Calling a page's callback function in a test as Dash calls it: with the input that fired it."""

from __future__ import annotations

from contextlib import contextmanager

from dash._callback_context import context_value
from dash._utils import AttributeDict


@contextmanager
def fired(component_id, prop: str = "n_clicks", value=1):
    """Inside the block, ``dash.ctx.triggered_id`` is ``component_id`` (its ``prop`` changed to ``value``)."""
    token = context_value.set(AttributeDict(triggered_inputs=[{"prop_id": f"{component_id}.{prop}", "value": value}]))
    try:
        yield
    finally:
        context_value.reset(token)
