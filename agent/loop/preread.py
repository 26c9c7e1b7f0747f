"""A small model gets the files its request names before its first step.

Asked to change ``greet.py``, a 1.5B model edits at once, with an ``old_string`` it made up from what such
a file usually holds; told to read first, it often cannot recover. So for a small model (``ModelProfile.preread``) the turn opens
with the agent's own ``read_file`` round for the workspace files the user's message names (by path, or by a
file name only one file has; at most ``MAX_FILES``). It runs like any tool round (the editor shows the
reads, the read-before-overwrite rule counts them, the transcript keeps them) and is marked
``meta.preread``. A question about a file can then be answered in one step.

Not when the request asks to run something (``run``, ``execute``...): with the file in front of it, a small
model asked to run ``python greet.py Bob`` answers with the output it predicts instead of running it (and
a refused command then goes unnoticed).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import PurePosixPath

from .change_request import change_request
from .dispatch import announce, run_calls
from .parts import TurnParts
from .prepare import prepare_calls
from .state import TurnState
from ..paths import OutsideWorkspace, resolve_in_workspace
from ..types import Message, ToolCall, text_of

MAX_FILES = 3
_TOKEN = re.compile(r"[\w][\w./-]*\.[A-Za-z0-9]+")
_CREATE = re.compile(r"\b(create|new|write|save|copy|generate|duplicate)\b", re.IGNORECASE)
_RUN = re.compile(r"\b(run|runs|execute|launch|start|test|tests)\b", re.IGNORECASE)


def named_files(text: str, files: list[str]) -> list[str]:
    """The files of ``files`` that ``text`` names, in the order it names them."""
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(PurePosixPath(f).name, []).append(f)
    listed = set(files)
    out: list[str] = []
    for token in _TOKEN.findall(text):
        token = token.rstrip(".").removeprefix("./")
        hit = token if token in listed else (by_name[token][0] if len(by_name.get(token, ())) == 1 else None)
        if hit and hit not in out:
            out.append(hit)
            if len(out) == MAX_FILES:
                break
    return out


async def preread(parts: TurnParts, turn: TurnState) -> None:
    conversation = parts.conversation
    messages = conversation.messages
    request = conversation.turn_request()
    if not parts.profile.preread or "read_file" not in parts.registry.names or request is None:
        return
    text = text_of(request)
    turn.change = change = change_request(text)
    if not _TOKEN.search(text) or (_RUN.search(text) and change is None):
        return
    workspace = await parts.views.workspace_files()
    files = named_files(text, workspace)
    targets = files
    if change is not None and change.targets:  # a change request: its targets and the files it must satisfy
        targets = named_files(" ".join(change.targets), workspace)
        files = targets + [f for f in named_files(" ".join(change.context), workspace) if f not in targets]
    if not files:
        return
    if change is not None:
        turn.change_targets = tuple(targets)
    with contextlib.suppress(OutsideWorkspace):  # a listed symlink out: nothing to wait for
        turn.named_files = tuple(resolve_in_workspace(conversation.root, f) for f in targets)
    turn.changes_only = len(set(_TOKEN.findall(text))) == len(files) and not _CREATE.search(text)
    calls: list[ToolCall] = [{"id": f"preread_{i}", "type": "function",
              "function": {"name": "read_file", "arguments": json.dumps({"path": f})}} for i, f in enumerate(files)]
    message: Message = conversation.call_ids.assign(
        {"role": "assistant", "content": "", "tool_calls": calls, "meta": {"preread": True}}, messages)
    prepared = prepare_calls(message.get("tool_calls") or [], parts.registry, truncated=False)
    messages.append({**message, "tool_calls": [p.call for p in prepared]})
    named = await announce(parts, prepared)
    await run_calls(parts, turn, prepared, named)
