"""A rewrite asked to implement a stub must implement something (small models, docs/loop.md §9.8).

Asked to "implement the stub in scrabble_score.py", the 1.5B model pasted the instructions into ``score`` as
comments and kept its ``pass``: the file changed, nothing was implemented, and the turn ended as a success.
So when the request asks to implement, complete, fill in or write code, a ``.py`` rewrite that leaves every
stub function of the file (a body of only ``pass``, ``...``, a docstring or ``raise NotImplementedError``)
still a stub is refused with their names, and the model sends the edit again. A rewrite that implements
some of them is taken (the others are the next step's).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .keep_names import parsed

_IMPLEMENT = re.compile(r"\b(implement|complete|finish|fill|write|solve|make .* work)\w*", re.IGNORECASE)


def _is_stub(body: list[ast.stmt]) -> bool:
    for node in body:
        if isinstance(node, ast.Pass):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                (node.value.value is Ellipsis or isinstance(node.value.value, str)):
            continue
        if isinstance(node, ast.Raise) and node.exc is not None and "NotImplementedError" in ast.unparse(node.exc):
            continue
        return False
    return True


def stubs(text: str) -> set[str] | None:
    """The stub functions and methods of ``text`` (``Class.method`` for a method); None when it does not parse."""
    tree = parsed(text)
    if tree is None:
        return None
    out: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_stub(node.body):
                out.add(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return out


def still_stubs(path: Path, before: str, after: str, request: str) -> str | None:
    """Why the rewrite is no implementation (every stub is still one), else None."""
    if path.suffix != ".py" or not _IMPLEMENT.search(request):
        return None
    old, new = stubs(before), stubs(after)
    if not old or new is None or not old <= new:
        return None
    names = ", ".join(sorted(old))
    return (f"the rewrite of {path.name} implements nothing: {names} {'is' if len(old) == 1 else 'are'} still only "
            "`pass` (comments do not count). Write the code of their bodies")
