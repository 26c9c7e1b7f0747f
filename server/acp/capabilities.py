"""What the client declared, and what agentls answers to ``initialize`` (plain dicts: no SDK import)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..runtime.nested import nested

from agentls.agent.version import __version__

PROTOCOL_VERSION = 1
STEERING_METHOD = "session/steering"  # reached as ``_session/steering``

# The id of the request being handed to the SDK (set in the reading task, so the request's handler task inherits
# it): what ``$/cancel_request`` names (server/acp/raw.py).
REQUEST_ID: ContextVar[str | None] = ContextVar("agentls_acp_request_id", default=None)


def id_key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


API_KEY_METHOD = "api-key"
LOCAL_MODEL_METHOD = "local-model"
AUTH_METHODS: list[dict[str, Any]] = [
    {"id": API_KEY_METHOD, "name": "API key from the environment",
     "description": "Set AGENTLS_API_KEY (or OPENAI_API_KEY / ANTHROPIC_API_KEY, or the variable named by "
                    "apiKeyEnv) and a model (AGENTLS_MODEL or model in .agentls.toml) in the environment that "
                    "starts `agentls acp`, then restart the agent. Authenticating checks that the key is "
                    "there and that the provider accepts it."},
    {"id": LOCAL_MODEL_METHOD, "name": "Embedded local model (no key)",
     "description": "Install the small offline model with `pip install 'agentls[local]'`; agentls uses it "
                    "when no model, key or base URL is configured."},
]


@dataclass(frozen=True)
class ClientCaps:
    """The client's capabilities, read from the raw ``initialize`` params (the SDK's models drop
    extension fields such as ``session.compaction``)."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    compaction: bool = False
    client_name: str | None = None

    @classmethod
    def from_params(cls, params: Any) -> ClientCaps:
        caps = nested(params, "clientCapabilities")
        name = nested(params, "clientInfo", "name")
        return cls(
            read_text_file=nested(caps, "fs", "readTextFile") is True,
            write_text_file=nested(caps, "fs", "writeTextFile") is True,
            terminal=nested(caps, "terminal") is True,
            compaction=isinstance(nested(caps, "session", "compaction"), dict),
            client_name=name if isinstance(name, str) else None,
        )


class ClientState:
    """Shared by the transport (which records the raw ``initialize``) and the handlers."""

    def __init__(self) -> None:
        self.caps = ClientCaps()
        self.initialized = False

    def observe(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            REQUEST_ID.set(id_key(message["id"]))
        if message.get("method") == "initialize" and "id" in message:
            self.caps = ClientCaps.from_params(message.get("params"))


def initialize_result() -> dict[str, Any]:
    """The ``initialize`` result (ACP v1 ``InitializeResponse``)."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "fork": {}, "delete": {},
                                    "additionalDirectories": {}},
        },
        "authMethods": AUTH_METHODS,
        "agentInfo": {"name": "agentls", "title": "agentls", "version": __version__},
        "_meta": {"steering": {"supported": True}},
    }


def is_initialize_request(message: dict[str, Any]) -> bool:
    return message.get("method") == "initialize" and "id" in message and isinstance(message.get("params"), dict) \
        and isinstance(message["params"].get("protocolVersion"), int)
