"""Every source of MCP servers parsed into one ``ServerSpec``; names, schemas and prompt arguments."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentls.agent.config import load_settings
from agentls.agent.mcp import naming, schema
from agentls.agent.mcp.build import session_specs
from agentls.agent.mcp.mentions import MENTION
from agentls.agent.mcp.prompts import PromptArgumentError, PromptCommand, parse_arguments
from agentls.agent.mcp.sources import configured
from agentls.agent.mcp.spec import parse_servers


def test_acp_entries_of_every_transport() -> None:
    specs, problems = parse_servers([
        {"name": "fs", "command": "/usr/bin/npx", "args": ["-y", "srv"], "env": [{"name": "K", "value": "v"}]},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "A", "value": "b"}]},
        {"type": "sse", "name": "old", "url": "https://example.invalid/sse", "headers": []},
    ], "session/new")
    assert problems == []
    fs, web, old = specs
    assert (fs.transport, fs.command, fs.args, fs.env) == ("stdio", "/usr/bin/npx", ("-y", "srv"), (("K", "v"),))
    assert (web.transport, web.url, web.headers) == ("http", "http://127.0.0.1:9/mcp", (("A", "b"),))
    assert (old.transport, old.url) == ("sse", "https://example.invalid/sse")


def test_bad_entries_are_problems_not_exceptions() -> None:
    specs, problems = parse_servers({
        "ok": {"command": "x"},
        "nocmd": {"args": ["a"]},
        "badurl": {"type": "http", "url": "ftp://x"},
        "badenv": {"command": "x", "env": {"K": ["list"]}},
        "badtype": {"type": "carrier-pigeon", "command": "x"},
        "badtimeout": {"command": "x", "startup_timeout_sec": -1},
        "off": {"command": "x", "enabled": False},
        "": {"command": "x"},
    }, "config.toml")
    assert [s.name for s in specs] == ["ok"]
    assert len(problems) == 6
    assert all(p.startswith("config.toml: ") and p.endswith("not started") for p in problems)
    assert any("'nocmd'" in p and "command" in p for p in problems)
    assert parse_servers("nonsense", "x")[1]  # not a list or object: one problem


def test_url_without_type_is_http_and_timeouts_and_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "s3cret")
    monkeypatch.delenv("MISSING", raising=False)
    specs, _ = parse_servers({"w": {"url": "http://h/${MISSING:-mcp}", "headers": {"Authorization": "Bearer ${TOKEN}"},
                                    "tool_timeout_sec": 5, "startup_timeout_sec": 7}}, ".mcp.json", expand_vars=True)
    (w,) = specs
    assert (w.transport, w.url, w.headers) == ("http", "http://h/mcp", (("Authorization", "Bearer s3cret"),))
    assert (w.call_timeout, w.start_timeout) == (5.0, 7.0)
    assert "s3cret" not in w.describe()
    raw, _ = parse_servers({"w": {"url": "http://h/${TOKEN}"}}, "session/new")  # editors' values stay literal
    assert raw[0].url == "http://h/${TOKEN}"


def _files(tmp_path: Path, trust: bool) -> tuple[Path, Path]:
    user = tmp_path / "config.toml"
    user.write_text(f"trust_workspace_config = {str(trust).lower()}\n\n[mcp_servers.time]\ncommand = \"uvx\"\n"
                    "args = [\"mcp-server-time\"]\n\n[mcp_servers.shared]\ncommand = \"from-user\"\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "shared": {"command": "from-mcp-json"}, "docs": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}))
    (ws / ".agentls.toml").write_text("approval = \"ask\"\n[mcp_servers.lint]\ncommand = \"lint-mcp\"\n")
    return user, ws


def test_workspace_files_count_only_when_trusted(tmp_path: Path) -> None:
    user, ws = _files(tmp_path, trust=False)
    specs, problems = configured(ws, user, trusted=False)
    assert [s.name for s in specs] == ["time", "shared"]
    assert specs[1].command == "from-user"
    (note,) = problems
    assert "untrusted" in note and "docs" in note and "lint" in note and "trust_workspace_config" in note

    specs, problems = configured(ws, user, trusted=True)
    assert problems == []
    by_name = {s.name: s for s in specs}
    assert set(by_name) == {"time", "shared", "docs", "lint"}
    assert by_name["shared"].command == "from-mcp-json"  # the project's file wins over the user's


def test_hostile_workspace_files_are_never_opened(tmp_path: Path) -> None:
    import os

    user = tmp_path / "config.toml"
    user.write_text("")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / ".mcp.json")  # opening a FIFO would block until a writer comes
    (ws / ".agentls.toml").write_text("x" * 2_000_000)
    specs, problems = configured(ws, user, trusted=True)
    assert specs == []
    assert any("not a regular file" in p for p in problems) and any(".agentls.toml" in p for p in problems)


def test_settings_ignore_the_mcp_tables_and_the_trust_rule_comes_from_the_user(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    user, ws = _files(tmp_path, trust=True)
    monkeypatch.setenv("AGENTLS_CONFIG", str(user))
    settings = load_settings(ws, {"mcpServers": {"x": {"command": "y"}}})
    assert settings.trust_workspace_config is True
    (ws / ".agentls.toml").write_text("trust_workspace_config = true\n[mcp_servers.evil]\ncommand = \"rm\"\n")
    user.write_text("")
    settings = load_settings(ws)
    assert settings.trust_workspace_config is False  # a workspace cannot trust itself
    specs, problems = session_specs(ws, trusted=settings.trust_workspace_config,
                                    layers=[([{"name": "ed", "command": "e", "args": [], "env": []}], "session/new")])
    assert [s.name for s in specs] == ["ed"] and "evil" in problems[0]
    assert specs[0].cwd == str(ws)  # stdio servers run in the workspace


def test_editor_servers_win_over_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user, ws = _files(tmp_path, trust=True)
    monkeypatch.setenv("AGENTLS_CONFIG", str(user))
    specs, _ = session_specs(ws, trusted=True, layers=[({"time": {"command": "init"}}, "initializationOptions"),
                                                       ([{"name": "time", "command": "ses", "args": [], "env": []}],
                                                        "session/new")])
    assert next(s for s in specs if s.name == "time").command == "ses"


@pytest.mark.parametrize(("server", "tool"), [
    ("time", "get_current_time"), ("my server", "do.it/now"), ("ü", "ä"), ("s" * 80, "t" * 80),
    ("a", "x" * 58), ("github", "create_or_update_file_in_a_repository_with_a_really_long_name"),
])
def test_tool_names_fit_every_provider(server: str, tool: str) -> None:
    name = naming.tool_name(server, tool)
    assert naming.VALID.match(name), name
    assert name.startswith("mcp__")
    assert name == naming.tool_name(server, tool)  # stable


def test_tool_names_never_collide() -> None:
    taken: set[str] = set()
    pairs = [("a.b", "t"), ("a_b", "t"), ("a b", "t"), ("x" * 70, "one"), ("x" * 70, "two"), ("s", "t" * 70),
             ("s", "t" * 71)]
    names = []
    for server, tool in pairs:
        name = naming.tool_name(server, tool, taken)
        taken.add(name)
        names.append(name)
        assert naming.VALID.match(name)
    assert len(set(names)) == len(pairs)
    assert names[0] == "mcp__a_b__t" and names[1] != names[0]
    assert naming.command_name("s", "review", {"review"}) == "s:review"


def test_schemas_are_normalized_only_where_providers_reject_them() -> None:
    fine = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert schema.normalize(fine) is fine
    assert schema.normalize({"type": "object"}) == {"type": "object", "properties": {}}
    assert schema.normalize(None) == {"type": "object", "properties": {}}
    alt = schema.normalize({"$schema": "http://json-schema.org/draft-07/schema#", "anyOf": [
        {"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string"}},
         "required": ["path", "mode"]},
        {"type": "object", "properties": {"url": {"type": "string"}, "mode": {"type": "string"}},
         "required": ["url", "mode"]}]})
    assert alt["type"] == "object" and set(alt["properties"]) == {"path", "url", "mode"}
    assert alt["required"] == ["mode"] and "anyOf" not in alt and "$schema" not in alt


def _command(*args: tuple[str, bool]) -> PromptCommand:
    prompt = SimpleNamespace(name="review", title=None, description="Review",
                             arguments=[SimpleNamespace(name=n, required=r, description=None) for n, r in args])
    return PromptCommand("review", "lab", prompt)


def test_prompt_arguments() -> None:
    one = _command(("topic", True))
    assert parse_arguments(one, "the parser, please") == {"topic": "the parser, please"}
    two = _command(("topic", True), ("depth", False))
    assert parse_arguments(two, "the parser") == {"topic": "the parser"}  # plain text: the one required argument
    assert parse_arguments(two, "parser depth=deep") == {"topic": "parser", "depth": "deep"}
    three = _command(("topic", True), ("depth", True))
    assert parse_arguments(three, "parser deep") == {"topic": "parser", "depth": "deep"}
    assert parse_arguments(two, "depth=long 'the parser'") == {"topic": "the parser", "depth": "long"}
    with pytest.raises(PromptArgumentError, match="needs topic"):
        parse_arguments(two, "")
    with pytest.raises(PromptArgumentError, match="too many"):
        parse_arguments(three, "a b c")
    assert parse_arguments(_command(), "ignored text") == {}


def test_permission_policy_per_tool_and_per_server() -> None:
    from agentls.agent.permissions import PermissionPolicy, options_for, remembered_key
    from agentls.agent.tool_runner import OPTIONS

    policy = PermissionPolicy("ask")
    assert policy.decide("other", "mcp:lab/echo", False) == "ask"
    assert policy.unattended("other", False) == "deny"
    assert PermissionPolicy("auto-edit").decide("other", "mcp:lab/echo", False) == "ask"  # not an edit
    assert PermissionPolicy("yolo").decide("other", "mcp:lab/echo", False) == "allow"
    ids = [o.option_id for o in options_for("mcp:lab/echo", False, OPTIONS)]
    assert ids == ["allow_once", "allow_always", "allow_always_server", "reject_once", "reject_always"]
    assert [o.option_id for o in options_for("mcp:lab/echo", True, OPTIONS)] == ["allow_once", "reject_once",
                                                                                 "reject_always"]
    assert [o.option_id for o in options_for("execute:ls", False, OPTIONS)] == ["allow_once", "allow_always", "reject_once",
                                                                      "reject_always"]
    policy.remember("mcp:lab/crash", "reject_always", False)
    policy.remember(remembered_key("mcp:lab/echo", "allow_always_server"), "allow_always", False)
    assert policy.decide("other", "mcp:lab/other", False) == "allow"  # every tool of lab
    assert policy.decide("other", "mcp:lab/crash", False) == "deny"  # a tool's own "always reject" wins
    assert policy.decide("other", "mcp:labx/echo", False) == "ask"  # another server
    assert policy.decide("execute", "execute:lab", False) == "ask"


def test_mention_syntax() -> None:
    found = [(m["server"], m["uri"]) for m in MENTION.finditer(
        "see @docs:file:///guide.md and (@lab:lab://notes/today), not me@mail.com:x or @x:nope")]
    assert found == [("docs", "file:///guide.md"), ("lab", "lab://notes/today")]
