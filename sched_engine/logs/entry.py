"""Every reader's two entry points, ``parse(text)`` and ``read(pieces)``, made from the reader's body once.

A reader module writes only its body, ``body(pieces, *, source, timezone,
skip_malformed, compact) -> Workload``, and takes its entry points from
:func:`entry_points`:

* ``read(pieces, *, source, timezone="UTC", skip_malformed=False, compact=False)``
  runs the body with the cyclic garbage collector paused (:func:`~.jobs_table.paused_gc`);
* ``parse(text, *, source, timezone="UTC", skip_malformed=False)`` is ``read`` of
  a text in memory, cut in pieces of the reader's size.

``piece`` is the size of text a body reads at a time (``read.piece``: what
:func:`~.stream.read_log_path` reads a file in); ``passes`` how often the body
iterates over its pieces (``read.passes``): with more than one, ``parse``
hands it pieces that start again from the top each time.
"""

from __future__ import annotations

from ..batch.traces import Workload
from .jobs_table import paused_gc
from .stream import PIECE, Pieces, text_pieces


def entry_points(body, *, what: str, piece: int = PIECE, passes: int = 1):
    """``(parse, read)`` of a reader whose body is ``body``; ``what`` names the log in their docstrings."""

    def read(pieces, *, source: str, timezone: str = "UTC", skip_malformed: bool = False,
             compact: bool = False) -> Workload:
        with paused_gc():
            return body(pieces, source=source, timezone=timezone, skip_malformed=skip_malformed, compact=compact)

    def parse(text: str, *, source: str, timezone: str = "UTC", skip_malformed: bool = False) -> Workload:
        pieces = Pieces(text=text, piece=piece) if passes > 1 else text_pieces(text, piece)
        return read(pieces, source=source, timezone=timezone, skip_malformed=skip_malformed)

    read.piece, read.passes = piece, passes
    parse.__doc__ = f"The jobs of {what} (see the module docstring)."
    read.__doc__ = (f"The jobs of {what} from its text in pieces that end at a line break (:mod:`.stream`)"
                    + (f", iterated over {passes} times." if passes > 1 else "."))
    for function in (parse, read):
        function.__module__ = body.__module__
        function.__qualname__ = function.__name__
    return parse, read
