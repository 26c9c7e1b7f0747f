"""A fake editor on pytest-lsp's client: buffers, applyEdit, agent/* handlers, terminals.

Its buffer model is written independently of the server's (UTF-16 positions, LSP line ends), so
an edit the server computes wrongly shows up as wrong buffer text here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

_EOL = re.compile(r"\r\n|\r|\n")
RAW = ("agent/", "workspace/applyEdit")


def uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


# ------------------------------------------------------------------ text model (independent of the server)
def offset_at(text: str, line: int, character: int) -> int:
    starts = [0] + [m.end() for m in _EOL.finditer(text)]
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    body = text[start:end].rstrip("\r\n")
    units = 0
    for i, ch in enumerate(body):
        if units >= character:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(body)


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    spans = []
    for e in edits:
        r = e["range"]
        a = offset_at(text, r["start"]["line"], r["start"]["character"])
        b = offset_at(text, r["end"]["line"], r["end"]["character"])
        spans.append((a, b, e["newText"]))
    spans.sort(key=lambda s: (s[0], s[1]))
    for (_a1, b1, _), (a2, _b2, _) in itertools.pairwise(spans):
        assert b1 <= a2, f"overlapping edits {spans}"
    for a, b, new in reversed(spans):
        text = text[:a] + new + text[b:]
    return text


@dataclass
class Doc:
    text: str
    version: int


_raw_ids = itertools.count(1)


class EditorProtocol(LanguageClientProtocol):
    """Keeps agent/* messages, applyEdit params and untyped responses as plain dicts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw_ids: set[str] = set()

    def structure_message(self, data: Any) -> Any:
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data
        method = data.get("method")
        if isinstance(method, str) and method.startswith(RAW):
            if "id" in data:
                return JsonRPCRequestMessage(id=data["id"], method=method, jsonrpc="2.0", params=data.get("params"))
            return JsonRPCNotification(method=method, jsonrpc="2.0", params=data.get("params"))
        if "method" not in data and "error" not in data and data.get("id") in self._result_types \
                and (self._result_types.get(data["id"]) is None or data["id"] in self.raw_ids):
            self._result_types.pop(data["id"])
            self.raw_ids.discard(data["id"])
            return JsonRPCResponseMessage(id=data["id"], jsonrpc="2.0", result=data.get("result"))
        return super().structure_message(data)

    async def request_raw(self, method: str, params: Any) -> Any:
        """A request whose answer stays JSON (lsprotocol reads a CodeAction with a command as a Command)."""
        msg_id = f"raw-{next(_raw_ids)}"
        self.raw_ids.add(msg_id)
        return await asyncio.wrap_future(self.send_request(method, params, msg_id=msg_id))


@dataclass
class Recorded:
    updates: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    message_requests: list[types.ShowMessageRequestParams] = field(default_factory=list)
    terminal: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


class Editor(LanguageClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, protocol_cls=EditorProtocol, **kwargs)
        self.docs: dict[str, Doc] = {}
        self.seen = Recorded()
        # What the user answers. Callables get the request params.
        self.accept_edits: bool | Callable[[dict[str, Any]], bool] = True
        self.hold_edits = False
        self.permission_answer: str | None = "allow_once"  # an optionId, "cancelled", or None: never answer
        self.message_answer: str | None = "Allow once"  # an action title, or None (dismissed)
        self.terminals: dict[str, dict[str, Any]] = {}
        self._terminal_ids = itertools.count(1)
        self.on_update: Callable[[dict[str, Any]], None] | None = None
        # agent/diagnostics: the problems of a buffer's text (LSP Diagnostic dicts), or None to answer -32601.
        self.lint: Callable[[str], list[dict[str, Any]]] | None = python_syntax

    # ----------------------------------------------------------- buffers
    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8") if text is None else text
        self.docs[uri] = Doc(text, 1)
        self.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id=language, version=1, text=text)))
        return uri

    def type_into(self, uri: str, edits: list[dict[str, Any]]) -> None:
        """Apply edits to an open buffer and tell the server incrementally (bottom-up, one by one)."""
        doc = self.docs[uri]
        ordered = sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                         reverse=True)
        doc.text = apply_text_edits(doc.text, edits)
        doc.version += 1
        changes = [types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(**e["range"]["start"]), end=types.Position(**e["range"]["end"])),
            text=e["newText"]) for e in ordered]
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            content_changes=changes))

    def close(self, uri: str) -> None:
        self.docs.pop(uri, None)
        self.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def text(self, path: Path) -> str | None:
        doc = self.docs.get(path.as_uri())
        return doc.text if doc else None

    # ----------------------------------------------------------- applyEdit, like VS Code: load, then change
    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        self.seen.edits.append(params)
        accept = self.accept_edits(params) if callable(self.accept_edits) else self.accept_edits
        if not accept:
            return {"applied": False, "failureReason": "the user said no"}
        edit = params["edit"]
        for change in edit.get("documentChanges") or []:
            kind = change.get("kind")
            path = uri_path(change.get("uri", "file:///"))
            if kind == "create":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
            elif kind == "delete":
                if change["uri"] in self.docs:
                    self.close(change["uri"])
                path.unlink(missing_ok=True)
            elif kind is None:
                uri = change["textDocument"]["uri"]
                version = change["textDocument"].get("version")
                if uri in self.docs and version is not None and version != self.docs[uri].version:
                    return {"applied": False, "failureReason": f"version {version} is stale"}
                self._edit(uri, change["edits"])
        for uri, edits in (edit.get("changes") or {}).items():
            self._edit(uri, edits)
        return {"applied": True}

    def _edit(self, uri: str, edits: list[dict[str, Any]]) -> None:
        if uri not in self.docs:
            self.open(uri_path(uri))
        self.type_into(uri, edits)


async def _stop(entry: dict[str, Any]) -> None:
    proc = entry["proc"]
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()
    await entry["reader"]


def python_syntax(source: str) -> list[dict[str, Any]]:
    """A language-server-free diagnostic source: Python's own compiler on the buffer's text."""
    try:
        compile(source, "<buffer>", "exec")
    except SyntaxError as exc:
        line, col = max(0, (exc.lineno or 1) - 1), max(0, (exc.offset or 1) - 1)
        return [{"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}},
                 "severity": 1, "message": exc.msg, "source": "python"}]
    return []


def make_editor() -> Editor:
    client = Editor()
    register_lsp_features(client)

    @client.feature("workspace/applyEdit")
    async def apply_edit(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        if ls.hold_edits:  # an editor that never answers
            ls.seen.edits.append(params)
            await asyncio.sleep(3600)
        return ls.apply(params)

    @client.feature("agent/update")
    def update(ls: Editor, params: dict[str, Any]) -> None:
        ls.seen.updates.append(params)
        if ls.on_update is not None:
            ls.on_update(params)

    @client.feature("agent/diagnostics")
    def diagnostics(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        ls.seen.diagnostics.append(params)
        if ls.lint is None:
            raise JsonRpcMethodNotFound("no agent/diagnostics here")
        out = []
        for uri in params["uris"]:
            doc = ls.docs.get(uri)
            path = uri_path(uri)
            text = doc.text if doc is not None else (path.read_text() if path.is_file() else "")
            out.append({"uri": uri, "diagnostics": ls.lint(text)})
        return {"diagnostics": out}

    @client.feature("agent/requestPermission")
    async def permission(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        ls.seen.permissions.append(params)
        answer = ls.permission_answer
        if answer is None:
            await asyncio.sleep(3600)
        if answer == "cancelled":
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": answer}}

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def message_request(ls: Editor, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        ls.seen.message_requests.append(params)
        return None if ls.message_answer is None else types.MessageActionItem(title=ls.message_answer)

    @client.feature("agent/terminal/create")
    async def terminal_create(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        ls.seen.terminal.append(("create", params))
        terminal_id = f"term-{next(ls._terminal_ids)}"
        proc = await asyncio.create_subprocess_exec(params["command"], *params.get("args", []), cwd=params["cwd"],
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        entry: dict[str, Any] = {"proc": proc, "output": b""}

        async def collect() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(4096):
                entry["output"] += chunk
        entry["reader"] = asyncio.ensure_future(collect())
        ls.terminals[terminal_id] = entry
        return {"terminalId": terminal_id}

    @client.feature("agent/terminal/waitForExit")
    async def terminal_wait(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        ls.seen.terminal.append(("waitForExit", params))
        entry = ls.terminals[params["terminalId"]]
        code = await entry["proc"].wait()
        await entry["reader"]
        return {"exitCode": code if code >= 0 else None, "signal": None if code >= 0 else "SIGKILL"}

    @client.feature("agent/terminal/output")
    async def terminal_output(ls: Editor, params: dict[str, Any]) -> dict[str, Any]:
        ls.seen.terminal.append(("output", params))
        entry = ls.terminals[params["terminalId"]]
        code = entry["proc"].returncode
        status = None if code is None else {"exitCode": code, "signal": None}
        return {"output": entry["output"].decode(errors="replace"), "truncated": False, "exitStatus": status}

    @client.feature("agent/terminal/kill")
    async def terminal_kill(ls: Editor, params: dict[str, Any]) -> None:
        ls.seen.terminal.append(("kill", params))
        await _stop(ls.terminals[params["terminalId"]])

    @client.feature("agent/terminal/release")
    async def terminal_release(ls: Editor, params: dict[str, Any]) -> None:
        ls.seen.terminal.append(("release", params))
        entry = ls.terminals.pop(params["terminalId"], None)
        if entry is not None:
            await _stop(entry)

    return client
