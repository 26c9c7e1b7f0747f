"""Is a shell command line clearly dangerous? Parsed with tree-sitter-bash and walked command by command;
see ``walk.py``. This is the second layer: the OS sandbox is the first."""

from __future__ import annotations

import posixpath

from .targets import real
from .state import Dangerous, State
from .walk import check_script


def dangerous_reason(command: str, root: str, cwd: str | None = None) -> str | None:
    """Why ``command`` (run by ``sh -c`` in ``cwd``, the workspace ``root`` by default) is clearly
    dangerous, or None. What cannot be parsed or checked counts as dangerous."""
    root = posixpath.normpath(real(root))
    state = State(root=root, home=posixpath.normpath(real("~")), cwd=posixpath.normpath(real(cwd or root)))
    try:
        check_script(command, state)
    except Dangerous as exc:
        return exc.reason
    except RecursionError:
        return "it nests too deeply to check"
    return None
