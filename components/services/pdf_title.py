"""A PDF's document title set after the fact, by an incremental update (PDF 1.7, §7.5.6).

Chromium's PDFs (drawn through Kaleido) carry the title of Kaleido's own page
("Kaleido-fier"), which viewers show in their title bar and tab. Rather than
rewrite the file, :func:`with_title` appends what an editor saving in place
appends: a new document-information dictionary, a cross-reference section
naming only it, and a trailer pointing to it and (``/Prev``) to the file's
own cross-reference table. Everything before stays byte for byte.

Only a file ending in a classic ``trailer << ... >> startxref N %%EOF`` is
updated (what Chromium writes); any other comes back unchanged: a wrong
title is better than a broken file.
"""

from __future__ import annotations

import re

_TRAILER = re.compile(rb"trailer\s*<<(?P<dict>.*?)>>\s*startxref\s*(?P<xref>\d+)\s*%%EOF\s*$", re.DOTALL)
_SIZE = re.compile(rb"/Size\s+(\d+)")
_ROOT = re.compile(rb"/Root\s+(\d+\s+\d+\s+R)")


def pdf_text(text: str) -> bytes:
    """``text`` as a PDF text string: UTF-16BE with its byte-order mark, in hex (any script, no escaping)."""
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def with_title(pdf: bytes, title: str) -> bytes:
    """``pdf`` whose document title is ``title`` (see the module docstring)."""
    trailer = _TRAILER.search(pdf[-4096:])
    if trailer is None:
        return pdf
    size, root = _SIZE.search(trailer["dict"]), _ROOT.search(trailer["dict"])
    if size is None or root is None:
        return pdf
    number = int(size.group(1))                       # the next free object number
    body = pdf if pdf.endswith(b"\n") else pdf + b"\n"
    info = b"%d 0 obj\n<</Title %s /Producer (schedscope)>>\nendobj\n" % (number, pdf_text(title))
    xref_at = len(body) + len(info)
    update = (b"xref\n%d 1\n%010d 00000 n \ntrailer\n<</Size %d /Root %s /Info %d 0 R /Prev %s>>\n"
              b"startxref\n%d\n%%%%EOF\n") % (number, len(body), number + 1, root.group(1), number,
                                              trailer["xref"], xref_at)
    return body + info + update
