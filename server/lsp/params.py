"""Validation of raw ``agent/*`` params: each failure is a -32602 whose message names the method and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pygls.exceptions import JsonRpcInvalidParams

MAX_PROMPT_CHARS = 2_000_000
MAX_TEXT_CHARS = 200_000


class Params:
    """One request's params object. ``where`` prefixes every message (``agent/turn``, ``agent.turn``)."""

    def __init__(self, where: str, raw: Any) -> None:
        self.where = where
        if raw is None or raw == []:  # no params (Lua's {} encodes as [])
            raw = {}
        if not isinstance(raw, dict):
            raise self.invalid(f"params must be an object, not {_kind(raw)}")
        self.raw: dict[str, Any] = raw

    def invalid(self, problem: str) -> JsonRpcInvalidParams:
        return JsonRpcInvalidParams(f"{self.where}: {problem}")

    def string(self, key: str, *, limit: int = MAX_TEXT_CHARS) -> str:
        value = self.raw.get(key)
        if key not in self.raw or value is None:
            raise self.invalid(f"{key!r} is required (a string)")
        if not isinstance(value, str):
            raise self.invalid(f"{key!r} must be a string, not {_kind(value)}")
        if not value.strip():
            raise self.invalid(f"{key!r} must not be empty")
        if len(value) > limit:
            raise self.invalid(f"{key!r} is {len(value):,} characters; the limit is {limit:,}")
        return value

    def optional_string(self, key: str, *, limit: int = MAX_TEXT_CHARS) -> str | None:
        if self.raw.get(key) is None:
            return None
        return self.string(key, limit=limit)

    def integer(self, key: str, default: int | None = None, *, minimum: int | None = None,
                maximum: int | None = None) -> int | None:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not value.is_integer()):
            raise self.invalid(f"{key!r} must be a whole number, not {_kind(value)}")
        number = int(value)
        if minimum is not None and number < minimum:
            raise self.invalid(f"{key!r} must be at least {minimum}, not {number}")
        if maximum is not None and number > maximum:
            raise self.invalid(f"{key!r} must be at most {maximum}, not {number}")
        return number

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.invalid(f"{key!r} must be true or false, not {_kind(value)}")
        return value

    def session_id(self) -> str:
        return self.string("sessionId", limit=200)

    def prompt(self, key: str = "prompt") -> Any:
        """A string or a list of ACP content blocks, checked by the core's ``normalize_prompt``."""
        from agentls.agent.prompt_blocks import PromptError, normalize_prompt

        value = self.raw.get(key)
        if value is None:
            raise self.invalid(f"{key!r} is required (a string or a list of content blocks)")
        if not isinstance(value, str | list):
            raise self.invalid(f"{key!r} must be a string or a list of content blocks, not {_kind(value)}")
        if isinstance(value, str) and not value.strip():
            raise self.invalid(f"{key!r} must not be empty")
        size = len(value) if isinstance(value, str) else sum(len(str(b)) for b in value)
        if size > MAX_PROMPT_CHARS:
            raise self.invalid(f"{key!r} is {size:,} characters; the limit is {MAX_PROMPT_CHARS:,}")
        try:
            normalize_prompt(value)
        except PromptError as exc:
            raise self.invalid(f"{key!r}: {exc}") from None
        return value

    def directory(self, key: str) -> Path | None:
        """An existing directory, given as a path or a ``file://`` URI."""
        value = self.optional_string(key, limit=4096)
        if value is None:
            return None
        path = uri_to_path(value) if value.startswith("file:") else Path(value).expanduser()
        if not path.is_absolute():
            raise self.invalid(f"{key!r} must be an absolute path or a file:// URI, not {value!r}")
        if not path.is_dir():
            raise self.invalid(f"{key!r} {value!r} is not an existing directory")
        return path.resolve()

    def token(self) -> int | str | None:
        """The client-initiated ``workDoneToken``, if any."""
        value = self.raw.get("workDoneToken")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.invalid(f"'workDoneToken' must be a number or a string, not {_kind(value)}")
        return value


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"not a file URI: {uri!r}")
    return Path(unquote(parsed.path))


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
