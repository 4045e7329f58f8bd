"""Typed errors every engine raises for bad input.

The UI shows ``str(error)`` next to the offending field, so messages name the
place (file, line, field path) and say what would be accepted.
"""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario (or part of it) is invalid.

    ``field`` is a dotted path into the scenario's JSON, e.g.
    ``model.tree.children[1].demand.cpu``; ``source`` names the file or upload
    it came from, ``line`` a 1-based line number where that applies.
    """

    def __init__(self, field: str, message: str, *, source: str | None = None, line: int | None = None):
        self.field = field
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(self.field)
        return f"{', '.join(where)}: {self.message}" if where else self.message
