"""docs/protocol.md matches the server: its examples parse, and each agent/* example request is
accepted and answered with exactly the documented keys."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentls.agent.scripted import ScriptedServer, call, text, tools
from agentls.agent.version import __version__
from agentls.server.lsp.capabilities import METHODS, initialize_result

from .conftest import ROOT, initialize, request, streamed_text, until
from .editor import Editor

DOC = ROOT / "docs" / "protocol.md"
BLOCK = re.compile(r"```json([^\n]*)\n(.*?)```", re.DOTALL)


def examples() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for label, body in BLOCK.findall(DOC.read_text()):
        data = json.loads(body)  # every JSON block of the page parses
        if label.strip():
            found[label.strip()] = data
    return found


def test_every_method_has_a_request_and_a_response_example() -> None:
    docs = examples()
    for method in METHODS:
        assert docs[f"{method} request"]["method"] == method
        assert "result" in docs[f"{method} response"]
    documented = docs["initialize response"]["result"]
    assert documented["capabilities"] == initialize_result(__version__)["capabilities"]


def _substitute(value: Any, replacements: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: _substitute(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, replacements) for v in value]
    return value


async def test_documented_requests_get_the_documented_result_keys(editor: Editor, srv: ScriptedServer,
                                                                  workspace: Path) -> None:
    docs = examples()
    await initialize(editor, srv, workspace)
    (workspace / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    replacements = {"/home/me/proj": str(workspace)}

    async def check(method: str) -> Any:
        params = _substitute(docs[f"{method} request"]["params"], replacements)
        result = await request(editor, method, params)
        documented = docs[f"{method} response"]["result"]
        assert set(result) == set(documented), (method, result, documented)
        return result

    session = (await check("agent/newSession"))["sessionId"]
    replacements["c82ebeae1a244565a67b6cb4ec34fdff"] = session
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "hi"})),
             text("Done: greet says hi."))
    await check("agent/turn")
    srv.push(text("bonjour"))
    await check("agent/steer")  # between turns: it starts one
    await until(lambda: "bonjour" in streamed_text(editor, session), what="the steered turn")
    await check("agent/interrupt")
    for i in range(2):
        srv.push(text(f"answer {i} " + "words " * 40))
        await request(editor, "agent/turn", {"sessionId": session, "prompt": f"question {i} " + "more " * 40})
    srv.push(text("GOAL: answer questions. DONE: three answers."))
    await check("agent/compress")
    listed = await check("agent/listSessions")
    assert set(listed["sessions"][0]) == {"sessionId", "title", "cwd", "updatedAt"}
    loaded = await check("agent/loadSession")
    assert loaded["messages"][0]["role"] == "user"
    assert (await check("agent/undo"))["restoredFiles"] == ["app.py"]
    assert await check("agent/listMcpServers") == {"servers": [], "problems": []}  # none configured here
    forked = await check("agent/forkSession")
    replacements["5f0c1e8a9b7d4c2e8f6a1b3c5d7e9f01"] = forked["sessionId"]
    srv.push(tools(call("read_file", {"path": "app.py"}),
                   call("edit_file", {"path": "app.py", "old_string": "hello", "new_string": "hi"})), text("again"))
    await request(editor, "agent/turn", {"sessionId": session, "prompt": "say hi again"})
    rewound = await check("agent/rewind")
    assert rewound["files"][0]["path"] == "app.py" and "hello" in (workspace / "app.py").read_text()
    assert await check("agent/setMode") == {"mode": "plan"}
    assert (await check("agent/deleteSession"))["deleted"] == [forked["sessionId"]]
    assert [c["name"] for c in (await check("agent/listCommands"))["commands"]] == ["memory"]
