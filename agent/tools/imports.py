"""A rewrite that uses a standard-library module it never imports gets the import (small models, §9.8).

The 1.5B model implemented ``ComplexNumber.exp`` with ``math.exp`` and ``math.cos`` and wrote no ``import
math``: every test failed on a NameError. A Python file's rewrite is checked with ``symtable``: a name that
is read as a global, never assigned, imported or a builtin anywhere in the module, and used only as
``name.attr`` with attributes that module has, is imported after the file's last top-level import (or its
docstring and ``__future__`` imports), when it is one of ``MODULES``: everyday standard-library modules
that are safe to import here to check the attributes (``datetime.now()`` meant the class, not the module:
``now`` is no attribute of the module, so nothing is added). A file with a star import, or that does not
parse, is left alone.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import symtable

from .keep_names import parsed

MODULES = frozenset({
    "abc", "array", "base64", "bisect", "calendar", "collections", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "hashlib", "heapq", "itertools", "json", "math", "operator", "os",
    "random", "re", "statistics", "string", "sys", "textwrap", "time", "typing", "unicodedata"})
_BUILTINS = frozenset(dir(builtins))


def _free_globals(table: symtable.SymbolTable, module: symtable.SymbolTable, out: set[str]) -> None:
    for sym in table.get_symbols():
        name = sym.get_name()
        if not sym.is_referenced() or name in _BUILTINS:
            continue
        if table is module:
            free = not (sym.is_assigned() or sym.is_imported() or sym.is_parameter())
        else:
            free = sym.is_global() and not sym.is_declared_global()
        if free:
            try:
                top = module.lookup(name)
            except KeyError:
                out.add(name)
                continue
            if not (top.is_assigned() or top.is_imported()):
                out.add(name)
    for child in table.get_children():
        _free_globals(child, module, out)


def missing_imports(text: str) -> list[str]:
    """The standard-library modules ``text`` uses as ``module.attr`` without importing or defining them."""
    tree = parsed(text)
    return _missing(tree, text) if tree is not None else []


def _missing(tree: ast.Module, text: str) -> list[str]:
    try:
        table = symtable.symtable(text, "<rewrite>", "exec")
    except (SyntaxError, ValueError):  # parses, but does not compile (a nonlocal with no binding)
        return []
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return []
    free: set[str] = set()
    _free_globals(table, table, free)
    attributes: dict[str, set[str]] = {}
    bases: set[int] = set()  # the Name nodes that are the base of an attribute
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            attributes.setdefault(node.value.id, set()).add(node.attr)
            bases.add(id(node.value))
    bare = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in bases}
    out = []
    for name in sorted(free & MODULES & attributes.keys()):
        if name in bare:
            continue
        module = importlib.import_module(name)
        if all(hasattr(module, attr) for attr in attributes[name]):
            out.append(name)
    return out


def _insert_at(tree: ast.Module) -> int:
    """The line (0-based) after the last top-level import, else after the docstring and future imports."""
    at = 0
    for i, node in enumerate(tree.body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
            isinstance(node.value.value, str)
        if docstring or isinstance(node, ast.Import | ast.ImportFrom):
            at = node.end_lineno or node.lineno
    return at


def with_imports(text: str) -> tuple[str, list[str]]:
    """``text`` with the imports it lacks (``missing_imports``) added, and the modules added."""
    tree = parsed(text)
    missing = _missing(tree, text) if tree is not None else []
    if tree is None or not missing:
        return text, []
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    at = _insert_at(tree)
    if at and lines[at - 1] and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += newline
    added = [f"import {name}{newline}" for name in missing]
    blank = [newline] if at == 0 and lines and lines[0].strip() else []
    return "".join(lines[:at] + added + blank + lines[at:]), missing
