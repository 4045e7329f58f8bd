"""The landing page (``/``): what the tool answers, a card per question; no callbacks of its own."""

from .. import Page
from . import layout

PAGE = Page("/", None, layout.layout)

__all__ = ["PAGE", "layout"]
