"""Hypothesis strategies for protocol fuzzing, and what the server owes each generated frame.

A generated op is a small description (kind, method, params with placeholders); ``Builder`` turns it
into the exact bytes for one face and says which request id must be answered. Big payloads are
placeholders expanded at build time (hypothesis never has to generate a megabyte), so a run is
reproducible from its seed.

Frame kinds: well-formed requests with wrong params, unknown methods, notifications, broken JSON-RPC
envelopes (wrong ``jsonrpc``/``id``/``method``/``params`` types, batches, scalars, stray responses),
broken framing (bad or missing ``Content-Length``, junk headers, invalid UTF-8, split or merged
lines), huge strings, deep nesting, and real turns interleaved with cancels, steers and interrupts.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

SID = "\x00SID\x00"  # replaced by the session id of the run
LSP_METHODS = ["agent/newSession", "agent/turn", "agent/steer", "agent/interrupt", "agent/compress",
               "agent/listSessions", "agent/loadSession", "agent/undo", "textDocument/codeAction",
               "workspace/executeCommand", "textDocument/hover", "workspace/symbol", "$/setTrace"]
LSP_NOTIFICATIONS = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
                     "textDocument/didSave", "$/cancelRequest", "window/workDoneProgress/cancel", "$/setTrace",
                     "workspace/didChangeConfiguration", "agent/steer", "initialized"]
ACP_METHODS = ["session/new", "session/load", "session/resume", "session/list", "session/prompt",
               "session/set_mode", "session/set_config_option", "session/close", "authenticate",
               "_session/steering", "_agentls/interrupt", "_agentls/compress", "session/fork", "_unknown/x"]
ACP_NOTIFICATIONS = ["session/cancel", "_x/notify", "session/update", "$/cancel_request"]
KEYS = ["sessionId", "prompt", "text", "cwd", "focus", "keepLast", "preview", "turns", "query", "cursor",
        "textDocument", "contentChanges", "id", "command", "arguments", "mcpServers", "modeId", "configId",
        "value", "methodId", "protocolVersion", "systemMessage", "taskId", "uri", "_meta"]


@dataclass(frozen=True)
class Big:
    kind: str  # "huge" (a string of ``size`` chars) or "deep" (``size`` nested arrays)
    size: int


scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40), st.just(SID),
                    st.just("file:///etc/passwd"), st.just("../../.."))
bigs = st.one_of(st.builds(Big, st.just("huge"), st.integers(50_000, 1_500_000)),
                 st.builds(Big, st.just("deep"), st.integers(50, 100_000)))
values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                      st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8),
                                                                      kids, max_size=5)), max_leaves=10)
params = st.one_of(st.dictionaries(st.sampled_from(KEYS), values | bigs, max_size=5), values, st.just(None))
prompts = st.one_of(st.text(min_size=1, max_size=200), st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=50)}),
    st.dictionaries(st.sampled_from(["type", "text", "uri", "data", "mimeType", "resource"]), values, max_size=4)),
    min_size=1, max_size=3))
ENVELOPE_BREAKS = ["no-jsonrpc", "jsonrpc-1.0", "jsonrpc-number", "id-bool", "id-float", "id-object", "id-null",
                   "method-number", "method-empty", "method-null", "params-scalar", "params-string", "batch",
                   "scalar", "response-result", "response-error", "method-and-result", "no-method"]
FRAMING_BREAKS = ["not-json", "truncated-json", "bad-utf8", "empty", "trailing-garbage", "two-objects",
                  "no-length", "length-not-digits", "length-too-large", "length-too-small", "junk-headers",
                  "lf-only", "long-header", "pretty-printed", "nul-bytes"]

ops = st.one_of(
    st.tuples(st.just("request"), st.integers(0, 10_000), params),
    st.tuples(st.just("unknown"), st.text(min_size=1, max_size=30), params),
    st.tuples(st.just("notify"), st.integers(0, 10_000), params),
    st.tuples(st.just("envelope"), st.sampled_from(ENVELOPE_BREAKS), params),
    st.tuples(st.just("framing"), st.sampled_from(FRAMING_BREAKS), params),
    st.tuples(st.just("big"), st.integers(0, 10_000), bigs),
    st.tuples(st.just("turn"), st.booleans(), prompts),
    st.tuples(st.just("control"), st.sampled_from(["cancel", "cancel-old", "steer", "interrupt"]), st.text(max_size=40)),
)


def generate(batches: int, size: int, rng_seed: int) -> list[list[tuple[Any, ...]]]:
    """``batches`` lists of ``size`` ops, reproducible from ``rng_seed``."""
    out: list[list[tuple[Any, ...]]] = []

    @seed(rng_seed)
    @settings(max_examples=batches, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.lists(ops, min_size=size, max_size=size))
    def collect(batch: list[tuple[Any, ...]]) -> None:
        out.append(batch)

    collect()
    return out[:batches]


@dataclass
class Frame:
    data: bytes
    expect: Any  # the id the server must answer, or None
    label: str
    turn: bool = False  # a real turn: its answer may take a while


class Builder:
    """Turns ops into frames for ``face`` ("lsp" or "acp") in the context of one session."""

    def __init__(self, face: str, session_id: str) -> None:
        self.face = face
        self.sid = session_id
        self._ids = itertools.count(1)
        self.turn_ids: list[Any] = []
        self.closed_session = False  # a fuzzed session/close named the session

    # ----------------------------------------------------------------- encoding
    def text(self, obj: Any) -> str:
        bigs: list[Big] = []

        def walk(value: Any) -> Any:
            if isinstance(value, Big):
                bigs.append(value)
                return f"\x00BIG{len(bigs) - 1}\x00"
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [walk(v) for v in value]
            if value == SID:
                return self.sid
            return value

        out = json.dumps(walk(obj))
        for i, big in enumerate(bigs):
            expanded = json.dumps("x" * big.size) if big.kind == "huge" else "[" * big.size + "]" * big.size
            out = out.replace(json.dumps(f"\x00BIG{i}\x00"), expanded, 1)
        return out

    def wrap(self, body: bytes) -> bytes:
        if self.face == "lsp":
            return b"Content-Length: %d\r\n\r\n" % len(body) + body
        return body + b"\n"

    def frame(self, obj: Any, label: str, expect: Any = None, turn: bool = False) -> Frame:
        return Frame(self.wrap(self.text(obj).encode()), expect, label, turn)

    def new_id(self) -> Any:
        n = next(self._ids)
        return f"f{n}" if n % 2 else n  # string and number ids both

    # ----------------------------------------------------------------- ops
    def build(self, op: tuple[Any, ...]) -> Frame:
        kind = op[0]
        methods = LSP_METHODS if self.face == "lsp" else ACP_METHODS
        notes = LSP_NOTIFICATIONS if self.face == "lsp" else ACP_NOTIFICATIONS
        if kind in ("request", "unknown", "big"):
            method = methods[op[1] % len(methods)] if kind != "unknown" else f"zz/{op[1]}"
            msg_id = self.new_id()
            msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
            if op[2] is not None:
                msg["params"] = op[2] if kind != "big" else {"sessionId": SID, "prompt": op[2], "text": op[2]}
            frame = self.frame(msg, f"{kind} {method} {str(op[2])[:80]}", msg_id)
            self.closed_session |= method == "session/close" and self.sid.encode() in frame.data
            return frame
        if kind == "notify":
            msg = {"jsonrpc": "2.0", "method": notes[op[1] % len(notes)]}
            if op[2] is not None:
                msg["params"] = op[2]
            return self.frame(msg, f"notify {msg['method']} {str(op[2])[:80]}")
        if kind == "envelope":
            return self.envelope(op[1], op[2])
        if kind == "framing":
            return self.framing(op[1], op[2])
        if kind == "turn":
            return self.turn(op[2], op[1])
        return self.control(op[1], op[2])

    def turn(self, prompt: Any, text_only: bool) -> Frame:
        msg_id = self.new_id()
        self.turn_ids.append(msg_id)
        if self.face == "lsp":
            params = {"sessionId": SID, "prompt": prompt if not text_only else "fuzz turn"}
            return self.frame({"jsonrpc": "2.0", "id": msg_id, "method": "agent/turn", "params": params},
                              f"turn {str(prompt)[:80]}", msg_id, turn=True)
        blocks = prompt if isinstance(prompt, list) and not text_only else [{"type": "text", "text": "fuzz turn"}]
        params = {"sessionId": SID, "prompt": blocks}
        return self.frame({"jsonrpc": "2.0", "id": msg_id, "method": "session/prompt", "params": params},
                          f"prompt {str(blocks)[:80]}", msg_id, turn=True)

    def control(self, what: str, text: str) -> Frame:
        lsp = self.face == "lsp"
        if what.startswith("cancel"):
            target = (self.turn_ids[-1] if what == "cancel" else self.turn_ids[0]) if self.turn_ids else 0
            if lsp:
                return self.frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": target}},
                                  f"cancel {target}")
            return self.frame({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}, "cancel")
        msg_id = self.new_id()
        if what == "steer":
            method, params = ("agent/steer", {"sessionId": SID, "text": text or "steer"}) if lsp else \
                ("_session/steering", {"sessionId": SID, "prompt": text or "steer"})
        else:
            method, params = ("agent/interrupt", {"sessionId": SID}) if lsp else \
                ("_agentls/interrupt", {"sessionId": SID})
        return self.frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}, what, msg_id)

    def envelope(self, how: str, p: Any) -> Frame:
        msg_id = self.new_id()
        base: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions" if self.face == "lsp"
                                else "session/list", "params": p if isinstance(p, dict) else {}}
        expect: Any = msg_id
        body: Any = dict(base)
        if how == "no-jsonrpc":
            del body["jsonrpc"]
        elif how.startswith("jsonrpc"):
            body["jsonrpc"] = "1.0" if how == "jsonrpc-1.0" else 2
        elif how.startswith("id-"):
            body["id"] = {"id-bool": True, "id-float": 1.5, "id-object": {"n": 1}, "id-null": None}[how]
            expect = None
        elif how.startswith("method-"):
            if how == "method-and-result":
                body["result"] = {}
            else:
                body["method"] = {"method-number": 7, "method-empty": "", "method-null": None}[how]
        elif how.startswith("params-"):
            body["params"] = 42 if how == "params-scalar" else "params"
        elif how == "batch":
            body, expect = [base, dict(base, id=self.new_id())], None
        elif how == "scalar":
            body, expect = p if not isinstance(p, dict | list) else 12, None
        elif how.startswith("response-"):
            body = {"jsonrpc": "2.0", "id": msg_id}
            body["result" if how == "response-result" else "error"] = p if how == "response-result" else {
                "code": 1, "message": "stray"}
            expect = None
        elif how == "no-method":
            del body["method"]
            del body["params"]
        return self.frame(body, f"envelope {how}", expect)

    def framing(self, how: str, p: Any) -> Frame:
        msg_id = self.new_id()
        method = "agent/listSessions" if self.face == "lsp" else "session/list"
        good = self.text({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}).encode()
        lsp = self.face == "lsp"
        resync = b"\r\n\r\n" if lsp else b"\n"
        label = f"framing {how}"
        junk = self.text(p).encode()
        if how in ("not-json", "truncated-json", "bad-utf8", "empty", "trailing-garbage", "two-objects",
                   "nul-bytes"):
            body = {"not-json": b"this is not json " + junk[:50].replace(b"\n", b" "),
                    "truncated-json": good[: len(good) // 2], "bad-utf8": b'{"jsonrpc": "2.0", "x": "\xff\xfe"}',
                    "empty": b"" if lsp else b"   ", "trailing-garbage": good + b" }garbage",
                    "two-objects": good + b" " + good, "nul-bytes": good[:10] + b"\x00" + good[10:]}[how]
            return Frame(self.wrap(body), None, label)
        if not lsp:
            if how == "pretty-printed":
                return Frame(json.dumps(json.loads(good), indent=2).encode() + b"\n", None, label)
            if how == "lf-only":
                return Frame(good + b"\r\n", msg_id, label)  # CRLF line end: still one frame
            return Frame(b"\n\n  \n" + good + b"\n", msg_id, label)  # blank lines around a good frame
        if how == "no-length":
            return Frame(b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + good + resync, None, label)
        if how == "length-not-digits":
            return Frame(b"Content-Length: 12x\r\n\r\n" + good + resync, None, label)
        if how == "length-too-large":
            return Frame(b"Content-Length: %d\r\n\r\n" % (len(good) + 7) + good + b"garbage", None, label)
        if how == "length-too-small":
            return Frame(b"Content-Length: %d\r\n\r\n" % (len(good) - 5) + good + resync, None, label)
        if how == "junk-headers":
            return Frame(b"X-Junk: 1\r\nno colon here\r\nContent-Type: x\r\nContent-Length: %d\r\n\r\n" % len(good)
                         + good, msg_id, label)
        if how == "lf-only":
            return Frame(b"Content-Length: %d\n\n" % len(good) + good, msg_id, label)
        if how == "long-header":
            return Frame(b"X-Long: " + b"a" * 200_000 + b"\r\nContent-Length: %d\r\n\r\n" % len(good) + good,
                         msg_id, label)
        return Frame(b"\r\n\r\n" + self.wrap(good), msg_id, label)  # "pretty-printed": blank lines first
