"""The bare question behind the agent's own edits for a small model (docs/loop.md §9.11).

The first edit (loop/first_edit.py) and a test repair (loop/test_check.py) are edits the agent chose, so their
rewrite need not be asked inside the agent's transcript, under a system prompt of tools and a history of JSON
calls. It is asked as one plain chat message, the way the same model does best on its own: the files the
pre-read showed (the instructions, the tests; without read_file's line numbers), for a repair the failing
run's output, then the edit's instruction (the file as it is, the request, the change, what to reply, last).
Measured on Exercism's stubs, a 1.5B model asked inside the transcript echoed the file it was shown; asked
this way it wrote code. The guards of the described edit apply to the reply as to any rewrite.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import PurePosixPath

import anyio

from .parts import TurnParts
from .regular import read_regular
from ..model_caller import Prompt
from ..tools.described import MAX_REQUEST_CHARS
from ..tools.fences import LANG, fence_for
from ..tools.matching import without_line_numbers
from ..types import Message, text_of

SYSTEM = "You are an expert programmer. You write complete, correct code, and follow the requested reply format."
MAX_USER_CHARS = 6000  # of a long request, shown whole up to this
MAX_REREAD_BYTES = 200_000  # a digested pre-read is read again up to this size
MAX_OUTPUT_CHARS = 4000  # of the failing run's output: its start (the first failures) is what a repair needs


def _path_of(call_args: str) -> str | None:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        path = json.loads(call_args).get("path")
        return path if isinstance(path, str) else None
    return None


def preread_groups(messages: list[Message]) -> list[list[tuple[str, Message]]]:
    """The pre-reads of this conversation, in order, each as the files it read: (path, its read_file result)."""
    groups: list[list[tuple[str, Message]]] = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant" or not (m.get("meta") or {}).get("preread"):
            continue
        paths = {c["id"]: _path_of(c["function"]["arguments"]) for c in m.get("tool_calls") or []}
        group: list[tuple[str, Message]] = []
        for r in messages[i + 1:]:
            if r.get("role") != "tool":
                break
            path = paths.get(str(r.get("tool_call_id")))
            if path:
                group.append((path, r))
        groups.append(group)
    return groups


def preread_results(messages: list[Message]) -> Iterator[tuple[str, Message]]:
    """Every file the pre-reads of this conversation read, in order: (path, its read_file result)."""
    for group in preread_groups(messages):
        yield from group


def shown_text(result: Message) -> str | None:
    """A pre-read's text without read_file's line numbers; None for an error or a result compression digested."""
    text = text_of(result)
    if text.startswith("error") or (result.get("meta") or {}).get("pruned"):
        return None
    return without_line_numbers(text) or text


def preread_files(messages: list[Message]) -> list[tuple[str, str | None]]:
    """The files the pre-reads of this conversation showed about the latest one's files, each as last read: (path,
    ``shown_text``), the text None where compression digested the result since. A retry turn ("the tests fail as
    shown above") reads no test file again (loop/preread.py), so an earlier pre-read that shares a file with the
    latest one counts (the first turn's instructions and tests); one that shares none (another stub of the same
    session, its instructions, its tests) does not: each checked turn would otherwise add its files to every later
    rewrite's question, until it overflowed the context."""
    groups = preread_groups(messages)
    latest = {path for path, _ in groups[-1]} if groups else set()
    out: dict[str, str | None] = {}
    for group in groups:
        if latest & {path for path, _ in group}:
            for path, result in group:
                if not text_of(result).startswith("error"):
                    out.pop(path, None)
                    out[path] = shown_text(result)
    return list(out.items())


async def shown_files(parts: TurnParts) -> list[tuple[str, str]]:
    """The pre-read files for the agent's own rewrite: a result compression digested (a long test file, in a
    long turn or the next one) is read again from the workspace, so the model never gets the digest's
    placeholder instead of the instructions or the tests."""
    root, out = parts.conversation.root, []
    for path, text in preread_files(parts.conversation.messages):
        if text is None:
            text = await anyio.to_thread.run_sync(read_regular, root, path, MAX_REREAD_BYTES)
        if text is not None:
            out.append((path, text))
    return out


def _last_run(messages: list[Message], start: int) -> str | None:
    """The output of the turn's last test run by the agent, when it comes after every edit."""
    for i in range(len(messages) - 1, start - 1, -1):
        m = messages[i]
        if m.get("role") == "assistant" and m.get("tool_calls"):
            if (m.get("meta") or {}).get("test_repair"):
                continue  # the repair being asked for now
            if not (m.get("meta") or {}).get("test_check"):
                return None
            result = messages[i + 1] if i + 1 < len(messages) else None
            return text_of(result) if result is not None and result.get("role") == "tool" else None
    return None


def request_text(parts: TurnParts) -> str:
    """This turn's user request, as the user wrote it."""
    message = parts.conversation.turn_request()
    return text_of(message) if message is not None else ""


def focused_prompt(parts: TurnParts, instruction: str, temperature: float, files: list[tuple[str, str]]) -> Prompt:
    """``files``: ``shown_files(parts)``, read before the prompt is built."""
    conversation = parts.conversation
    messages, start = conversation.messages, conversation.turn_user or 0
    shown = [f"{path}:\n{fence_for(text)}{LANG.get(PurePosixPath(path).suffix, '')}\n{text.rstrip()}\n{fence_for(text)}"
             for path, text in files if not instruction.startswith(f"{path} ")]
    request = request_text(parts)
    if len(request) > MAX_REQUEST_CHARS:  # the instruction carries its start only (a retry's pasted test output)
        cut = request[:MAX_USER_CHARS]
        shown.append(f"The user's message:\n{fence_for(cut)}\n{cut.rstrip()}\n{fence_for(cut)}")
    run = _last_run(messages, start)
    if run is not None:
        cut = run if len(run) <= MAX_OUTPUT_CHARS else run[:MAX_OUTPUT_CHARS] + "\n[... output cut ...]"
        fence = fence_for(cut)
        shown.append(f"The tests were run:\n{fence}\n{cut.rstrip()}\n{fence}")
    content = "\n\n".join([*shown, instruction])
    return Prompt(system=SYSTEM, messages=[{"role": "user", "content": content}], tools=(), tool_choice="text",
                  temperature=temperature, transcript=False)
