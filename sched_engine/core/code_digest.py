"""Which source files an engine's results depend on: its modules and every module they import, transitively.

A result is cached under a digest of this source (:func:`sched_engine.core.scenario.code_version`),
so it must name every module whose edit could change a result: the site
engine runs batch clusters, fair-sharing keys and elasticity penalties, and
a fix to any of them must recompute site results. The imports are read
from the source with :mod:`ast` (nothing is imported): ``import
sched_engine.x.y``, ``from sched_engine.x import y`` and relative imports,
where a name imported from a package counts as its submodule when one of
that name exists. Importing a module runs its packages' ``__init__`` too,
so those count. Two modules are front doors, never followed: the library's
``sched_engine/__init__.py`` and ``sched_engine/registry.py`` import every
engine to list them; an engine's run is dispatched through them but runs
none of the others. Imports inside functions count like the others (a lazy
import still runs during a simulation).

Roots: the engine's package, the core (the loop, results, inputs) and the
runner that normalises scenarios and seeds each run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT_PACKAGE = "sched_engine"
FRONT_DOORS = ("__init__.py", "registry.py")   # at the library's top level: they import every engine


def module_file(library: Path, dotted: str) -> Path | None:
    """The file of module ``sched_engine.<...>`` (``x/y.py`` or ``x/y/__init__.py``), or None if none."""
    parts = dotted.split(".")
    if parts[0] != ROOT_PACKAGE:
        return None
    base = library.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def dotted_name(library: Path, path: Path) -> str:
    """``sched_engine.batch.cluster`` for ``<library>/batch/cluster.py`` (a package's ``__init__``: the package)."""
    parts = list(path.relative_to(library).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join([ROOT_PACKAGE, *parts])


def imported_files(library: Path, path: Path) -> set[Path]:
    """The files of the ``sched_engine`` modules that ``path``'s import statements name, with their packages."""
    module = dotted_name(library, path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)   # kept only where a submodule exists
    files = set()
    for name in names:
        parts = name.split(".")
        # ``a.b.c`` runs ``a/b/__init__`` first: every enclosing package below the library's own front door.
        for length in range(2, len(parts) + 1):
            found = module_file(library, ".".join(parts[:length]))
            if found is not None:
                files.add(found)
    return files


def engine_sources(library: Path, engine: str) -> list[Path]:
    """Every source file an engine's run may execute, sorted: the roots and what they import, transitively."""
    roots = sorted((library / "core").rglob("*.py"))
    runner = library / "runner.py"
    if runner.is_file():
        roots.append(runner)
    if engine.isidentifier() and (library / engine).is_dir():
        roots += sorted((library / engine).rglob("*.py"))
    front_doors = {library / name for name in FRONT_DOORS}
    seen: set[Path] = set()
    todo = list(roots)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(imported_files(library, path) - seen - front_doors)
    return sorted(seen)
