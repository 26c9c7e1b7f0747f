"""For clients that can only run commands (Helix): ``workspace/executeCommand`` and ``@agent`` code actions.

- ``agent.turn|steer|interrupt|compress|newSession`` take one argument, the params object of the
  matching ``agent/*`` request. Without a ``sessionId`` they act on the workspace's inline session
  (``agent.interrupt`` without one stops every running turn; ``agent.newSession`` without an argument
  starts a fresh inline session). ``agent.turn`` also shows the answer with ``window/showMessage``; the
  others, for a client without ``agent/update`` (Helix ignores command results), show one status line
  saying what they did.
- A line containing ``@agent <instruction>`` offers the code action "agentls: <instruction>". Its
  command, ``agent.codeAction {uri, line, instruction}``, runs a turn in the inline session scoped to
  that file; edits arrive through ``workspace/applyEdit`` and the answer through ``showMessage``.
  When the turn completes, the server removes the ``@agent`` comment (the whole line when the comment
  is alone on it); when it does not complete, the comment stays so the user can retry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from . import lookup, methods, turns
from .capabilities import CODE_ACTION_KIND, COMMANDS
from .documents import path_of, split_lines
from .params import Params

if TYPE_CHECKING:
    from agentls.agent.host import Host
    from .server import AgentServer

MARKER = re.compile(r"@agent\b[:,]?\s+(?P<instruction>\S.*?)\s*(?:\*/|-->|#\}|%\}|-\})?\s*$")
LEADER = re.compile(r"(?:#|//+|--|;+|/\*+|<!--|%|\"|\{#|\{%|\{-)\s*$")
MAX_INLINE_CONTENT = 20_000
MAX_CODE_ACTION_BYTES = 4 * 1024 * 1024
SESSION_COMMANDS = {"agent.turn", "agent.steer", "agent.compress"}
NEEDS_ARGUMENT = {"agent.turn": "{prompt}", "agent.steer": "{text}", "agent.codeAction": "{uri, line, instruction}"}


def find_markers(text: str, first: int, last: int) -> list[tuple[int, str]]:
    """``(line, instruction)`` for each ``@agent`` line from ``first`` to ``last`` (0-based, inclusive)."""
    found = []
    for number, line in enumerate(split_lines(text)):
        if number < first:
            continue
        if number > last:
            break
        match = MARKER.search(line.rstrip("\r\n"))
        if match:
            found.append((number, match.group("instruction")))
    return found


def code_actions(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only
    if only and not any(CODE_ACTION_KIND == k or CODE_ACTION_KIND.startswith(f"{k}.") for k in only):
        return []
    path = path_of(params.text_document.uri)
    if path is None:
        return []
    text = ls.documents.current(path)
    if text is None:  # a synchronous handler: a FIFO or a huge file must not stall the server
        from agentls.agent.fileio import decode_text, read_small

        try:
            text = decode_text(read_small(path, MAX_CODE_ACTION_BYTES))
        except (OSError, UnicodeDecodeError):
            return []
    actions = []
    for line, instruction in find_markers(text, params.range.start.line, params.range.end.line):
        title = f"agentls: {instruction}"
        title = title if len(title) <= 80 else title[:79] + "…"
        argument = {"uri": params.text_document.uri, "line": line, "instruction": instruction}
        actions.append(types.CodeAction(title=title, kind=CODE_ACTION_KIND, command=types.Command(
            title=title, command="agent.codeAction", arguments=[argument])))
    return actions


def _argument(command: str, arguments: Any) -> Any:
    if arguments is None or arguments == []:
        if command in NEEDS_ARGUMENT:
            raise JsonRpcInvalidParams(f"{command} needs an argument {NEEDS_ARGUMENT[command]}; from an editor that "
                                       "cannot pass one, write an @agent <instruction> comment and run its code "
                                       "action")
        return {}
    if isinstance(arguments, list) and len(arguments) == 1:
        return arguments[0] if arguments[0] is not None else {}
    raise JsonRpcInvalidParams(f"{command}: expects one argument, an object with the request's params")


async def execute(ls: AgentServer, raw: Any) -> Any:
    """Run a command. Its errors are answered as usual and, for a client without ``agent/update``
    (Helix shows nothing of a command's error either), also shown as a status line."""
    try:
        return await _execute(ls, raw)
    except JsonRpcException as exc:
        if not ls.features.updates:
            ls.show(types.MessageType.Error, f"agentls: {exc.message}")
        raise


async def _execute(ls: AgentServer, raw: Any) -> Any:
    p = Params("workspace/executeCommand", raw)
    command = p.string("command", limit=200)
    if command not in COMMANDS:
        raise JsonRpcInvalidParams(f"workspace/executeCommand: unknown command {command!r}; "
                                   f"the commands are {', '.join(COMMANDS)}")
    arg = _argument(command, p.raw.get("arguments"))
    if not isinstance(arg, dict):
        raise JsonRpcInvalidParams(f"{command}: the argument must be an object, not {type(arg).__name__}")
    if command == "agent.codeAction":
        return await run_code_action(ls, arg)
    if command == "agent.turn":  # its answer is shown whatever the client
        return await methods.turn(ls, await _with_session(ls, command, arg), command, show_answer=True)
    result = await _run(ls, command, arg)
    if not ls.features.updates:  # Helix ignores executeCommand results: say what happened
        ls.show(types.MessageType.Info, feedback(command, arg, result))
    return result


async def _with_session(ls: AgentServer, command: str, arg: dict[str, Any]) -> dict[str, Any]:
    if command in SESSION_COMMANDS and arg.get("sessionId") is None:
        return {**arg, "sessionId": (await lookup.inline(ls)).session_id}
    return arg


async def _run(ls: AgentServer, command: str, arg: dict[str, Any]) -> dict[str, Any]:
    if command == "agent.newSession":
        result = await methods.new_session(ls, arg, command)
        if not arg:
            ls.inline[ls.root] = result["sessionId"]
        return result
    if command == "agent.interrupt" and arg.get("sessionId") is None:
        return {"interrupted": lookup.interrupt_all(ls)}
    arg = await _with_session(ls, command, arg)
    if command == "agent.steer":
        return await methods.steer(ls, arg, command)
    if command == "agent.interrupt":
        return await methods.interrupt(ls, arg, command)
    return await methods.compress(ls, arg, command)


def feedback(command: str, arg: dict[str, Any], result: dict[str, Any]) -> str:
    """One status line saying what a command did."""
    if command == "agent.newSession":
        return f"agentls: new session {result['sessionId'][:8]}"
    if command == "agent.steer":
        return ("agentls: the running turn takes your message next" if result["outcome"] == "queued" else
                "agentls: no turn was running, so your message started one")
    if command == "agent.interrupt":
        return "agentls: interrupted" if result["interrupted"] else "agentls: no turn was running"
    before, after = result["messagesBefore"], result["messagesAfter"]
    tokens = f"~{result['tokensBefore']:,} → ~{result['tokensAfter']:,} tokens"
    if arg.get("preview") is True:
        return f"agentls: compacting would take {before} → {after} messages, {tokens}"
    if before == after:
        return f"agentls: nothing to compact ({before} messages, {tokens})"
    return f"agentls: context compacted: {before} → {after} messages, {tokens}"


def _scope_root(ls: AgentServer, path: Path) -> Path:
    folders = [f for f in (path_of(uri) for uri in ls.workspace.folders) if f is not None]
    for root in sorted([*folders, ls.root], key=lambda r: len(r.parts), reverse=True):
        if root == path or root in path.parents:
            return root
    return path.parent


async def run_code_action(ls: AgentServer, arg: dict[str, Any]) -> dict[str, Any]:
    where = "agent.codeAction"
    p = Params(where, arg)
    uri = p.string("uri", limit=4096)
    line = p.integer("line", minimum=0)
    instruction = p.string("instruction")
    path = path_of(uri)
    if path is None or line is None:
        raise p.invalid("'uri' must be a file:// URI and 'line' a line number")
    root = _scope_root(ls, path)
    session = await lookup.inline(ls, root)
    assert session.agent is not None
    agent = session.agent
    rel = path.relative_to(root).as_posix() if root in path.parents else str(path)
    try:
        content: str | None = await agent.host.read_text(path)
    except (OSError, UnicodeDecodeError):
        content = None
    context = (f"The user asked for this from an `@agent` comment in {rel} at line {line + 1}. The request is "
               f"about that file: change it with edit_file. Do not edit the `@agent` comment itself; agentls "
               f"removes it when you are done.")
    if content is not None and len(content) <= MAX_INLINE_CONTENT:
        context += f"\n\nThe current text of {rel} (the editor's buffer):\n```\n{content}\n```"
    result = await turns.run(ls, session, instruction, runtime_context=context, show_answer=True, token=p.token())
    if result["completed"]:
        await remove_marker(agent.host, path, line, instruction)
    return result


async def remove_marker(host: Host, path: Path, line: int, instruction: str) -> None:
    """Remove the ``@agent`` comment (nearest to where it was) through the host, i.e. ``applyEdit``."""
    try:
        text = await host.read_text(path)
    except (OSError, UnicodeDecodeError):
        return
    lines = split_lines(text)
    candidates = [n for n, instr in find_markers(text, 0, len(lines)) if instr == instruction]
    if not candidates:
        return
    number = min(candidates, key=lambda n: abs(n - line))
    old = lines[number]
    body = old.rstrip("\r\n")
    eol = old[len(body):]
    match = MARKER.search(body)
    assert match is not None
    leader = LEADER.search(body[:match.start()])
    cut = leader.start() if leader else match.start()
    lines[number] = "" if not body[:cut].strip() else body[:cut].rstrip() + eol
    await host.write_text(path, "".join(lines), previous=text)
