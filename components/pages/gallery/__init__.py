"""The "Gallery" page: each paper's headline result, runnable in one click, the paper's number beside ours.

Runs go through the result cache, so a second visit (or a demo rehearsed
beforehand) answers at once; each card says whether its numbers were
simulated or came from the cache. The cards -- scenarios and the rows read
from their results -- are in :mod:`.cards`.
"""

from .. import Page
from . import callbacks, cards, ids, layout

PAGE = Page("/gallery", "Gallery", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "cards", "ids", "layout"]
