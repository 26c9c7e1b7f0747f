"""Validates the agent's raw stdout frames against the ACP v1 JSON schema (Draft 2020-12)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path("/work/shared/acp/schema.v1.json")

RESPONSES = {
    "initialize": "InitializeResponse", "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse", "session/load": "LoadSessionResponse",
    "session/list": "ListSessionsResponse", "session/resume": "ResumeSessionResponse",
    "session/close": "CloseSessionResponse", "session/set_mode": "SetSessionModeResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse", "session/prompt": "PromptResponse",
    "session/delete": "DeleteSessionResponse",
    # session/fork is not in schema v1 (the SDK's unstable protocol): its answer has NewSessionResponse's shape.
    "session/fork": "NewSessionResponse",
}
REQUESTS = {
    "fs/read_text_file": "ReadTextFileRequest", "fs/write_text_file": "WriteTextFileRequest",
    "session/request_permission": "RequestPermissionRequest", "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest", "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest", "terminal/release": "ReleaseTerminalRequest",
}
NOTIFICATIONS = {"session/update": "SessionNotification"}

# The session-compaction RFD's update (not in schema v1): accepted only when the client declared it.
COMPACTION_UPDATE = {
    "type": "object",
    "properties": {
        "sessionUpdate": {"const": "compaction_update"},
        "compactionId": {"type": "string"},
        "status": {"enum": ["in_progress", "completed", "failed", "cancelled"]},
        "summary": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/ContentBlock"}}]},
        "_meta": {"type": ["object", "null"]},
    },
    "required": ["sessionUpdate", "compactionId", "status"],
}


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return data


@cache
def validator(definition: str) -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator({"$schema": schema["$schema"], "$defs": schema["$defs"],
                                 "$ref": f"#/$defs/{definition}"})


@lru_cache(maxsize=1)
def compaction_validator() -> Draft202012Validator:
    schema = _schema()
    return Draft202012Validator({"$schema": schema["$schema"], "$defs": schema["$defs"],
                                 "type": "object", "required": ["sessionId", "update"],
                                 "properties": {"sessionId": {"type": "string"}, "update": COMPACTION_UPDATE}})


@dataclass
class FrameReport:
    checked: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def count(self, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


def _check(report: FrameReport, definition: str, value: Any, where: str) -> None:
    errors = sorted(validator(definition).iter_errors(value), key=lambda e: list(e.path))
    for err in errors[:3]:
        report.errors.append(f"{where}: not a valid {definition} at {list(err.path)}: {err.message[:300]}")


def validate_frames(records: list[dict[str, str]], *, compaction_declared: bool) -> FrameReport:
    """Every line the agent wrote must be one JSON-RPC object valid for its method."""
    report = FrameReport()
    client_requests: dict[Any, str] = {}
    for rec in records:
        if rec["dir"] == "in":
            try:
                msg = json.loads(rec["raw"])
            except ValueError:
                continue
            if isinstance(msg, dict) and "method" in msg and "id" in msg:
                client_requests[msg["id"]] = msg["method"]
    for n, rec in enumerate(records):
        if rec["dir"] != "out":
            continue
        raw = rec["raw"]
        where = f"frame {n} {raw[:160]!r}"
        report.checked += 1
        if not raw.endswith("\n") or "\n" in raw[:-1]:
            report.errors.append(f"{where}: a frame is exactly one line ending in a newline")
        try:
            msg = json.loads(raw)
        except ValueError as exc:
            report.errors.append(f"{where}: not JSON: {exc}")
            continue
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            report.errors.append(f"{where}: not a JSON-RPC 2.0 object")
            continue
        method = msg.get("method")
        if method is None:  # a response to the client
            if "error" in msg:
                report.count("error")
                _check(report, "Error", msg["error"], where)
                continue
            asked = client_requests.get(msg.get("id"))
            report.count(f"response {asked}")
            if asked in RESPONSES:
                _check(report, RESPONSES[asked], msg.get("result"), where)
            elif asked is None or not asked.startswith("_"):
                report.errors.append(f"{where}: a response to no known client request ({asked!r})")
            continue
        params = msg.get("params")
        if method in NOTIFICATIONS and "id" not in msg:
            update = (params or {}).get("update") or {}
            kind = update.get("sessionUpdate")
            report.count(f"update {kind}")
            if kind == "compaction_update":
                if not compaction_declared:
                    report.errors.append(f"{where}: compaction_update sent to a client that did not declare it")
                for err in compaction_validator().iter_errors(params):
                    report.errors.append(f"{where}: bad compaction_update: {err.message[:300]}")
                continue
            _check(report, NOTIFICATIONS[method], params, where)
        elif method in REQUESTS and "id" in msg:
            report.count(f"request {method}")
            _check(report, REQUESTS[method], params, where)
        else:
            report.errors.append(f"{where}: the agent sent an unknown method {method!r}")
    return report


def read_records(path: Path, start: int = 0) -> list[dict[str, str]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()[start:]
    return [json.loads(line) for line in lines if line.strip()]
