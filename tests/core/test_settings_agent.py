"""One ``Settings`` object is an agent's configuration (docs/architecture.md, "Settings"): keyword arguments
build it, ``evolve`` derives a child's from a parent's with every value checked, and a child agent is one line."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest

from agentls.agent import AIAgent
from agentls.agent.config import KEYWORD_DEFAULTS, PROGRAM_ONLY, SETTINGS, ConfigError, Settings
from agentls.agent.resolve import agent_from_settings
from agentls.agent.sandbox.policy import SandboxConfig
from agentls.agent.scripted import ScriptedServer, call, text, tools

from .conftest import AgentFactory


def test_keyword_arguments_build_the_settings_and_default_nothing_themselves(tmp_path: Path) -> None:
    agent = AIAgent(workspace=tmp_path)
    assert agent.settings == KEYWORD_DEFAULTS and agent.settings.titles == "prompt"
    built = AIAgent("m", "http://127.0.0.1:9/v1", "k", "anthropic", 7, ["other"], workspace=tmp_path,
                    max_retries=5, request_timeout=3.0, sandbox=SandboxConfig(mode="off", network=True),
                    trajectory_path=tmp_path / "t.jsonl")
    s = built.settings
    assert (s.model, s.base_url, s.api_key, s.provider, s.max_iterations, s.fallback_models) == \
        ("m", "http://127.0.0.1:9/v1", "k", "anthropic", 7, ("other",))
    assert (s.max_retries, s.request_timeout, s.sandbox, s.sandbox_network) == (5, 3.0, "off", "on")
    assert s.trajectory_path == str(tmp_path / "t.jsonl") and built.budget.limit == 7
    # A setting's default is its field's only: no parameter of AIAgent that names a setting has its own.
    names = {f.name for f in fields(Settings)}
    for param in inspect.signature(AIAgent).parameters.values():
        if param.name in names and param.name not in ("sandbox",):
            assert param.default is None, param.name


def test_settings_and_keyword_arguments_together_and_an_unknown_keyword(tmp_path: Path) -> None:
    base = Settings(model="m", max_retries=1)
    agent = AIAgent(settings=base, workspace=tmp_path, max_retries=4, system_message="Be brief.")
    assert agent.settings.max_retries == 4 and agent.settings.model == "m" and agent.settings.titles == "model"
    assert base.max_retries == 1  # frozen: the caller's settings are never changed
    with pytest.raises(TypeError, match="'max_retrys'"):
        AIAgent(workspace=tmp_path, max_retrys=4)


def test_the_key_is_never_shown_and_never_read_from_a_file() -> None:
    assert "secret" not in repr(Settings(api_key="secret"))
    assert not PROGRAM_ONLY & set(SETTINGS.fields)
    from agentls.agent.config import merge

    with pytest.raises(ConfigError, match="'apiKey'.*not a known setting"):
        merge(Settings(), {"apiKey": "sk-x"}, "config.toml")


def test_evolve_checks_each_value_and_names_key_and_layer() -> None:
    parent = Settings(model="m", max_iterations=50, api_key="k")
    child = parent.evolve(max_iterations=10, compressionThreshold=0.3, system_message="child")
    assert (child.max_iterations, child.compression_threshold, child.system_message) == (10, 0.3, "child")
    assert (child.model, child.api_key, parent.max_iterations) == ("m", "k", 50)
    assert child.sources["max_iterations"] == "evolve"
    with pytest.raises(ConfigError) as bad:
        parent.evolve(max_iterations=0)
    assert bad.value.key == "max_iterations" and bad.value.source == "evolve" and "from 1 to 10000" in str(bad.value)
    with pytest.raises(ConfigError, match="'max_iteration'.*did you mean"):
        parent.evolve(max_iteration=3)
    with pytest.raises(ConfigError, match="subagent: setting 'approval' must be one of"):
        parent.evolve(source="subagent", approval="always")
    assert parent.evolve() is parent and parent.evolve(context_window=None).context_window is None


def test_settings_resolved_for_an_agent_carry_the_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    agent = agent_from_settings(Settings(model="gpt-x"), workspace=tmp_path)
    assert (agent.settings.provider, agent.settings.model, agent.settings.api_key) == ("openai", "gpt-x", "from-env")
    assert agent.settings.titles == "model" and agent.profile.model_titles


async def test_a_child_agent_is_one_line_and_shares_endpoint_budget_and_host(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    parent = make_agent(max_iterations=20)
    parent.model = "picked"  # a client's model picker: the child follows it
    child = AIAgent(settings=parent.settings.evolve(max_iterations=3), host=parent.host, workspace=parent.root,
                    iteration_budget=parent.budget)
    try:
        srv.push(tools(call("read_file", {"path": "notes.txt"})), text("done"))
        result = await child.run_conversation("read notes.txt")
        assert result.final_response == "done"
        assert [r.model for r in srv.requests] == ["picked", "picked"]
        assert all(r.headers["authorization"] == "Bearer test-key" for r in srv.requests)
        assert parent.budget.used == 2 and child.budget is parent.budget
        assert child.settings.max_iterations == 3 and parent.settings.max_iterations == 20
        assert child.session_id != parent.session_id and child.host is parent.host
    finally:
        await child.close()


async def test_a_child_evolved_to_a_small_model_gets_the_small_profile(
        make_agent: AgentFactory, srv: ScriptedServer, workspace: Path) -> None:
    from agentls.agent.profile import GENERAL, SMALL

    parent = make_agent()
    child = AIAgent(settings=parent.settings.evolve(small_model=True), host=parent.host, workspace=parent.root)
    try:
        assert parent.profile == GENERAL and child.profile == SMALL
        assert parent.profile.delegate and not child.profile.delegate
        srv.push(text("hello"))
        await child.run_conversation("hi")
        (request,) = srv.requests
        assert request.body["messages"][0]["content"].startswith("You are agentls, a coding agent. You work in")
        shown = {t["function"]["name"]: t["function"]["description"] for t in request.body["tools"]}
        assert shown["read_file"] == "Read a file (numbered lines)." and "todo" not in shown
    finally:
        await child.close()


@pytest.mark.parametrize(("changes", "key", "problem"), [
    ({"max_iterations": float("nan")}, "max_iterations", "must be a whole number"),
    ({"request_timeout": float("inf")}, "request_timeout", "finite"),
    ({"context_window": 10 ** 400}, "context_window", "digit number"),
    ({"model": 123}, "model", "must be a string"),
    ({"base_url": "file:///etc/passwd"}, "base_url", "http(s) URL"),
    ({"sources": {"model": "forged"}}, "sources", "not a known setting"),
    ({"warnings": ()}, "warnings", "not a known setting"),
])
def test_evolve_refuses_what_a_confused_caller_or_model_might_pass(changes: dict[str, object], key: str,
                                                                   problem: str) -> None:
    parent = Settings(model="m")
    with pytest.raises(ConfigError) as bad:
        parent.evolve(**changes)
    assert bad.value.key == key and problem in str(bad.value)
    assert parent == Settings(model="m")  # nothing half-applied


def test_evolve_converts_as_a_file_would() -> None:
    child = Settings().evolve(fallback_models="a, b", stream="false", sandbox_network=True, maxTokens="300")
    assert (child.fallback_models, child.stream, child.sandbox_network, child.max_tokens) == (("a", "b"), False,
                                                                                             "on", 300)
