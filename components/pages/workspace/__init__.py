"""The "Workspace" page: saved scenarios, finished runs and uploads kept in the data directory.

Everything listed here is on disk (content-addressed, written atomically)
and survives a server restart. Scenarios and runs link to their permalink
page; a scenario JSON file can be uploaded to save it (it is validated
first; a bad file is reported with its line and field and nothing changes).
"""

from .. import Page
from . import callbacks, ids, layout, lists

PAGE = Page("/workspace", "Workspace", layout.layout, callbacks.register)

__all__ = ["PAGE", "callbacks", "ids", "layout", "lists"]
