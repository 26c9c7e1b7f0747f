"""Every number a user can set is finite and in range, whichever layer it comes from (a TOML file, the
environment, ``initializationOptions``): a bad one is a ``ConfigError`` naming the key as written, the
source and the default, never another exception. With ``errors=[...]`` every valid key still applies."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.config import SETTINGS, ConfigError, Settings, load_settings, merge
from agentls.agent.config_values import camel

HUGE = 10 ** 400  # float(HUGE) raises OverflowError
NUMERIC = [name for name, kind in SETTINGS.types.items() if kind in (int, float, int | None, float | None)]

# (label, value in Python / JSON, the same in TOML, the same as an environment string)
BAD = [
    ("nan", math.nan, "nan", "nan"),
    ("inf", math.inf, "inf", "inf"),
    ("-inf", -math.inf, "-inf", "-inf"),
    ("huge", HUGE, "9" * 400, "9" * 400),
    ("huge float", 1e300, "1e300", "1e400"),
    ("negative", -1, "-1", "-1"),
    ("very negative", -HUGE, "-" + "9" * 400, "-" + "9" * 400),
]
OTHER_BAD = [True, "lots", "", [1], {"a": 1}]  # wrong types, as a confused client sends them


@pytest.fixture
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace; no user config; no AGENTLS_* variable."""
    for name in list(os.environ):
        if name.startswith("AGENTLS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AGENTLS_CONFIG", str(tmp_path / "user.toml"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_every_numeric_setting_is_covered() -> None:
    assert set(NUMERIC) == {"max_iterations", "context_window", "compression_threshold", "request_timeout",
                            "max_retries", "max_tokens", "temperature", "thinking_budget", "terminal_timeout",
                            "tool_output_limit", "delegate_concurrency", "delegate_depth", "local_keep_alive"}


def _check_error(error: ConfigError, key: str, source: str, name: str) -> None:
    message = str(error)
    assert error.key == key and error.source == source, (error.key, error.source)
    assert f"{source}: setting {key!r}" in message, message
    default = getattr(Settings(), name)
    assert f"(default: {'not set' if default is None else default})" in message, message
    assert "\n" not in message and len(message) < 300, message  # one line, no 400-digit echo


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize(("label", "value", "toml", "env"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_number_in_a_toml_file_names_key_file_and_default(clean: Path, name: str, label: str, value: Any,
                                                                toml: str, env: str) -> None:
    key = camel(name)
    (clean / ".agentls.toml").write_text(f"{key} = {toml}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(clean)
    _check_error(info.value, key, str(clean / ".agentls.toml"), name)


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize(("label", "value", "toml", "env"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_number_in_the_environment_names_the_variable(clean: Path, name: str, label: str, value: Any,
                                                           toml: str, env: str) -> None:
    variable = f"AGENTLS_{name.upper()}"
    with pytest.raises(ConfigError) as info:
        load_settings(clean, environ={variable: env})
    _check_error(info.value, variable, "environment", name)


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("value", [b[1] for b in BAD] + OTHER_BAD, ids=[b[0] for b in BAD] +
                         ["true", "word", "empty", "list", "object"])
@pytest.mark.parametrize("spelling", ["camel", "snake"])
def test_a_bad_init_option_names_the_key_as_written(clean: Path, name: str, value: Any, spelling: str) -> None:
    key = camel(name) if spelling == "camel" else name
    with pytest.raises(ConfigError) as info:
        load_settings(clean, {key: value})
    _check_error(info.value, key, "initializationOptions", name)


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("max_iterations", "12", 12), ("max_iterations", 12.0, 12), ("max_iterations", "1e3", 1000),
    ("request_timeout", "2.5", 2.5), ("request_timeout", 86_400, 86_400.0), ("temperature", 0, 0.0),
    ("max_retries", 0, 0), ("compression_threshold", "0.95", 0.95), ("context_window", "1_000_000", 1_000_000),
])
def test_good_numbers_at_the_edges_and_as_strings_are_taken(name: str, value: Any, expected: Any) -> None:
    settings = merge(Settings(), {camel(name): value}, "test")
    assert getattr(settings, name) == expected and type(getattr(settings, name)) is type(expected)


@pytest.mark.parametrize(("name", "value"), [
    ("max_iterations", 0), ("max_iterations", 10_001), ("max_iterations", 2.5), ("request_timeout", 0),
    ("request_timeout", 86_401), ("temperature", 2.01), ("max_tokens", 0), ("tool_output_limit", 99),
    ("context_window", 1023), ("compression_threshold", 0.96), ("max_retries", 101), ("terminal_timeout", -0.0),
    ("delegate_concurrency", 0), ("delegate_concurrency", 17), ("delegate_depth", 3),
])
def test_just_out_of_range_is_refused(name: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=r"must be a (whole )?number from"):
        merge(Settings(), {name: value}, "test")


def test_collecting_applies_every_valid_key_and_reports_the_rest(clean: Path, tmp_path: Path) -> None:
    """The jedi-language-server pattern: invalid options are reported and the value below them is kept."""
    (tmp_path / "user.toml").write_text("requestTimeout = 60\nmaxTokens = nan\nnoSuchThing = 1\n")
    (clean / ".agentls.toml").write_text("temperature = inf\nmax_iterations = 12\n")
    errors: list[ConfigError] = []
    settings = load_settings(clean, {"requestTimeout": HUGE, "model": "m", "maxRetries": -5, "modle": "x",
                                     "contextWindow": 50_000}, environ={"AGENTLS_TOOL_OUTPUT_LIMIT": "-1"},
                             errors=errors)
    assert (settings.model, settings.max_iterations, settings.context_window) == ("m", 12, 50_000)
    assert settings.request_timeout == 60.0  # the init option was bad: the user config's value stays
    assert (settings.max_tokens, settings.temperature, settings.max_retries, settings.tool_output_limit) == \
        (None, None, 3, None)
    keys = [e.key for e in errors]
    assert sorted(keys) == sorted(["AGENTLS_TOOL_OUTPUT_LIMIT", "maxTokens", "noSuchThing", "temperature",
                                   "requestTimeout", "maxRetries", "modle"])
    by_key = {e.key: str(e) for e in errors}
    assert by_key["requestTimeout"].endswith(f"; 60.0 from {tmp_path / 'user.toml'} is used instead"), \
        by_key["requestTimeout"]
    assert by_key["maxRetries"].endswith("; the default is used")
    assert "did you mean 'model'?" in by_key["modle"] and by_key["modle"].endswith("it is ignored")
    assert all("\n" not in m for m in by_key.values())


def test_collecting_skips_a_broken_file_and_keeps_the_others(clean: Path, tmp_path: Path) -> None:
    (tmp_path / "user.toml").write_text("model = [unclosed\n")
    (clean / ".agentls.toml").write_text("maxIterations = 7\n")
    errors: list[ConfigError] = []
    settings = load_settings(clean, {"temperature": 0.2}, errors=errors)
    assert (settings.max_iterations, settings.temperature) == (7, 0.2)
    [error] = errors
    assert str(tmp_path / "user.toml") in str(error) and "ignored" in str(error)


def test_a_sensitive_workspace_key_with_a_bad_value_is_reported_once_when_collecting(clean: Path) -> None:
    (clean / ".agentls.toml").write_text('baseUrl = "ftp://elsewhere"\nsessionDb = "x.db"\n')
    errors: list[ConfigError] = []
    settings = load_settings(clean, errors=errors)
    assert [e.key for e in errors] == ["baseUrl"]
    assert settings.base_url is None and settings.session_db is None
    assert any("sessionDb" in w for w in settings.warnings)


@pytest.mark.parametrize("value", [["a", 1], [["nested"]], {"model": "x"}, 3])
def test_fallback_models_must_be_names(value: Any) -> None:
    with pytest.raises(ConfigError, match="fallbackModels.*list of model names"):
        merge(Settings(), {"fallbackModels": value}, "test")


def test_a_key_that_is_not_a_string_is_an_error_not_a_crash() -> None:
    errors: list[ConfigError] = []
    merge(Settings(), {3: "x", ("a",): 1}, "test", errors=errors)  # type: ignore[dict-item]
    assert [e.key for e in errors] == ["3", "('a',)"]


def test_an_integer_too_long_for_str_is_still_a_config_error(clean: Path) -> None:
    """Python refuses str() of an int over 4,300 digits: the message must not try."""
    with pytest.raises(ConfigError, match="a 5000-digit number") as info:
        load_settings(clean, {"maxTokens": 10 ** 4999})
    assert len(str(info.value)) < 300
    (clean / ".agentls.toml").write_text(f"maxTokens = {'9' * 5000}\n")
    errors: list[ConfigError] = []
    load_settings(clean, errors=errors)
    assert len(errors) == 1 and str(clean / ".agentls.toml") in str(errors[0])
