"""The JSON-RPC side of the server: raw ``agent/*`` params, readable errors, client calls with timeouts.

- ``agent/*`` requests and ``workspace/executeCommand`` keep their params as plain dicts (pygls would
  turn untyped params into lossy namedtuples); handlers validate them (``params.py``). So do the
  client's answers to our ``agent/*`` requests.
- A message whose typed params cannot be structured gets -32602 naming the problem (pygls alone
  answers nothing and the client waits forever).
- Every server → client request goes through ``call`` with a timeout; a late or abandoned one is
  cancelled on the client with ``$/cancelRequest``.
- No private pygls attribute is touched (see ``AgentProtocol``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, cast
from urllib.parse import unquote

import attrs
from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.workspace import Workspace

from .lookup import store_errors
from .capabilities import POSITION_ENCODING, server_capabilities
from .wire import WireError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from pygls.lsp.server import LanguageServer

    from .wire import StdioChannel

log = logging.getLogger("agentls.lsp.protocol")

RAW_METHODS = frozenset({types.WORKSPACE_EXECUTE_COMMAND})


def is_notification(method: str) -> bool:
    """An LSP notification method (``initialized``, ``textDocument/didOpen``, any ``$/...``)."""
    if method.startswith("$/"):
        return True
    kinds = types.METHOD_TO_TYPES.get(method)
    return kinds is not None and kinds[1] is None and kinds[0].__name__.endswith("Notification")


def is_raw(method: Any) -> TypeGuard[str]:
    return isinstance(method, str) and (method.startswith("agent/") or method in RAW_METHODS)


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: Any


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any


@attrs.define
class RawResponse:
    """The answer to one of our ``agent/*`` requests, its result kept as plain JSON."""

    id: int | str
    jsonrpc: str
    result: Any


class Owner(Protocol):
    """What the protocol needs of its server (``AgentServer``)."""

    channel: StdioChannel
    requests: set[asyncio.Task[Any]]
    process_id: int | None

    def handling(self) -> AbstractContextManager[None]: ...

    def configure(self, params: dict[str, Any]) -> None: ...

    async def aclose(self) -> None: ...

    async def execute_command(self, params: Any) -> Any: ...


class AgentProtocol(LanguageServerProtocol):
    """pygls 2.1.1's ``LanguageServerProtocol`` with agentls's own message intake.

    Only pygls's public surface is used: the server and converter it hands to ``__init__`` are kept
    here under names of our own; error answers are written to our channel; our requests to the client
    are tracked in ``_calls``; and the workspace is our own (``workspace`` is overridden) because
    ``initialize`` is answered before pygls loads (``boot.py``), so pygls's ``lsp_initialize`` never runs.
    """

    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        self.owner = cast(Owner, server)
        self.converter = converter
        self._ids = itertools.count(1)
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._documents: Workspace | None = None
        self.initialized = False
        self.shutdown_requested = False
        self.exit_requested = False

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]  # pygls declares it lru_cached
        """Answers to our ``agent/*`` requests stay plain JSON (pygls would make namedtuples of them)."""
        return RawResponse if is_raw(method) else super().get_result_type(method)

    @property
    def workspace(self) -> Workspace:
        if self._documents is None:
            raise RuntimeError("the workspace exists once 'initialize' is handled")
        return self._documents

    # ----------------------------------------------------------------- incoming
    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if method is None:  # a response to one of our requests: pygls pairs it with the request's result type
            return super().structure_message(data)
        if is_raw(method):
            if "id" in data:
                return RawRequest(id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
            return RawNotification(method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
        message_type = self.get_message_type(method)
        if message_type is None:
            if "id" in data:
                return JsonRPCRequestMessage(id=data["id"], method=method, jsonrpc=data["jsonrpc"],
                                             params=data.get("params"))
            return JsonRPCNotification(method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
        return self.converter.structure(data, message_type)

    def receive(self, data: dict[str, Any]) -> None:
        """Handle one checked JSON-RPC message; whatever is wrong with it is answered, never raised."""
        method = data.get("method")
        is_request = "id" in data and method is not None
        if method == types.INITIALIZE and is_request:
            self._reply_error(data["id"], -32600, "the server is already initialized")
            return
        if is_request and isinstance(method, str) and is_notification(method):
            self._reply_error(data["id"], -32600, f"'{method[:200]}' is a notification: send it without an 'id'. "
                                                  "It was not handled")
            return
        if self.shutdown_requested and method != types.EXIT:
            if is_request:
                self._reply_error(data["id"], -32600, "the server is shutting down; only 'exit' is accepted")
            return
        try:
            message = self.structure_message(data)
        except Exception as exc:
            self._bad_message(data, exc)
            return
        if method == types.SHUTDOWN:
            self.shutdown_requested = True  # before the handler task runs: later requests are refused
        if method == types.CANCEL_REQUEST:
            params = data.get("params")
            target = params.get("id") if isinstance(params, dict) else None
            if not (isinstance(target, str) or (isinstance(target, int) and not isinstance(target, bool))):
                log.warning("ignored $/cancelRequest with an unusable id %r", target)
                return
        try:
            self.handle_message(message)
        except Exception:  # one bad message never ends the loop
            log.exception("handling %s failed", method)
            if is_request:
                self._reply_error(data["id"], -32603, f"{method}: the server failed to handle this request")

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait (a while) for the handlers of requests still being answered."""
        await asyncio.sleep(0)  # handlers dispatched last have started, and counted themselves
        tasks = [t for t in self.owner.requests if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        await asyncio.sleep(0)  # pygls writes each answer from its handler's done-callback

    def _bad_message(self, data: dict[str, Any], exc: Exception) -> None:
        detail = _describe(exc)
        method = data.get("method")
        if method is None:
            log.warning("unreadable answer from the client to request %r: %s", data["id"], detail)
            answer = self._calls.get(data["id"])
            if answer is not None and not answer.done():
                answer.set_exception(JsonRpcInternalError(f"the editor's answer could not be read: {detail}"))
        elif "id" in data:
            self._reply_error(data["id"], -32602, f"{method}: invalid params: {detail}")
        else:
            log.warning("ignored notification %s with invalid params: %s", method, detail)

    def _reply_error(self, msg_id: int | str, code: int, message: str) -> None:
        self.owner.channel.send_error(WireError(code, message, msg_id))

    # ----------------------------------------------------------------- lifecycle
    def initialize_from(self, params: dict[str, Any]) -> None:
        """Set up from ``initialize`` params whose answer ``boot.py`` already sent."""
        try:
            init = self.converter.structure(params, types.InitializeParams)
        except Exception as exc:
            log.warning("initialize params only partly understood (%s); continuing", _describe(exc))
            init = types.InitializeParams(capabilities=types.ClientCapabilities(),
                                          root_uri=params.get("rootUri") if isinstance(params.get("rootUri"), str)
                                          else None)
        self.owner.process_id = init.process_id
        self.client_capabilities = init.capabilities
        root_uri = init.root_uri
        if root_uri is None and init.root_path:
            root_uri = f"file://{init.root_path}"
        self._documents = Workspace(root_uri, types.TextDocumentSyncKind.Incremental,
                                    init.workspace_folders or [], POSITION_ENCODING)
        self.server_capabilities = self.converter.structure(server_capabilities(), types.ServerCapabilities)
        self.initialized = True
        self.owner.configure(params)

    @lsp_method(types.SHUTDOWN)
    async def lsp_shutdown(self, *args: Any) -> None:  # type: ignore[override]
        with self.owner.handling():
            await self.owner.aclose()

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]
        self.exit_requested = True

    # ----------------------------------------------------------------- builtins we change
    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(self, params: Any) -> Any:  # type: ignore[override]
        with self.owner.handling():
            return await store_errors(self.owner.execute_command)(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams
                                      ) -> Generator[Any, Any, None]:
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.warning("didChange for a document that is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    # ----------------------------------------------------------------- outgoing
    async def call(self, method: str, params: Any, timeout: float) -> Any:
        """A request to the client. Raises ``TimeoutError``, or ``JsonRpcException`` for an error answer.

        A request we stop waiting for is withdrawn with ``$/cancelRequest``; its future stays with pygls
        until the client answers (LSP says it must, with -32800), and that late answer lands on a future
        nobody awaits (``shield``: a cancelled one would make pygls raise when it sets the result).
        """
        msg_id = f"agentls-{next(self._ids)}"
        answer = asyncio.wrap_future(self.send_request(method, params, msg_id=msg_id))
        self._calls[msg_id] = answer
        try:
            return await asyncio.wait_for(asyncio.shield(answer), timeout)
        finally:
            del self._calls[msg_id]
            if not answer.done():
                answer.add_done_callback(_ignore_late)
                self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))


def _ignore_late(answer: asyncio.Future[Any]) -> None:
    """Retrieve a late answer's error (the -32800 of a withdrawn request), so asyncio does not log it."""
    if not answer.cancelled():
        answer.exception()


def _describe(exc: BaseException) -> str:
    if isinstance(exc.__cause__, ClassValidationError):  # pygls wraps what cattrs could not structure
        exc = exc.__cause__
    if isinstance(exc, ClassValidationError):
        return "; ".join(transform_error(exc, path="$"))
    if isinstance(exc, JsonRpcException):
        return exc.message
    return f"{type(exc).__name__}: {exc}"
