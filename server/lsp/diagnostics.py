"""``agent/diagnostics``: the problems the editor shows, asked of a client that declared
``experimental.agent.diagnostics`` (the VS Code extension, the Neovim plugin).

A client that did not declare it, answers -32601, or answers garbage has none: the core then says
diagnostics are unavailable (agent/diagnostics.py). A client that answers -32601 is not asked again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from agentls.agent.host import Diagnostic, DiagnosticSeverity
from .documents import file_uri

if TYPE_CHECKING:
    from .server import AgentServer

log = logging.getLogger("agentls.lsp.diagnostics")

METHOD = "agent/diagnostics"
SETTLE_MS = 1500  # after an edit, how long the client may wait for its language servers to catch up
SEVERITY: dict[int, DiagnosticSeverity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}
MAX_PER_FILE = 500


def _diagnostic(path: Path, raw: Any) -> Diagnostic | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("message"), str):
        return None
    start = (raw.get("range") or {}).get("start") if isinstance(raw.get("range"), dict) else None
    line = start.get("line") if isinstance(start, dict) else None
    char = start.get("character") if isinstance(start, dict) else None
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        return None
    char = char if isinstance(char, int) and not isinstance(char, bool) and char >= 0 else 0
    level = raw.get("severity")
    severity: DiagnosticSeverity = SEVERITY.get(level, "error") if isinstance(level, int) else "error"
    source = raw.get("source") if isinstance(raw.get("source"), str) else None
    code = raw.get("code")
    code = str(code) if isinstance(code, (str, int)) and not isinstance(code, bool) and str(code) else None
    return Diagnostic(path, line + 1, char + 1, severity, raw["message"], source, code)


def parse(paths: Sequence[Path], uris: Sequence[str], result: Any) -> dict[Path, list[Diagnostic]] | None:
    """The client's answer per path (a URI it did not ask about is ignored), or None when malformed."""
    items = result.get("diagnostics") if isinstance(result, dict) else None
    if not isinstance(items, list):
        return None
    by_uri = dict(zip(uris, paths, strict=True))
    out: dict[Path, list[Diagnostic]] = {p: [] for p in paths}
    for item in items:
        if not isinstance(item, dict) or item.get("uri") not in by_uri or not isinstance(item.get("diagnostics"), list):
            continue
        path = by_uri[item["uri"]]
        for raw in item["diagnostics"][:MAX_PER_FILE]:
            found = _diagnostic(path, raw)
            if found is not None:
                out[path].append(found)
    return out


class DiagnosticsClient:
    """Asks one connection's client for diagnostics (shared by the hosts of its sessions)."""

    def __init__(self, ls: AgentServer) -> None:
        self._ls = ls
        self._missing = False  # the client answered -32601

    @property
    def available(self) -> bool:
        return self._ls.features.diagnostics and not self._missing

    async def ask(self, session_id: str, paths: Sequence[Path], *, settle: bool) -> dict[Path, list[Diagnostic]] | None:
        if not self.available or not paths:
            return None if not self.available else {}
        uris = [file_uri(p) for p in paths]
        params = {"sessionId": session_id, "uris": uris, "settleMs": SETTLE_MS if settle else 0}
        timeout = self._ls.options.client_timeout + (SETTLE_MS / 1000 if settle else 0)
        try:
            result = await self._ls.call(METHOD, params, timeout)
        except TimeoutError:
            log.warning("the client did not answer %s in %g s", METHOD, timeout)
            return None
        except JsonRpcMethodNotFound:
            self._missing = True
            return None
        except JsonRpcException as exc:
            log.warning("the client failed %s: %s", METHOD, exc)
            return None
        found = parse(paths, uris, result)
        if found is None:
            log.warning("the client answered %s with %r", METHOD, result)
        return found
