"""A rewrite keeps the file's top-level functions and classes (docs/loop.md §9.8).

Asked to "implement the stub in acronym.py", a small model writes a good body under another name
(``abbreviate`` becomes ``acronym``, ``reverse`` becomes ``reverse_string``), and every test that imports
the old name fails. So a Python file's rewrite must keep each top-level ``def`` and ``class`` name and each
function's parameters (names, kinds and order; type hints and defaults may be added), unless the request asks
to rename, remove or re-sign something; otherwise the edit is refused with the names, and the model sends it
again.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

_MAY_RENAME = re.compile(r"\b(renam|remov|delet|drop|get rid|signature|parameter|argument|merge|split|"
                         r"refactor|restructur|replace)\w*", re.IGNORECASE)
MAX_CHARS = 200_000


def _parameters(args: ast.arguments) -> str:
    """The parameters as a caller sees them: names, kinds and order, without annotations or defaults (a
    rewrite that adds type hints or a default keeps every call working)."""
    out = [a.arg for a in args.posonlyargs]
    if args.posonlyargs:
        out.append("/")
    out += [a.arg for a in args.args]
    if args.vararg is not None:
        out.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        out.append("*")
    out += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        out.append(f"**{args.kwarg.arg}")
    return ", ".join(out)


def parsed(text: str) -> ast.Module | None:
    """``text`` as Python, or None when it does not parse or is longer than ``MAX_CHARS`` (the rewrite checks
    of a small model's edits: names kept, stubs implemented, imports added)."""
    if len(text) > MAX_CHARS:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _signatures(text: str) -> dict[str, str] | None:
    """Each top-level function's ``name(params)`` and class's ``class Name``; None when it does not parse."""
    tree = parsed(text)
    if tree is None:
        return None
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            asynchronous = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
            out[node.name] = f"{asynchronous}{node.name}({_parameters(node.args)})"
        elif isinstance(node, ast.ClassDef):
            out[node.name] = f"class {node.name}"
    return out


def lost_names(path: Path, before: str, after: str, request: str) -> str | None:
    """Why the rewrite of ``path`` may not be used (what it dropped or re-signed, and what it has instead),
    else None. Only ``.py`` files that parse before and after; never when ``request`` asks for a rename,
    removal or new signature."""
    if path.suffix != ".py" or _MAY_RENAME.search(request):
        return None
    old, new = _signatures(before), _signatures(after)
    if not old or new is None:
        return None
    lost = [sig for name, sig in old.items() if new.get(name) != sig]
    if not lost:
        return None
    added = [sig for name, sig in new.items() if name not in old or old[name] != sig]
    instead = f" (it has {', '.join(added)} instead)" if added else ""
    return (f"the rewrite of {path.name} dropped or changed {', '.join(lost)}{instead}; the request did not ask "
            f"to rename anything, so keep every top-level function and class with its name and parameters "
            f"exactly as they are: {', '.join(old.values())}")
