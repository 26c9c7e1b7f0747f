"""Opt-in trajectory export: one JSON line per finished turn, redacted."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from .redact import redact_value
from .types import Message


class TrajectoryWriter:
    """Appends ``{"session_id", "task_id", "model", "messages", "usage", "exit_reason", "ts"}``
    records to a JSONL file. Every string in a record goes through ``redact`` first."""

    def __init__(self, path: str | Path, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.secrets = tuple(secrets)
        self._lock = anyio.Lock()

    def record(self, *, session_id: str, task_id: str | None, model: str, messages: Sequence[Message],
               usage: Mapping[str, Any], exit_reason: str | None) -> dict[str, Any]:
        """The redacted record ``write`` appends."""
        raw = {
            "session_id": session_id,
            "task_id": task_id,
            "model": model,
            "messages": [dict(m) for m in messages],
            "usage": dict(usage),
            "exit_reason": exit_reason,
            "ts": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        cleaned: dict[str, Any] = redact_value(raw, self.secrets)
        return cleaned

    async def write(self, *, session_id: str, task_id: str | None, model: str, messages: Sequence[Message],
                    usage: Mapping[str, Any], exit_reason: str | None) -> None:
        line = json.dumps(self.record(session_id=session_id, task_id=task_id, model=model, messages=messages,
                                      usage=usage, exit_reason=exit_reason), ensure_ascii=False) + "\n"
        async with self._lock:
            await anyio.Path(self.path.parent).mkdir(parents=True, exist_ok=True)
            async with await anyio.open_file(self.path, "a", encoding="utf-8") as f:
                await f.write(line)
