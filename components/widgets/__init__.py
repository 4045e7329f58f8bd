"""Pieces several pages share, each with its own logic (the shared time window of a page's charts)."""
