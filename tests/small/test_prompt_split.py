"""A fast first answer in a never-seen workspace (agent/local/prompt.py ``split_system``, agent/local/slots.py):
the compact system prompt's static part goes first on the wire, the workspace's part after the tools, and a
saved slot of any workspace with the same static part is restored for a new one."""

from __future__ import annotations

import os
from pathlib import Path

from agentls.agent.local.prompt import STATIC_PART, compact_system_prompt, listed_files, split_system
from agentls.agent.local.slots import SlotFiles, prompt_key, two_system_messages
from agentls.agent.providers.base import ProviderRequest

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def _system(root: Path, context: str | None = None) -> str:
    return compact_system_prompt(root=root, root_context=context, extra=None, files=listed_files(root))


def test_the_static_part_is_the_same_in_every_workspace_and_names_none(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    (other / "main.rs").write_text("fn main() {}\n")
    one, two = split_system(_system(workspace)), split_system(_system(other, "Use tabs."))
    assert one is not None and two is not None
    assert one[0] == two[0] == STATIC_PART and "hello" not in STATIC_PART and "{" not in STATIC_PART.replace(
        '{"path"', "")
    assert one[1].startswith("The workspace is `hello`.") and "`hello/greet.py`" in one[1] and "greet.py" in one[1]
    assert "main.rs" in two[1] and "Use tabs." in two[1]
    assert one[0] + "\n\n" + one[1] == _system(workspace)  # the stored prompt is the two parts, unchanged


def test_a_prompt_that_is_not_the_compact_one_is_sent_as_it_is() -> None:
    assert split_system("You are a helpful assistant.\n\nThe workspace is `x`.") is None
    request = ProviderRequest(model="m", system="Be brief.", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
    assert two_system_messages(request) is request


def test_the_wire_gets_two_system_messages_and_the_same_object_each_step(workspace: Path) -> None:
    system = _system(workspace)
    messages = [{"role": "user", "content": "What does README.md say?"}]
    first = two_system_messages(ProviderRequest(model="m", system=system, messages=messages, tools=TOOLS))
    again = two_system_messages(ProviderRequest(model="m", system=system, messages=messages, tools=TOOLS))
    assert first.system == STATIC_PART and first.messages[1:] == messages
    assert first.messages[0] == {"role": "system", "content": system.split("\n\n", 1)[1]}
    assert first.messages[0] is again.messages[0]  # the encoded bytes are cached by identity between steps


def test_keys_share_the_static_part_and_a_new_workspace_restores_the_newest_sibling(workspace: Path,
                                                                                     tmp_path: Path) -> None:
    other = tmp_path / "w2" / "hello"
    other.mkdir(parents=True)
    (other / "notes.md").write_text("x\n")

    def key(root: Path, tools: list[dict[str, object]] = TOOLS) -> str:
        return prompt_key("model:ctx8192", ProviderRequest(model="m", system=_system(root), messages=[], tools=tools))

    mine, theirs = key(workspace), key(other)
    assert mine != theirs and mine.split("-")[0] == theirs.split("-")[0]
    assert key(workspace, []).split("-")[0] != mine.split("-")[0]  # other tools: another static key
    slots = SlotFiles(tmp_path / "slots")
    slots.directory.mkdir()
    assert slots._nearest(mine) is None
    older, newer = slots.directory / f"{theirs}.bin", slots.directory / f"{theirs.split('-')[0]}-{'0' * 24}.bin"
    older.write_bytes(b"x")
    newer.write_bytes(b"x")
    os.utime(older, (1, 1))
    (slots.directory / f"{'f' * 12}-{'1' * 24}.bin").write_bytes(b"x")  # another model or tool list
    assert slots._nearest(mine) == newer.name.removesuffix(".bin")
    (slots.directory / f"{mine}.bin").write_bytes(b"x")
    assert slots._nearest(mine) == mine  # its own file first
