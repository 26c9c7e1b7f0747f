"""An MCP tool's image reaches the model where the provider takes images in tool results (Anthropic), and
as a note elsewhere (OpenAI chat completions); the editor sees it either way. Real agent, real lab server,
the scripted provider in strict mode (it refuses what the real APIs refuse)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.agent import AIAgent
from agentls.agent.mcp.manager import McpManager
from agentls.agent.mcp.spec import parse_servers
from agentls.agent.scripted import ScriptedServer, call, text, tools
from tests.mcp_client.helpers import lab


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
async def test_images_reach_the_model_that_takes_them(srv: ScriptedServer, tmp_path: Path, wire: str) -> None:
    updates: list[dict[str, Any]] = []
    url = srv.anthropic_url if wire == "anthropic" else srv.openai_url
    agent = AIAgent(model="scripted", provider=wire, base_url=url, api_key="k", workspace=tmp_path, approval="yolo",
                    titles="prompt", on_update=updates.append)
    specs, _ = parse_servers({"lab": lab()}, "test")
    manager = McpManager(specs, agent.registry)
    manager.start()
    try:
        async with agent:
            await manager.wait_ready()
            srv.push(tools(call("mcp__lab__picture", {})), text("a pixel"))
            result = await agent.run_conversation("show me")
    finally:
        await manager.aclose()
    assert result.final_response == "a pixel"
    second = srv.requests[1]
    assert second.rejected is None
    if wire == "anthropic":
        (block,) = [b for m in second.body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_result"]
        kinds = [part["type"] for part in block["content"]]
        assert kinds == ["text", "image"]
        assert block["content"][1]["source"]["media_type"] == "image/png"
        assert "here is a pixel" in block["content"][0]["text"]
    else:
        (tool,) = [m for m in second.body["messages"] if m["role"] == "tool"]
        assert isinstance(tool["content"], str) and "[image: image/png" in tool["content"]
    shown = [c["content"] for u in updates if u.get("sessionUpdate") == "tool_call_update"
             for c in u.get("content") or [] if c.get("type") == "content"]
    assert any(c.get("type") == "image" for c in shown)
