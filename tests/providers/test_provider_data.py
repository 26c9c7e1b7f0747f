"""provider_data lives with its message: persisted, kept by compression and by transcript repair."""

from __future__ import annotations

from pathlib import Path

from agentls.agent.sessions.schema import decode_message, encode_message
from agentls.agent.transcript import repair
from agentls.agent.types import INTERNAL_KEYS, Message

DATA = {"wire": "anthropic", "blocks": [{"type": "thinking", "thinking": "", "signature": "sig"},
                                        {"type": "redacted_thinking", "data": "opaque"}, {"type": "text"}]}


def test_provider_data_is_private() -> None:
    assert "provider_data" in INTERNAL_KEYS


def test_provider_data_is_persisted_as_it_was(tmp_path: Path) -> None:
    message: Message = {"role": "assistant", "content": "hi", "reasoning": "r", "provider_data": DATA}
    row = encode_message(message, "s", 1, "now")
    from agentls.agent.sessions.schema import MESSAGE_COLUMNS, SELECT_MESSAGE

    cols = dict(zip(MESSAGE_COLUMNS, row, strict=True))
    wanted = SELECT_MESSAGE.split("SELECT ")[1].split(" FROM")[0].replace(" ", "").split(",")
    assert decode_message([cols[c] for c in wanted]) == message


def test_repair_keeps_provider_data_when_it_merges_two_assistant_messages() -> None:
    fixed = repair([{"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a", "provider_data": DATA},
                    {"role": "assistant", "content": "b"}])
    assert fixed[-1]["provider_data"] == DATA and fixed[-1]["content"] == "a\n\nb"


def test_repair_keeps_provider_data_of_a_tool_call_message() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    fixed = repair([{"role": "user", "content": "q"},
                    {"role": "assistant", "content": None, "tool_calls": [call], "provider_data": DATA}])
    assert fixed[1]["provider_data"] == DATA and fixed[2]["role"] == "tool"


async def test_compression_keeps_provider_data_on_the_messages_it_keeps() -> None:
    from agentls.agent.context.compress import Compressor

    msgs: list[Message] = []
    for i in range(8):
        msgs.append({"role": "user", "content": f"question {i} " + "x" * 2000})
        msgs.append({"role": "assistant", "content": f"answer {i}", "provider_data": {**DATA, "n": i}})

    async def summarize(prompt: str) -> str:
        return "## Goal\nship it"

    result = await Compressor(8_000).compress(msgs, summarize=summarize, keep_last=2)
    kept = [m for m in result.messages if m.get("role") == "assistant"]
    assert kept and all(m["provider_data"] == {**DATA, "n": int(str(m["content"]).split()[-1])} for m in kept)
