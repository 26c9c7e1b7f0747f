"""Request assembly: the stored transcript as the model sees it for one call, built without deep copies."""

from __future__ import annotations

from . import plain_answer
from .parts import TurnParts
from .state import TurnState
from ..model_caller import Prompt
from .change_request import edits_since
from ..tools.guards import READ_FIRST
from ..tools.noop import NOTHING_TO_CHANGE
from ..types import Message


def _with_text(message: Message, extra: str) -> Message:
    copy: Message = dict(message)  # type: ignore[assignment]
    content = copy.get("content")
    if isinstance(content, list):
        copy["content"] = [*content, {"type": "text", "text": extra}]
    else:
        copy["content"] = f"{content or ''}\n\n{extra}" if content else extra
    return copy


def view(messages: list[Message], turn: TurnState, user_at: int | None, extra_user: str | None = None,
         extra_messages: list[Message] | None = None) -> list[Message]:
    """The messages to send: runtime context rides on a copy of this turn's user message (at ``user_at``,
    ``Conversation.turn_user``); an ephemeral instruction (nudge, grace, continuation) rides at the end. The
    stored transcript is untouched. The copy is made again when the message there is not the one it was
    made from (a compression rewrote the transcript)."""
    if turn.runtime_context and user_at is not None and 0 <= user_at < len(messages) \
            and messages[user_at].get("role") == "user":
        source = messages[user_at]
        if turn.user_copy is None or turn.user_copy[0] is not source:
            turn.user_copy = (source, _with_text(source, turn.runtime_context))
        messages = [*messages[:user_at], turn.user_copy[1], *messages[user_at + 1:]]
    if extra_messages:
        messages = [*messages, *extra_messages]
    if extra_user:
        if messages and messages[-1].get("role") == "user":
            messages = [*messages[:-1], _with_text(messages[-1], extra_user)]
        else:
            messages = [*messages, {"role": "user", "content": extra_user}]
    return messages


def tool_choice(parts: TurnParts, turn: TurnState, tools: bool) -> str | None:
    """"none" once the loop guard stopped tools; "required" (tool_mode json only) right after a change refused
    for want of a read (the refusal showed the file) or for breaking Python syntax, and for a small model
    after any failed edit (up to ``EDIT_RETRIES`` in a turn): it otherwise gives up, or claims the change,
    instead of sending a better one. For a small model (tool_mode json), "none" right after a landed edit
    once every file its request names (``TurnState.named_files``) has been changed."""
    if not tools:
        return None
    if turn.outcome.tools_stopped:
        return "none"
    messages = parts.conversation.messages
    last = messages[-1] if messages else None
    if focus(parts, turn):
        return "required"  # a change request: no answer before an edit (loop/change_request.py)
    if not parts.profile.json_tools or last is None or last.get("role") != "tool":
        return None
    if str(last.get("content", "")).startswith(NOTHING_TO_CHANGE):
        return "none"  # an honest no-op (tools/noop.py): the next step may only answer
    if answers_after_check(parts, turn):
        return "none"  # the agent ran the tests and made its repairs (loop/test_check.py): the model answers
    if str(last.get("content", "")).startswith(READ_FIRST):
        return "required"
    if not parts.profile.must_act or (failed := _edit_failed(last)) is None:
        return None
    if failed and sum(1 for m in messages[parts.conversation.turn_user or 0:] if _edit_failed(m)) <= EDIT_RETRIES:
        return "required"  # a small model gives up, or claims the change, right after a failed edit
    if not failed and turn.named_files and set(turn.named_files) <= turn.outcome.applied():
        return "none"  # every file the request names is changed: it otherwise goes on "improving" them
    return None


def answers_after_check(parts: TurnParts, turn: TurnState) -> bool:
    """The step after the agent's tests check (loop/test_check.py), with every named file changed: an answer."""
    messages = parts.conversation.messages
    return bool(parts.profile.json_tools and turn.tests.runs and turn.named_files and messages and
                messages[-1].get("role") == "tool" and set(turn.named_files) <= turn.outcome.applied() and
                _checked_last(messages, parts.conversation.turn_user or 0))


def tests_note(turn: TurnState) -> str | None:
    """What the answer after the check is told of it (not kept): a 1.5B model otherwise wrote "the tests now
    pass" over a run that failed, or pasted the agent's repair request as its answer. None when the last run's
    output said nothing."""
    test, target = turn.target_tests or "the tests", ", ".join(turn.change_targets)
    summary = turn.tests.failing_summary()
    if summary is None and not turn.tests.passed:
        return None
    if summary is None:
        return f"[agentls ran {test}: the tests pass. Answer the user: say briefly what you changed in {target}.]"
    return (f"[agentls ran {test}: the tests still fail ({summary}). Answer the user: say briefly what you "
            f"changed in {target}, and that these tests still fail. Do not say that they pass.]")


def _checked_last(messages: list[Message], start: int) -> bool:
    """The turn's last agent-made step was the tests check or its repair (not a model's edit since)."""
    for m in reversed(messages[start:]):
        meta = m.get("meta") or {}
        if m.get("role") == "assistant" and m.get("tool_calls"):
            return bool(meta.get("test_check") or meta.get("test_repair") or meta.get("test_restore"))
    return False


EDIT_RETRIES = 3  # failed edits in a turn after which a small model may answer instead of trying again


def _edit_failed(message: Message) -> bool | None:
    """For an edit's result: whether it failed; None for any other message."""
    if message.get("role") != "tool" or message.get("name") not in ("edit_file", "write_file"):
        return None
    return bool((message.get("meta") or {}).get("error"))


def focus(parts: TurnParts, turn: TurnState) -> tuple[str, ...]:
    """A small model's change request whose targets exist, while none of them has been changed and its failed
    edits are at most ``EDIT_RETRIES``: the targets (the step may only be an edit of one of them)."""
    if not turn.change_targets or not parts.profile.must_act or turn.outcome.tools_stopped:
        return ()
    if set(turn.named_files) & turn.outcome.applied():
        return ()
    messages = parts.conversation.messages
    last = messages[-1] if messages else None
    if last is not None and str(last.get("content", "")).startswith(NOTHING_TO_CHANGE):
        return ()
    _, failed = edits_since(messages, parts.conversation.turn_user or 0)
    return turn.change_targets if failed <= EDIT_RETRIES else ()


def held_back(parts: TurnParts, turn: TurnState) -> tuple[str, ...]:
    """A small model's request that names only existing files and asks to create nothing: write_file is left
    out of the grammar (it otherwise "rewrites" a named file with junk, a wasted step at best). While a change
    request has its ``focus``, every tool but edit_file is."""
    if focus(parts, turn) and parts.profile.json_tools:
        return tuple(n for n in parts.registry.names if n != "edit_file")
    return ("write_file",) if parts.profile.must_act and turn.changes_only else ()


def prompt(parts: TurnParts, turn: TurnState, *, tools: bool = True, extra_user: str | None = None,
           extra_messages: list[Message] | None = None, paths: list[str] | None = None,
           temperature: float | None = None) -> Prompt:
    conversation = parts.conversation
    if tools and extra_user is None and not extra_messages and plain_answer.is_plain(parts, turn):
        return plain_answer.prompt(parts, turn)  # the answer after the agent's own edits, asked plainly
    if tools and parts.profile.json_tools and (targets := focus(parts, turn)):
        paths = list(targets)  # the grammar admits only an edit of a target
    if tools and extra_user is None and answers_after_check(parts, turn):
        extra_user = tests_note(turn)
    return Prompt(system=conversation.system_prompt or "",
                  messages=conversation.call_ids.for_provider(
                      view(conversation.messages, turn, conversation.turn_user, extra_user, extra_messages),
                      conversation.messages),
                  tools=parts.views.schemas() if tools else (), tool_choice=tool_choice(parts, turn, tools),
                  paths=paths, path_tools=parts.views.path_tools if paths else (), temperature=temperature,
                  held_back=held_back(parts, turn))
