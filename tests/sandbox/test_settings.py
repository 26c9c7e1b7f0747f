"""The sandbox settings: defaults, layers, bad values, and a workspace file that may tighten the sandbox but
never loosen it (even with trust_workspace_config). Yolo keeps the sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.agent.config import ConfigError, load_settings
from agentls.agent.resolve import agent_from_settings
from agentls.agent.sandbox.policy import DEFAULT_WRITABLE


@pytest.fixture
def layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    for name in list(os.environ):
        if name.startswith("AGENTLS_"):
            monkeypatch.delenv(name)
    ws = tmp_path / "ws"
    ws.mkdir()
    user = tmp_path / "user.toml"
    monkeypatch.setenv("AGENTLS_CONFIG", str(user))
    return ws, user


def test_on_by_default_network_off(layers: tuple[Path, Path]) -> None:
    s = load_settings(layers[0])
    assert (s.sandbox, s.sandbox_network, s.sandbox_writable) == ("auto", "off", DEFAULT_WRITABLE)


def test_each_layer_can_set_it(layers: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, user = layers
    monkeypatch.setenv("AGENTLS_SANDBOX", "strict")
    assert load_settings(ws).sandbox == "strict"
    user.write_text('sandbox = "off"\nsandboxNetwork = "on"\nsandbox_writable = ["~/.cache/pip"]\n')
    s = load_settings(ws)
    assert (s.sandbox, s.sandbox_network, s.sandbox_writable) == ("off", "on", ("~/.cache/pip",))
    s = load_settings(ws, {"sandbox": "auto", "sandboxNetwork": False})
    assert (s.sandbox, s.sandbox_network) == ("auto", "off")
    assert s.sources["sandbox"] == "initializationOptions"


@pytest.mark.parametrize(("body", "key"), [('sandbox = "sometimes"', "sandbox"),
                                           ('sandbox_network = "maybe"', "sandbox_network"),
                                           ("sandboxWritable = [1]", "sandboxWritable"),
                                           ("sandbox = true", "sandbox")])
def test_bad_values_name_the_key_and_file(layers: tuple[Path, Path], body: str, key: str) -> None:
    ws, user = layers
    user.write_text(body + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(ws)
    assert err.value.key == key and err.value.source == str(user)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_workspace_may_tighten_but_never_loosen(layers: tuple[Path, Path], trusted: bool) -> None:
    ws, user = layers
    user.write_text(f'sandbox = "auto"\nsandbox_network = "on"\nsandbox_writable = ["~/.npm", "~/.cache"]\n'
                    f"trust_workspace_config = {str(trusted).lower()}\n")
    (ws / ".agentls.toml").write_text('sandbox = "strict"\nsandboxNetwork = "off"\nsandbox_writable = ["~/.npm"]\n')
    s = load_settings(ws)
    assert (s.sandbox, s.sandbox_network, s.sandbox_writable) == ("strict", "off", ("~/.npm",))
    assert s.warnings == ()
    user.write_text(f'sandbox = "strict"\ntrust_workspace_config = {str(trusted).lower()}\n')
    (ws / ".agentls.toml").write_text('sandbox = "off"\nsandbox_network = "on"\nsandboxWritable = ["/", "~/.cache"]\n'
                                      'max_iterations = 7\n')
    s = load_settings(ws)
    assert (s.sandbox, s.sandbox_network, s.sandbox_writable) == ("strict", "off", DEFAULT_WRITABLE)
    assert s.max_iterations == 7  # the rest of the file still applies
    (warning,) = s.warnings
    assert "sandbox = 'off'" in warning and "sandbox_network = 'on'" in warning and "never loosen" in warning


def test_a_workspace_cannot_loosen_the_defaults_either(layers: tuple[Path, Path]) -> None:
    ws, _ = layers
    (ws / ".agentls.toml").write_text('sandbox = "auto"\nsandbox_network = true\n')
    s = load_settings(ws)
    assert (s.sandbox, s.sandbox_network) == ("auto", "off") and len(s.warnings) == 1


def test_yolo_keeps_the_sandbox(layers: tuple[Path, Path]) -> None:
    ws, _ = layers
    s = load_settings(ws, {"approval": "yolo", "model": "m", "baseUrl": "http://127.0.0.1:9"})
    agent = agent_from_settings(s, workspace=ws)
    assert agent.policy.mode == "yolo" and agent.sandbox.config.mode == "auto"
    off = agent_from_settings(load_settings(ws, {"approval": "yolo", "sandbox": "off", "model": "m",
                                                 "baseUrl": "http://127.0.0.1:9"}), workspace=ws)
    assert off.sandbox.config.mode == "off"
