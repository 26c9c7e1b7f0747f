"""Settings precedence: init options > workspace .agentls.toml > user config > environment; bad values name
the key and the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.config import ConfigError, load_settings


@pytest.fixture
def layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A workspace and a user config file (``AGENTLS_CONFIG``); the environment is cleared of AGENTLS_*."""
    for name in list(__import__("os").environ):
        if name.startswith("AGENTLS_"):
            monkeypatch.delenv(name)
    ws = tmp_path / "ws"
    ws.mkdir()
    user = tmp_path / "user-config.toml"
    monkeypatch.setenv("AGENTLS_CONFIG", str(user))
    return ws, user


def test_each_layer_overrides_the_ones_below(layers: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, user = layers
    monkeypatch.setenv("AGENTLS_MODEL", "env-model")
    monkeypatch.setenv("AGENTLS_MAX_ITERATIONS", "11")
    monkeypatch.setenv("AGENTLS_APPROVAL", "yolo")
    monkeypatch.setenv("AGENTLS_AUX_MODEL", "env-aux")
    assert load_settings(ws).model == "env-model"
    user.write_text('model = "user-model"\nmaxIterations = 22\napproval = "auto-edit"\n')
    s = load_settings(ws)
    assert (s.model, s.max_iterations, s.approval, s.aux_model) == ("user-model", 22, "auto-edit", "env-aux")
    (ws / ".agentls.toml").write_text('model = "ws-model"\nmax_iterations = 33\n')
    s = load_settings(ws)
    assert (s.model, s.max_iterations, s.approval, s.aux_model) == ("ws-model", 33, "auto-edit", "env-aux")
    s = load_settings(ws, {"model": "init-model", "maxIterations": None})
    assert (s.model, s.max_iterations, s.approval) == ("init-model", 33, "auto-edit")
    assert s.sources["model"] == "initializationOptions"
    assert s.sources["max_iterations"] == str(ws / ".agentls.toml")
    assert s.sources["approval"] == str(user)
    assert s.sources["aux_model"] == "environment"


def test_defaults_when_nothing_is_set(layers: tuple[Path, Path]) -> None:
    ws, _ = layers
    s = load_settings(ws)
    assert s.model is None and s.max_iterations == 90 and s.approval == "ask" and s.stream is True


def test_agentls_section_is_read(layers: tuple[Path, Path]) -> None:
    ws, user = layers
    user.write_text('[agentls]\nmodel = "sectioned"\nfallbackModels = ["b", "c"]\n')
    s = load_settings(ws)
    assert s.model == "sectioned" and tuple(s.fallback_models) == ("b", "c")


@pytest.mark.parametrize(("body", "key"), [
    ('maxIterations = "lots"\n', "max"), ('approval = "sometimes"\n', "approval"),
    ("stream = 3\n", "stream"), ('baseUrl = "ftp://x"\n', "base"), ("compressionThreshold = 2.0\n", "compression"),
    ('nonsenseSetting = 1\n', "nonsense"),
])
@pytest.mark.parametrize("where", ["workspace", "user"])
def test_bad_value_names_the_key_and_the_file(layers: tuple[Path, Path], body: str, key: str, where: str) -> None:
    ws, user = layers
    path = ws / ".agentls.toml" if where == "workspace" else user
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_settings(ws)
    message = str(info.value)
    assert str(path) in message, message
    assert key.lower() in message.lower().replace("_", ""), message


def test_broken_toml_names_the_file(layers: tuple[Path, Path]) -> None:
    ws, _ = layers
    (ws / ".agentls.toml").write_text("model = = nope\n")
    with pytest.raises(ConfigError) as info:
        load_settings(ws)
    assert str(ws / ".agentls.toml") in str(info.value)


def test_bad_environment_value_names_the_variable_source(layers: tuple[Path, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ws, _ = layers
    monkeypatch.setenv("AGENTLS_MAX_ITERATIONS", "many")
    with pytest.raises(ConfigError) as info:
        load_settings(ws)
    assert "AGENTLS_MAX_ITERATIONS" in str(info.value) and "environment" in str(info.value)


def test_bad_init_option_names_the_key(layers: tuple[Path, Path]) -> None:
    ws, _ = layers
    with pytest.raises(ConfigError) as info:
        load_settings(ws, {"approval": "whenever"})
    assert "approval" in str(info.value) and "initializationOptions" in str(info.value)


def test_higher_layer_fixes_a_lower_bad_value_only_if_valid(layers: tuple[Path, Path]) -> None:
    """A value is checked where it is set: a bad user-config value is reported even if the workspace
    overrides it (the user must learn their file is broken)."""
    ws, user = layers
    user.write_text('approval = "bogus"\n')
    (ws / ".agentls.toml").write_text('approval = "yolo"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(ws)
    assert str(user) in str(info.value)
