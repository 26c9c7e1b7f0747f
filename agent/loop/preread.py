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

A change request (loop/change_request.py) also gets the tests of each file it changes when the workspace
has them (``acronym_test.py``, ``test_acronym.py``, ``tests/test_acronym.py``, ``acronym.test.ts``...):
told to implement a stub "so that it satisfies INSTRUCTIONS.md", the model wrote the right logic and the
wrong exact strings the tests expect. A test file is read up to ``TEST_LINES`` lines, and only while the
pre-read stays under ``MAX_PREREAD_CHARS`` (a small model's context is 8,192 tokens, its reply included).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path, PurePosixPath

import anyio.to_thread

from .agent_round import agent_round, calls_of
from .change_request import change_request
from .parts import TurnParts
from .regular import regular_file
from .state import TurnState
from ..paths import OutsideWorkspace, resolve_in_workspace
from ..types import Message, ToolCall, text_of

MAX_FILES = 3
TEST_LINES = 150  # of a target's test file
MIN_TEST_LINES = 20  # fewer would show the imports and little else
MAX_PREREAD_CHARS = 16_000  # what the pre-read may bring in all (about 4,500 tokens), a test file included
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


def find_tests(target: str, files: list[str]) -> str | None:
    """The workspace's test file for ``target`` by the usual names, the one beside it first, else None."""
    path = PurePosixPath(target)
    stem, suffix = path.stem, path.suffix
    if not suffix or stem.startswith("test_") or stem.endswith(("_test", ".test", ".spec", "_spec")):
        return None
    names = {f"{stem}_test{suffix}", f"test_{stem}{suffix}", f"{stem}.test{suffix}", f"{stem}.spec{suffix}",
             f"{stem}_spec{suffix}", f"{stem}Test{suffix}"}
    found = [f for f in files if PurePosixPath(f).name in names]
    beside = [f for f in found if PurePosixPath(f).parent == path.parent]
    return (beside or found)[0] if found else None


def _size(root: Path, file: str) -> int:
    path = regular_file(root, file)
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _lines_within(root: Path, file: str, room: int) -> tuple[int, bool]:
    """How many of the file's first lines fit in ``room`` characters (``TEST_LINES`` at most; 0 when unreadable),
    and whether that is all of them."""
    path = regular_file(root, file)
    if path is None:
        return 0, False
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            used = count = 0
            for line in f:
                used += len(line) + 8  # read_file numbers each line
                if used > room or count == TEST_LINES:
                    return count, False
                count += 1
            return count, True
    except OSError:
        return 0, False


def _read_before(messages: list[Message]) -> set[str]:
    """The paths ``read_file`` was called on in ``messages`` (a test file read in an earlier turn stays there)."""
    seen: set[str] = set()
    for m in messages:
        for call in m.get("tool_calls") or []:
            if call["function"]["name"] == "read_file":
                with contextlib.suppress(ValueError, TypeError, AttributeError):
                    seen.add(str(json.loads(call["function"]["arguments"]).get("path", "")).removeprefix("./"))
    return seen


async def _with_tests(root: Path, files: list[str], targets: list[str], workspace: list[str],
                      messages: list[Message]) -> list[ToolCall]:
    """The pre-read's calls: ``files``, then the targets' test files while they fit (at most ``MAX_FILES``) and
    unless the conversation read them already."""
    args: list[dict[str, object]] = [{"path": f} for f in files]
    seen = _read_before(messages)
    tests = [t for t in dict.fromkeys(find_tests(f, workspace) for f in targets)
             if t is not None and t not in files and t not in seen]
    tests = tests[:max(0, MAX_FILES - len(files))]
    used = 0
    for f in files if tests else ():
        used += await anyio.to_thread.run_sync(_size, root, f)
    for test in tests:
        lines, whole = await anyio.to_thread.run_sync(_lines_within, root, test, MAX_PREREAD_CHARS - used)
        if not whole and lines < MIN_TEST_LINES:
            break
        args.append({"path": test} if whole else {"path": test, "limit": lines})
        used += await anyio.to_thread.run_sync(_size, root, test)
    return calls_of("read_file", args, "preread")


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
        turn.target_tests = find_tests(targets[0], workspace) if len(targets) == 1 else None
    with contextlib.suppress(OutsideWorkspace):  # a listed symlink out: nothing to wait for
        turn.named_files = tuple(resolve_in_workspace(conversation.root, f) for f in targets)
    turn.changes_only = len(set(_TOKEN.findall(text))) == len(files) and not _CREATE.search(text)
    calls: list[ToolCall] = await _with_tests(conversation.root, files, targets, workspace, messages) \
        if change is not None else calls_of("read_file", [{"path": f} for f in files], "preread")
    await agent_round(parts, turn, calls, {"preread": True})
