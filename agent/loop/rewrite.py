"""The model call behind a small model's ``edit_file {path, change}`` (agent/tools/described.py).

The tool's instruction goes to the model as the result of its own ``edit_file`` call, on the transcript as it
stands, with the same tools listed: the request shares its whole prefix with the call just made, so a local
model's prompt cache covers it and only the instruction is processed. The tools stay listed but the reply is
text (``tool_choice = "text"``: no grammar), not streamed to the user, and never stored: the transcript gets
the edit's real result instead.
"""

from __future__ import annotations

from dataclasses import replace

from . import request
from .focused import focused_prompt, shown_files
from .parts import TurnParts
from .save import save
from .state import TurnState
from ..model_caller import Prompt
from ..providers.errors import ProviderError
from ..tools.base import Rewrite, ToolFailure
from ..types import Message, ToolCall, text_of

REWRITE_TEMPERATURE = 0.0
NOT_RUN_YET = "(not run yet: this call runs after the edit_file call answered below)"


def _agent_made(messages: list[Message], call: ToolCall) -> bool:
    """``call`` is the agent's own first edit or test repair (loop/first_edit.py, loop/test_check.py)."""
    for m in reversed(messages):
        if m.get("role") == "assistant" and any(c["id"] == call["id"] for c in m.get("tool_calls") or []):
            meta = m.get("meta") or {}
            return bool(meta.get("first_edit") or meta.get("test_repair"))
    return False


def _not_run_yet(messages: list[Message], call: ToolCall) -> list[Message]:
    """Stand-in results for the calls of ``call``'s message that come after it: a request must answer every
    call of an assistant message (OpenAI's API refuses it otherwise), and they have not run yet."""
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if at is None:
        return []
    answered = {m.get("tool_call_id") for m in messages[at + 1:] if m.get("role") == "tool"}
    return [{"role": "tool", "tool_call_id": c["id"], "name": c["function"]["name"], "content": NOT_RUN_YET}
            for c in messages[at].get("tool_calls") or [] if c["id"] != call["id"] and c["id"] not in answered]


def rewriter(parts: TurnParts, turn: TurnState, call: ToolCall) -> Rewrite:
    own = _agent_made(parts.conversation.messages, call)

    async def rewrite(instruction: str, *, temperature: float | None = None) -> str:
        note: Message = {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"],
                         "content": instruction}
        extra = [*_not_run_yet(parts.conversation.messages, call), note]  # the instruction comes last
        heat = REWRITE_TEMPERATURE if temperature is None else temperature
        files = await shown_files(parts) if own else []

        def build() -> Prompt:
            if own:  # the agent's first edit or repair: the bare question (loop/focused.py)
                return focused_prompt(parts, instruction, heat, files)
            return replace(request.prompt(parts, turn, extra_messages=extra, temperature=heat), tool_choice="text")

        await save(parts, turn)  # before every provider call; a failing store does not end the turn
        try:
            response = await parts.caller.call(build, turn.calls, purpose="rewrite", stream_to_user=False)
        except ProviderError as exc:
            raise ToolFailure(f"this edit was not made: the model call that writes it failed: {exc}") from None
        return text_of(response.message)

    return rewrite
