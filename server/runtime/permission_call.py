"""The tool call a permission request shows, the same on both faces: the ACP ``ToolCallUpdate`` shape
(``agent/requestPermission`` on LSP, ``session/request_permission`` on ACP).

``locations`` name the files the action touches, so editors open the right one: each diff's path with
the first line it changes (0-based, as LSP positions), else the ``path`` argument resolved in the
session's workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.agent.host import PermissionRequest


def first_changed_line(old: str | None, new: str) -> int:
    """The 0-based line where ``new`` first differs from ``old`` (0 for a new file)."""
    if not old:
        return 0
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return number
    return min(len(old_lines), len(new_lines))


def _inside(root: Path, raw: str) -> Path | None:
    path = Path(raw).expanduser()
    path = (path if path.is_absolute() else root / path).resolve()
    return path if path == root or root in path.parents else None


def locations(request: PermissionRequest, root: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for item in request.content:
        path = item.get("path")
        new = item.get("newText")
        if item.get("type") == "diff" and isinstance(path, str) and isinstance(new, str):
            old = item.get("oldText")
            found.append({"path": path, "line": first_changed_line(old if isinstance(old, str) else None, new)})
    raw = request.raw_input.get("path")
    if not found and isinstance(raw, str) and raw.strip():
        inside = _inside(root.resolve(), raw)
        if inside is not None:
            found.append({"path": str(inside)})
    return found


def permission_tool_call(request: PermissionRequest, root: Path) -> dict[str, Any]:
    call: dict[str, Any] = {"toolCallId": request.tool_call_id, "title": request.title, "kind": request.kind,
                            "status": "pending", "rawInput": dict(request.raw_input)}
    if request.content:
        call["content"] = list(request.content)
    where = locations(request, root)
    if where:
        call["locations"] = where
    return call
